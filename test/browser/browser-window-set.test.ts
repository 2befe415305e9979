// openSeenSet({ backend: "browser", name, window }) in real headless Chromium on a persistent
// profile, in OPFS and in IndexedDB, against the Map of times of window-model.ts: random batches,
// clock steps (an injected `now`, never the wall clock), forgets, removals, reopenings, page
// reloads and a browser restart; a SIGKILL of the browser in the middle of batches and a torn
// tail in the OPFS file (every acknowledged key kept with its second); two tabs racing on the same keys (each key new for exactly one,
// times and tombstones shared); a plain store and a windowed one never read as each other; bad
// options refused naming the value.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rng } from "../helpers.js";
import { D, H, HOSTS, KEYS, Model, ttlVariant, useModelRules } from "../window-model.js";
import { launchPersistent, serve, watchProblems } from "./chromium.js";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
let server: Server;
let origin: string;
let profile: string;
let context: BrowserContext;

/** A second of the tests' clock (June 2026). */
const T0 = Date.UTC(2026, 5, 1) / 1000;

const LOAD = `(async () => { const cs = await import("/build/js/index.browser.js"); await cs.init(); window.cs = cs; })()`;

/** A new tab on the served origin with the browser build initialised as `window.cs`. */
async function tab(): Promise<Page> {
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(`${origin}/test/browser/blank.html`);
  await page.evaluate(LOAD);
  expect(problems).toEqual([]);
  return page;
}

/** Runs `code` (an async function body with `cs` and `arg` in scope) in the page; a thrown error comes back as { error: { name, code, message, argument } }. */
function run<T>(page: Page, code: string, arg?: unknown): Promise<T> {
  return page.evaluate(
    async ([body, value]) => {
      const fn = new Function("cs", "arg", `return (async () => { ${body} })();`);
      try {
        return await fn((window as unknown as { cs: unknown }).cs, value);
      } catch (error) {
        const e = error as { name: string; code?: string; message: string; argument?: string };
        return { error: { name: e.name, code: e.code, message: e.message, argument: e.argument } };
      }
    },
    [code, arg] as const,
  ) as Promise<T>;
}

/** Opens the windowed set as `window.seen`, its clock the page's `window.now` (seconds), set by each call. */
const OPEN = `
  window.now = arg.now;
  window.seen = await cs.openSeenSet({
    backend: "browser", name: arg.name, storage: arg.storage, window: "1d", ttlMap: arg.ttlMap,
    semantics: arg.semantics, items: 64, now: () => window.now * 1000,
  });
  return window.seen.storage;`;

beforeAll(async () => {
  ({ server, origin } = await serve(root));
  profile = mkdtempSync(join(tmpdir(), "cs-window-profile-"));
  context = await launchPersistent(profile);
}, 180_000);

