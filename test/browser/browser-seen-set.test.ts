// openSeenSet({ backend: "browser", name }) in real headless Chromium on a persistent profile,
// served from loopback (a secure context), in OPFS and in IndexedDB: keys stay seen across a
// reload, a browser restart, and a SIGKILL of the browser in the middle of batches (every batch
// acknowledged to this process is seen after the restart); two tabs adding overlapping keys at
// once see each key new exactly once between them; a torn tail (half a record, what a write
// stopped by a crash leaves) is cut off while corruption before it is a typed error; a full quota
// (Chromium's quota for the origin lowered through the DevTools protocol,
// Storage.overrideQuotaForOrigin) is a StorageQuotaError and keeps none of the batch; the package
// bundled by esbuild (minified) still starts its OPFS worker; a page whose
// Content-Security-Policy refuses blob: workers falls back to IndexedDB; a service worker
// (seen-sw.js) opens the set in IndexedDB and shares it with a page, each key new once between
// them; and one name is never kept in both stores.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchPersistent, serve, watchProblems } from "./chromium.js";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
let server: Server;
let origin: string;
let profile: string;
let context: BrowserContext;

/** A new tab on the served origin (or `at`) with the browser build initialised as `window.cs`. */
async function tab(at = origin): Promise<Page> {
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(`${at}/test/browser/blank.html`);
  await page.evaluate(`(async () => {
    const cs = await import("/build/js/index.browser.js");
    await cs.init();
    window.cs = cs;
  })()`);
  expect(problems).toEqual([]);
  return page;
}

/** Runs `code` (an async function body with `cs` and `arg` in scope) in the page; a thrown error comes back as { error: { name, code, message } }. */
function run<T>(page: Page, code: string, arg?: unknown): Promise<T> {
  return page.evaluate(
    async ([body, value]) => {
      const fn = new Function("cs", "arg", `return (async () => { ${body} })();`);
      try {
        return await fn((window as unknown as { cs: unknown }).cs, value);
      } catch (error) {
        const e = error as { name: string; code?: string; message: string };
        return { error: { name: e.name, code: e.code, message: e.message } };
      }
    },
    [code, arg] as const,
  ) as Promise<T>;
}

const keys = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `https://persist.example/${from + i}`);

beforeAll(async () => {
  ({ server, origin } = await serve(root));
  profile = mkdtempSync(join(tmpdir(), "cs-profile-"));
  context = await launchPersistent(profile);
}, 180_000);