afterAll(async () => {
  await context?.close();
  server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe.each(["opfs", "indexeddb"] as const)("the browser window set in %s", (storage) => {
  for (const semantics of ["first-seen", "refresh"] as const) {
    it(`answers as the model does across batches, forgets, removals, reopenings, reloads and a restart (${semantics})`, async () => {
      const random = rng(semantics === "refresh" ? 31 : 32);
      const { ttlMap, rules } = ttlVariant(false);
      useModelRules(rules);
      let now = Date.UTC(2026, 5, 1) / 1000;
      const name = `model-${storage}-${semantics}`;
      const open = () => run<string>(page, OPEN, { name, storage, ttlMap, semantics, now });
      let page = await tab();
      expect(await open()).toBe(storage);
      const model = new Model(semantics === "refresh");
      const pick = () => KEYS[Math.floor(random() * KEYS.length)];
      const call = <T>(code: string, keys: string[] = [], extra: object = {}) =>
        run<T>(page, `window.now = arg.now; ${code}`, { now, keys, ...extra });
      const heldNow = (batch: string[]) => batch.map((k) => (model.held(k, now) ? 1 : 0));
      // 160 steps (about 5 reopenings and 1 or 2 reloads), then a restart: the suite's time is shared.
      for (let step = 0; step < 160; step++) {
        const r = random();
        const batch = Array.from({ length: 1 + Math.floor(random() * 30) }, pick);
        if (r < 0.4)
          expect(await call("return Array.from(await window.seen.addMany(arg.keys));", batch), `step ${step}`).toEqual(
            model.add(batch, now),
          );
        else if (r < 0.48)
          expect(await call("return Array.from(await window.seen.hasMany(arg.keys));", batch)).toEqual(heldNow(batch));
        else if (r < 0.52)
          expect(await call("return Array.from(await window.seen.dueMany(arg.keys));", batch)).toEqual(
            heldNow(batch).map((f) => 1 - f),
          );
        else if (r < 0.56)
          // NaN does not cross page.evaluate: -1 stands for it.
          expect(
            await call(
              "return Array.from(await window.seen.seenAtMany(arg.keys), (t) => (Number.isNaN(t) ? -1 : t));",
              batch,
            ),
          ).toEqual(batch.map((k) => (model.held(k, now) ? model.times.get(k)! * 1000 : -1)));
        else if (r < 0.6)
          expect(await call("return Array.from(await window.seen.removeMany(arg.keys));", batch)).toEqual(
            model.remove(batch, now),
          );
        else if (r < 0.63) {
          const host = HOSTS[Math.floor(random() * HOSTS.length)];
          await call("await window.seen.forgetHost(arg.host);", [], { host });
          model.tombstones.push([host, now]);
        } else if (r < 0.65) {
          await call('await window.seen.forgetPrefix("https://archive.example/old/");');
          model.tombstones.push(["https://archive.example/old/", now]);
        } else if (r < 0.68) {
          await call("await window.seen.close();");
          expect(await open()).toBe(storage);
        } else if (r < 0.69) {
          // A reload drops the page's table and its worker without a close.
          await page.reload();
          await page.evaluate(LOAD);
          expect(await open()).toBe(storage);
        } else now += [0, 1, 90, 600, H, D, 2 * D][Math.floor(random() * 7)];
      }
      // A browser restart on the same profile: every key's time and every tombstone is still there.
      await call("await window.seen.close();");
      await context.close();
      context = await launchPersistent(profile);
      page = await tab();
      await open();
      expect(await call("return Array.from(await window.seen.hasMany(arg.keys));", KEYS)).toEqual(heldNow(KEYS));
      expect(
        await call(
          "return Array.from(await window.seen.seenAtMany(arg.keys), (t) => (Number.isNaN(t) ? -1 : t));",
          KEYS,
        ),
      ).toEqual(KEYS.map((k) => (model.held(k, now) ? model.times.get(k)! * 1000 : -1)));
      now += 3600;
      expect(await call("return Array.from(await window.seen.addMany(arg.keys));", KEYS)).toEqual(model.add(KEYS, now));
      await call("await window.seen.close();");
      await page.close();
    }, 240_000);
  }

  it("loses no acknowledged key or time when the browser is killed (SIGKILL) in the middle of batches", async () => {
    const name = `killed-${storage}`;
    const page = await tab();
    const acknowledged: number[] = [];
    await page.exposeFunction("acknowledged", (batch: number) => void acknowledged.push(batch));
    // Batches of 1,000 keys, batch b at second T0 + b, each acknowledged once addMany resolved, until the browser dies.
    void run(
      page,
      `
      window.now = arg.t0;
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage, window: "52w", now: () => window.now * 1000 });
      for (let batch = 0; ; batch++) {
        window.now = arg.t0 + batch;
        await seen.addMany(Array.from({ length: 1000 }, (_, i) => "https://killed.example/" + batch + "/" + i));
        await window.acknowledged(batch);
      }`,
      { name, storage, t0: T0 },
    ).catch(() => undefined);
    while (acknowledged.length < 15) await new Promise((resolve) => setTimeout(resolve, 20));
    const browserProcesses = () => {
      const found = spawnSync("pgrep", ["-f", "--", `user-data-dir=${profile}`], { encoding: "utf8" });
      return found.stdout.split("\n").filter(Boolean).map(Number);
    };
    // The oldest is /usr/bin/chromium (a wrapper script, which execs the browser), so the browser itself.
    const [browserPid] = browserProcesses().sort((a, b) => a - b);
    process.kill(browserPid, "SIGKILL");
    await context.close().catch(() => undefined);
    for (let waited = 0; browserProcesses().length > 0; waited += 50) {
      if (waited > 10_000) throw new Error(`the browser did not die: ${browserProcesses().join(" ")}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seenBefore = [...acknowledged];
    context = await launchPersistent(profile);
    const again = await tab();
    const result = await run<{ wrong: number; size: number }>(
      again,
      `
      window.now = arg.t0 + 100000;
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage, window: "52w", now: () => window.now * 1000 });
      let wrong = 0;
      for (const batch of arg.batches) {
        const times = await seen.seenAtMany(Array.from({ length: 1000 }, (_, i) => "https://killed.example/" + batch + "/" + i));
        wrong += times.filter((t) => t !== (arg.t0 + batch) * 1000).length;
      }
      const out = { wrong, size: await seen.size() };
      await seen.close();
      return out;`,
      { name, storage, batches: seenBefore, t0: T0 },
    );
    // Every acknowledged key is there with its own second; whole batches only, at most the one in flight besides.
    expect(result.wrong).toBe(0);
    expect(result.size % 1000).toBe(0);
    expect(result.size - 1000 * seenBefore.length).toBeGreaterThanOrEqual(0);
    expect(result.size - 1000 * seenBefore.length).toBeLessThanOrEqual(1000);
    await again.close();
  }, 120_000);

  it("two tabs racing on the same keys: each key new for exactly one of them; times and forgets shared", async () => {
    const name = `tabs-${storage}`;
    const now = 1_800_000_000;
    const [a, b] = await Promise.all([tab(), tab()]);
    expect(await run(a, OPEN, { name, storage, now })).toBe(storage);
    expect(await run(b, OPEN, { name, storage, now })).toBe(storage);
    const script = `
      const counts = {};
      let seed = arg.seed;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
      for (let batch = 0; batch < 30; batch++) {
        const ks = Array.from({ length: 200 }, () => "https://tabs.example/" + Math.floor(random() * 3000));
        const flags = await window.seen.addMany(ks);
        ks.forEach((k, i) => { if (flags[i] === 1) counts[k] = (counts[k] ?? 0) + 1; });
      }
      return { counts, size: await window.seen.size() };`;
    const [ra, rb] = await Promise.all([
      run<{ counts: Record<string, number>; size: number }>(a, script, { seed: 7 }),
      run<{ counts: Record<string, number>; size: number }>(b, script, { seed: 11 }),
    ]);
    const total = new Map<string, number>();
    for (const r of [ra, rb]) for (const [k, n] of Object.entries(r.counts)) total.set(k, (total.get(k) ?? 0) + n);
    expect([...total.values()].filter((n) => n !== 1)).toEqual([]);
    expect(Object.keys(ra.counts).length).toBeGreaterThan(100);
    expect(Object.keys(rb.counts).length).toBeGreaterThan(100);
    expect(Math.max(ra.size, rb.size)).toBe(total.size);
    // Tab b's clock is an hour later: it records a key tab a then sees with b's time; a's forget reaches b.
    await run(b, `window.now = arg.now; await window.seen.addMany(["https://late.example/1"]);`, { now: now + H });
    expect(
      await run(a, `return Array.from(await window.seen.seenAtMany(["https://late.example/1"]));`, { now: now + H }),
    ).toEqual([(now + H) * 1000]);
    await run(a, `window.now = arg.now; await window.seen.forgetHost("tabs.example");`, { now: now + H });
    expect(
      await run(b, `return Array.from(await window.seen.hasMany(arg.keys));`, {
        keys: ["https://tabs.example/1", "https://late.example/1"],
      }),
    ).toEqual([0, 1]);
    await Promise.all([run(a, "await window.seen.close();"), run(b, "await window.seen.close();")]);
    await Promise.all([a.close(), b.close()]);
  }, 180_000);

  it("a plain store is not opened as a windowed one, nor the other way round", async () => {
    const page = await tab();
    const result = await run(
      page,
      `
      const plain = await cs.openSeenSet({ backend: "browser", name: "plain-" + arg.storage, storage: arg.storage });
      await plain.addMany(["x"]);
      await plain.close();
      const timed = await cs.openSeenSet({ backend: "browser", name: "timed-" + arg.storage, storage: arg.storage, window: "1d" });
      await timed.addMany(["x"]);
      await timed.close();
      const code = async (spec) => {
        try { await (await cs.openSeenSet(spec)).close(); return "opened"; } catch (e) { return e.code; }
      };
      return [
        await code({ backend: "browser", name: "plain-" + arg.storage, storage: arg.storage, window: "1d" }),
        await code({ backend: "browser", name: "timed-" + arg.storage, storage: arg.storage }),
      ];`,
      { storage },
    );
    expect(result).toEqual(["ERR_STORE_CORRUPT", "ERR_FORMAT"]);
    await page.close();
  }, 120_000);
});

describe("the browser window set's OPFS file", () => {
  it("loses a torn tail (half a timed record), keeping every key and time written before it", async () => {
    const page = await tab();
    const result = await run<{ before: number[]; fresh: number; sizes: number[] }>(
      page,
      `
      const open = () => cs.openSeenSet({ backend: "browser", name: "torn-window", storage: "opfs", window: "1d", now: () => arg.t * 1000 });
      const seen = await open();
      await seen.addMany(arg.a);
      await seen.close();
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("crawlsieve");
      const handle = await dir.getFileHandle("torn-window.seen");
      const good = (await handle.getFile()).size;
      // What a write stopped half-way leaves: a CSFT record's head and part of its entries.
      const record = new Uint8Array(8 + 20 * 100 + 8);
      new DataView(record.buffer).setUint32(0, 0x54465343, true);
      new DataView(record.buffer).setUint32(4, 100, true);
      const writable = await handle.createWritable({ keepExistingData: true });
      await writable.write({ type: "write", position: good, data: record.subarray(0, 900) });
      await writable.close();
      const torn = (await handle.getFile()).size;
      const again = await open();
      const before = Array.from(new Set(Array.from(await again.seenAtMany(arg.a))));
      const fresh = (await again.addMany(arg.b)).reduce((x, y) => x + y, 0);
      await again.close();
      return { before, fresh, sizes: [torn - good, (await handle.getFile()).size - good] };`,
      { a: Array.from({ length: 300 }, (_, i) => `https://torn.example/${i}`), b: ["https://torn.example/new"], t: T0 },
    );
    expect(result.before).toEqual([T0 * 1000]);
    expect(result.fresh).toBe(1);
    // The 900 torn bytes were cut; then one record of one timed key was appended.
    expect(result.sizes).toEqual([900, 8 + 20 + 8]);
    await page.close();
  }, 120_000);
});

describe("the browser window set's options", () => {
  it("refuses bad options with a typed error naming the value, before any store is made", async () => {
    const page = await tab();
    const refused = async (spec: object) =>
      (
        await run<{ error: object }>(page, "return await cs.openSeenSet(arg);", {
          backend: "browser",
          name: "bad",
          ...spec,
        })
      ).error;
    const invalid = (argument: string) => expect.objectContaining({ name: "InvalidArgumentError", argument });
    expect(await refused({ window: "30x" })).toEqual(invalid("window"));
    expect(await refused({ window: "1500ms" })).toEqual(invalid("window"));
    expect(await refused({ window: "1d", ttlMap: { "not a pattern": "1h" } })).toEqual(invalid("pattern"));
    expect(await refused({ window: "1d", ttlMap: { "a.example": "1x" } })).toEqual(invalid('ttlMap["a.example"]'));
    expect(await refused({ window: "1d", semantics: "sometimes" })).toEqual(invalid("semantics"));
    expect(await refused({ window: "1d", items: -1 })).toEqual(invalid("items"));
    expect(await refused({ window: "1d", storage: "cookies" })).toEqual(invalid("storage"));
    expect(await refused({ ttlMap: { "a.example": "1h" } })).toEqual(invalid("ttlMap"));
    // Nothing was made for the refused specs.
    expect(
      await run(page, `return (await indexedDB.databases()).filter((d) => d.name === "crawlsieve-seen:bad").length;`),
    ).toBe(0);
    await page.close();
  }, 120_000);
});