afterAll(async () => {
  await context?.close();
  server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe.each(["opfs", "indexeddb"] as const)("the browser seen-set in %s", (storage) => {
  it("keeps its keys across a reload and a browser restart", async () => {
    const name = `restart-${storage}`;
    let page = await tab();
    const first = await run<{ storage: string; fresh: number; again: number; size: number }>(
      page,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });
      const fresh = (await seen.addMany(arg.keys)).reduce((a, b) => a + b, 0);
      const again = (await seen.addMany(arg.keys)).reduce((a, b) => a + b, 0);
      const out = { storage: seen.storage, fresh, again, size: await seen.size() };
      await seen.close();
      return out;`,
      { name, storage, keys: keys(0, 3000) },
    );
    expect(first).toEqual({ storage, fresh: 3000, again: 0, size: 3000 });

    await page.reload();
    await page.evaluate(
      `(async () => { const cs = await import("/build/js/index.browser.js"); await cs.init(); window.cs = cs; })()`,
    );
    const afterReload = await run<number[]>(
      page,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });
      const flags = await seen.addMany(arg.keys);
      await seen.close();
      return [flags.slice(0, 3000).reduce((a, b) => a + b, 0), flags.slice(3000).reduce((a, b) => a + b, 0)];`,
      { name, storage, keys: keys(0, 4000) },
    );
    expect(afterReload).toEqual([0, 1000]);

    // A browser restart on the same profile directory.
    await context.close();
    context = await launchPersistent(profile);
    page = await tab();
    const afterRestart = await run<{ has: number; fresh: number; size: number; storage: string }>(
      page,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name });
      const has = (await seen.hasMany(arg.keys)).reduce((a, b) => a + b, 0);
      const fresh = (await seen.addMany(arg.keys)).reduce((a, b) => a + b, 0);
      const out = { has, fresh, size: await seen.size(), storage: seen.storage };
      await seen.close();
      return out;`,
      { name, keys: keys(0, 4500) },
    );
    // "auto" finds the store the set was made in (IndexedDB here is refused to OPFS, see below).
    expect(afterRestart).toEqual(
      storage === "opfs"
        ? { has: 4000, fresh: 500, size: 4500, storage }
        : { error: expect.objectContaining({ code: "ERR_STORAGE_MISMATCH" }) },
    );
    if (storage === "indexeddb") {
      const named = await run(
        page,
        `
        const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: "indexeddb" });
        const out = { has: (await seen.hasMany(arg.keys)).reduce((a, b) => a + b, 0), size: await seen.size() };
        await seen.close();
        return out;`,
        { name, keys: keys(0, 4500) },
      );
      expect(named).toEqual({ has: 4000, size: 4000 });
    }
  }, 120_000);

  it("loses no acknowledged key when the browser is killed (SIGKILL) in the middle of batches", async () => {
    const name = `killed-${storage}`;
    const page = await tab();
    const acknowledged: number[] = [];
    await page.exposeFunction("acknowledged", (batch: number) => void acknowledged.push(batch));
    // Batches of 2,000 keys, each acknowledged to this process once addMany resolved, until the browser dies.
    void run(
      page,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });
      for (let batch = 0; ; batch++) {
        await seen.addMany(Array.from({ length: 2000 }, (_, i) => "https://killed.example/" + batch + "/" + i));
        await window.acknowledged(batch);
      }`,
      { name, storage },
    ).catch(() => undefined);
    while (acknowledged.length < 15) await new Promise((resolve) => setTimeout(resolve, 20));
    // The browser's main process, found by this test's own profile directory, killed by its id.
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
    const result = await run<{ has: number; size: number }>(
      again,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });
      const keys = arg.batches.flatMap((batch) => Array.from({ length: 2000 }, (_, i) => "https://killed.example/" + batch + "/" + i));
      const out = { has: (await seen.hasMany(keys)).reduce((a, b) => a + b, 0), size: await seen.size() };
      await seen.close();
      return out;`,
      { name, storage, batches: seenBefore },
    );
    expect(result.has).toBe(2000 * seenBefore.length);
    // Whole batches only: at most the one in flight when the browser died besides those acknowledged.
    expect(result.size % 2000).toBe(0);
    expect(result.size - 2000 * seenBefore.length).toBeLessThanOrEqual(2000);
    await again.close();
  }, 120_000);

  it("two tabs adding overlapping keys at once see each key new exactly once between them", async () => {
    const name = `tabs-${storage}`;
    const [a, b] = await Promise.all([tab(), tab()]);
    // Each tab: 40 batches of 250 keys drawn from 4,000, in its own random order.
    const script = `
      const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });
      const counts = {};
      let seed = arg.seed;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (let batch = 0; batch < 40; batch++) {
        const ks = Array.from({ length: 250 }, () => "https://tabs.example/" + Math.floor(random() * 4000));
        const flags = await seen.addMany(ks);
        ks.forEach((k, i) => { if (flags[i] === 1) counts[k] = (counts[k] ?? 0) + 1; });
      }
      const size = await seen.size();
      await seen.close();
      return { counts, size };`;
    const [ra, rb] = await Promise.all([
      run<{ counts: Record<string, number>; size: number }>(a, script, { name, storage, seed: 7 }),
      run<{ counts: Record<string, number>; size: number }>(b, script, { name, storage, seed: 11 }),
    ]);
    const total = new Map<string, number>();
    for (const r of [ra, rb]) for (const [k, n] of Object.entries(r.counts)) total.set(k, (total.get(k) ?? 0) + n);
    expect([...total.values()].filter((n) => n !== 1)).toEqual([]);
    // Both tabs added keys new to them (they interleaved), and the set holds exactly the keys reported new.
    expect(Object.keys(ra.counts).length).toBeGreaterThan(100);
    expect(Object.keys(rb.counts).length).toBeGreaterThan(100);
    expect(Math.max(ra.size, rb.size)).toBe(total.size);
    await Promise.all([a.close(), b.close()]);
  }, 120_000);

  it("removeMany in one tab is seen by another tab, and after a reload", async () => {
    const name = `remove-${storage}`;
    const [a, b] = await Promise.all([tab(), tab()]);
    const open = `window.seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });`;
    await run(a, open, { name, storage });
    await run(b, open, { name, storage });
    expect(await run(a, `return Array.from(await window.seen.addMany(arg.keys));`, { keys: ["p", "q", "r"] })).toEqual([
      1, 1, 1,
    ]);
    expect(await run(b, `return Array.from(await window.seen.removeMany(arg.keys));`, { keys: ["q", "nope"] })).toEqual(
      [1, 0],
    );
    expect(await run(a, `return Array.from(await window.seen.hasMany(arg.keys));`, { keys: ["p", "q", "r"] })).toEqual([
      1, 0, 1,
    ]);
    await run(a, `await window.seen.close();`);
    await a.reload();
    await a.evaluate(
      `(async () => { const cs = await import("/build/js/index.browser.js"); await cs.init(); window.cs = cs; })()`,
    );
    await run(a, open, { name, storage });
    expect(
      await run(a, `return [await window.seen.size(), ...(await window.seen.addMany(arg.keys))];`, {
        keys: ["q", "p"],
      }),
    ).toEqual([2, 1, 0]);
    await Promise.all([run(a, `await window.seen.close();`), run(b, `await window.seen.close();`)]);
    await Promise.all([a.close(), b.close()]);
  }, 180_000);

  it("clear() in one tab is seen by another tab that has the set open", async () => {
    const name = `clear-${storage}`;
    const [a, b] = await Promise.all([tab(), tab()]);
    const open = `window.seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });`;
    await run(a, open, { name, storage });
    await run(b, open, { name, storage });
    const add = `return Array.from(await window.seen.addMany(arg.keys));`;
    expect(await run(a, add, { keys: ["x", "y"] })).toEqual([1, 1]);
    expect(await run(b, add, { keys: ["x", "z"] })).toEqual([0, 1]);
    await run(a, `await window.seen.clear();`);
    expect(
      await run(b, `return [await window.seen.size(), ...(await window.seen.addMany(arg.keys))];`, {
        keys: ["x", "y", "z"],
      }),
    ).toEqual([0, 1, 1, 1]);
    expect(await run(a, add, { keys: ["x", "w"] })).toEqual([0, 1]);
    await Promise.all([run(a, `await window.seen.close();`), run(b, `await window.seen.close();`)]);
    await Promise.all([a.close(), b.close()]);
  }, 180_000);

  it("a full quota is a StorageQuotaError, and nothing of the refused batch is seen", async () => {
    const name = `quota-${storage}`;
    // An origin of its own (another port): Chromium enforces a lowered quota on IndexedDB only
    // for an origin whose storage was not opened before the override.
    const fresh = await serve(root);
    const page = await tab(fresh.origin);
    const cdp = await context.newCDPSession(page);
    const used = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
    // Room for about 250,000 more fingerprints (16 bytes each) before the quota is full.
    await cdp.send("Storage.overrideQuotaForOrigin", { origin: fresh.origin, quotaSize: used + 4_000_000 });
    try {
      const result = await run<{
        error?: { name: string; code: string };
        batches: number;
        refusedSeen: number;
        keptSeen: number;
        size: number;
        after: number;
      }>(
        page,
        `
        const seen = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });
        let batches = 0;
        let error;
        let refused;
        for (let i = 0; i < 200 && error === undefined; i++) {
          const ks = Array.from({ length: 10000 }, (_, j) => "https://quota.example/" + i + "/" + j);
          try {
            await seen.addMany(ks);
            batches++;
          } catch (e) {
            error = { name: e.name, code: e.code, isQuota: e instanceof cs.StorageQuotaError, base: e instanceof cs.CrawlsieveError };
            refused = ks;
          }
        }
        const kept = Array.from({ length: 10000 }, (_, j) => "https://quota.example/0/" + j);
        const out = {
          error,
          batches,
          refusedSeen: refused ? (await seen.hasMany(refused)).reduce((a, b) => a + b, 0) : -1,
          keptSeen: (await seen.hasMany(kept)).reduce((a, b) => a + b, 0),
          size: await seen.size(),
        };
        await seen.close();
        // Opened again, it holds exactly the batches written before the refusal.
        const again = await cs.openSeenSet({ backend: "browser", name: arg.name, storage: arg.storage });
        out.after = await again.size();
        await again.clear();
        await again.close();
        return out;`,
        { name, storage },
      );
      expect(result.error, JSON.stringify({ ...result, used })).toEqual({
        name: "StorageQuotaError",
        code: "ERR_QUOTA",
        isQuota: true,
        base: true,
      });
      expect(result.batches).toBeGreaterThan(0);
      expect(result.refusedSeen).toBe(0);
      expect(result.keptSeen).toBe(10000);
      expect(result.size).toBe(10000 * result.batches);
      expect(result.after).toBe(10000 * result.batches);
    } finally {
      await cdp.send("Storage.overrideQuotaForOrigin", { origin: fresh.origin });
      await page.close();
      fresh.server.close();
    }
  }, 120_000);
});

describe("the OPFS file", () => {
  it("loses a torn tail (half a record), keeping every key written before it", async () => {
    const page = await tab();
    const result = await run<{ before: number; after: number; fresh: number; sizes: number[] }>(
      page,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: "torn", storage: "opfs" });
      await seen.addMany(arg.a);
      await seen.close();
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("crawlsieve");
      const handle = await dir.getFileHandle("torn.seen");
      const good = (await handle.getFile()).size;
      // What a write stopped half-way leaves: a record's head and part of its fingerprints.
      const record = new Uint8Array(8 + 16 * 100 + 8);
      new DataView(record.buffer).setUint32(0, 0x42465343, true);
      new DataView(record.buffer).setUint32(4, 100, true);
      const writable = await handle.createWritable({ keepExistingData: true });
      await writable.write({ type: "write", position: good, data: record.subarray(0, 700) });
      await writable.close();
      const torn = (await handle.getFile()).size;
      const again = await cs.openSeenSet({ backend: "browser", name: "torn", storage: "opfs" });
      const before = (await again.hasMany(arg.a)).reduce((x, y) => x + y, 0);
      const fresh = (await again.addMany(arg.b)).reduce((x, y) => x + y, 0);
      const after = await again.size();
      await again.close();
      return { before, after, fresh, sizes: [torn - good, (await handle.getFile()).size - good] };`,
      { a: keys(0, 500), b: keys(400, 600) },
    );
    expect(result.before).toBe(500);
    expect(result.fresh).toBe(100);
    expect(result.after).toBe(600);
    // 700 torn bytes were cut; then one record of 100 fingerprints was appended.
    expect(result.sizes).toEqual([700, 8 + 1600 + 8]);
    await page.close();
  }, 180_000);

  it("refuses a changed byte inside an acknowledged record with a typed error", async () => {
    const page = await tab();
    const result = await run<{ error: { name: string; code: string } }>(
      page,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: "flipped", storage: "opfs" });
      await seen.addMany(arg.a);
      await seen.addMany(arg.b);
      await seen.close();
      const handle = await (await (await navigator.storage.getDirectory()).getDirectoryHandle("crawlsieve")).getFileHandle("flipped.seen");
      const writable = await handle.createWritable({ keepExistingData: true });
      await writable.write({ type: "write", position: 16 + 8 + 5, data: new Uint8Array([0xff]) });
      await writable.close();
      await cs.openSeenSet({ backend: "browser", name: "flipped", storage: "opfs" });
      return "opened";`,
      { a: keys(0, 50), b: keys(50, 100) },
    );
    expect(result).toEqual({ error: expect.objectContaining({ name: "ChecksumMismatchError", code: "ERR_CHECKSUM" }) });
    await page.close();
  }, 180_000);
});

describe("shipping", () => {
  it("works from an esbuild bundle (minified): the OPFS worker starts from the bundled code", async () => {
    const app = mkdtempSync(join(tmpdir(), "cs-seen-app-"));
    mkdirSync(join(app, "node_modules"));
    symlinkSync(root, join(app, "node_modules", "crawlsieve"));
    writeFileSync(
      join(app, "app.js"),
      `import { init, openSeenSet } from "crawlsieve";
import wasm from "crawlsieve/crawlsieve.wasm";
await init(wasm);
const seen = await openSeenSet({ backend: "browser", name: "bundled" });
const flags = await seen.addMany(["a", "b", "a"]);
document.body.dataset.result = JSON.stringify({ storage: seen.storage, flags: Array.from(flags) });
`,
    );
    mkdirSync(join(app, "dist"));
    writeFileSync(
      join(app, "dist", "index.html"),
      '<!doctype html><html><body><script type="module" src="app.js"></script></body></html>',
    );
    await build({
      entryPoints: [join(app, "app.js")],
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      conditions: ["browser"],
      loader: { ".wasm": "binary" },
      outfile: join(app, "dist", "app.js"),
      logLevel: "silent",
    });
    const built = await serve(join(app, "dist"));
    try {
      const page = await context.newPage();
      const problems = watchProblems(page);
      await page.goto(`${built.origin}/index.html`);
      const handle = await page
        .waitForSelector("body[data-result]", { state: "attached", timeout: 120_000 })
        .catch((error) => {
          throw new Error(`${error.message}\n${problems.join("\n")}`);
        });
      expect(JSON.parse((await handle.getAttribute("data-result"))!)).toEqual({ storage: "opfs", flags: [1, 1, 0] });
      await page.close();
    } finally {
      built.server.close();
    }
  }, 180_000);

  it("falls back to IndexedDB in a page whose Content-Security-Policy forbids blob: workers, and keeps its keys there", async () => {
    // A policy that allows the package's scripts and WebAssembly, and workers from the origin only.
    const strict = await serve(root, {
      "content-security-policy": "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'",
    });
    try {
      const page = await context.newPage();
      const violations: string[] = [];
      page.on("console", (message) => violations.push(message.text()));
      await page.goto(`${strict.origin}/test/browser/blank.html`);
      // One string evaluated by the DevTools protocol (the policy forbids eval in the page, and so `run`).
      const result = await page.evaluate(`(async () => {
        const cs = await import("/build/js/index.browser.js");
        await cs.init();
        const seen = await cs.openSeenSet({ backend: "browser", name: "csp" });
        const out = { storage: seen.storage, flags: Array.from(await seen.addMany(["a", "b", "a"])) };
        await seen.close();
        const again = await cs.openSeenSet({ backend: "browser", name: "csp" });
        out.again = Array.from(await again.addMany(["a", "b", "c"]));
        await again.close();
        return out;
      })()`);
      expect(result).toEqual({ storage: "indexeddb", flags: [1, 1, 0], again: [0, 0, 1] });
      // The browser did refuse the worker (the fallback was not taken for another reason).
      expect(violations.join("\n")).toMatch(/worker-src/);
      await page.close();
    } finally {
      strict.server.close();
    }
  }, 180_000);

  it("a service worker (an extension's background) opens the set in IndexedDB, shared with a page that asks for IndexedDB", async () => {
    const page = await tab();
    const keysOf = (prefix: string) =>
      Array.from({ length: 20 }, (_, b) =>
        Array.from({ length: 100 }, (_, i) => `${prefix}${(b * 37 + i * 11) % 1500}`),
      );
    const result = await run<{
      sw: { flags: number[]; storage: string };
      page: { flags: number[]; storage: string };
      first: { flags: number[] };
    }>(
      page,
      `
      const registration = await navigator.serviceWorker.register("/test/browser/seen-sw.js", { type: "module", scope: "/test/browser/" });
      await navigator.serviceWorker.ready;
      while (navigator.serviceWorker.controller === null) await new Promise((r) => setTimeout(r, 20));
      let next = 1;
      const ask = (message) => new Promise((resolve) => {
        const id = next++;
        const listen = (event) => { if (event.data.id === id) { navigator.serviceWorker.removeEventListener("message", listen); resolve(event.data); } };
        navigator.serviceWorker.addEventListener("message", listen);
        registration.active.postMessage({ ...message, id });
      });
      const first = await ask({ name: "sw-shared", batches: [["k1", "k2", "k1"]] });
      // The page and the service worker at once, over overlapping keys.
      const seen = await cs.openSeenSet({ backend: "browser", name: "sw-shared", storage: "indexeddb" });
      const mine = (async () => { const flags = []; for (const batch of arg.page) flags.push(...(await seen.addMany(batch))); return { flags, storage: seen.storage }; })();
      const [sw, pageResult] = await Promise.all([ask({ name: "sw-shared", batches: arg.sw }), mine]);
      await seen.close();
      return { first, sw, page: pageResult };`,
      { sw: keysOf("key-"), page: keysOf("key-").reverse() },
    );
    expect(result.first).toMatchObject({ flags: [1, 1, 0], storage: "indexeddb" });
    expect(result.sw.storage).toBe("indexeddb");
    const counts = new Map<string, number>();
    const credit = (batches: string[][], flags: number[]) =>
      batches.flat().forEach((key, i) => flags[i] === 1 && counts.set(key, (counts.get(key) ?? 0) + 1));
    credit(keysOf("key-"), result.sw.flags);
    credit(keysOf("key-").reverse(), result.page.flags);
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
    expect(counts.size).toBe(new Set(keysOf("key-").flat()).size);
    // Both reported keys new: their batches interleaved.
    expect(result.sw.flags.filter((f) => f === 1).length).toBeGreaterThan(50);
    expect(result.page.flags.filter((f) => f === 1).length).toBeGreaterThan(50);
    await page.close();
  }, 180_000);

  it("refuses to open a set in IndexedDB that this origin keeps in OPFS (and the other way round)", async () => {
    const page = await tab();
    const result = await run(
      page,
      `
      const seen = await cs.openSeenSet({ backend: "browser", name: "kept", storage: "opfs" });
      await seen.addMany(["x"]);
      await seen.close();
      try {
        await cs.openSeenSet({ backend: "browser", name: "kept", storage: "indexeddb" });
        return "opened";
      } catch (e) {
        return e.code;
      }`,
    );
    expect(result).toBe("ERR_STORAGE_MISMATCH");
    await page.close();
  }, 180_000);
});
