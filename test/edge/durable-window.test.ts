// durableWindowSet (crawlsieve/durable-object) in real workerd (the npm package's binary) with
// SQLite-backed Durable Objects on local disk, against the Map of times of window-model.ts: random
// batches, clock steps (the client's `now`, never the wall clock), forgets, removals and restarts of
// workerd (SIGTERM and SIGKILL), over three shards; concurrent clients (each key new once) and a
// SIGKILL in the middle of their batches (every acknowledged key kept with its second); the objects' own clock (set by hand) when the
// client gives none; many batches rewritten into few rows and still answered the same; a plain set
// and a window never sharing a name; bad options and another protocol version refused, named.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildDurableWorker } from "../../examples/durable-object/build.js";
import { freePort, startWorkerd, type RunningWorkerd as Running } from "../../examples/durable-object/serve.js";
import { rng } from "../helpers.js";
import { D, H, HOSTS, KEYS, Model, ttlVariant, useModelRules } from "../window-model.js";

let out: string;
let port: number;
const running: Running[] = [];

/** A fresh build of the test worker with empty storage. */
async function fresh(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "cs-do-window-"));
  out = join(dir, "out");
  port = await freePort();
  await buildDurableWorker({
    out,
    storage: join(dir, "storage"),
    port,
    entry: new URL("./window-worker.js", import.meta.url).pathname,
  });
}

async function start(): Promise<Running> {
  const server = await startWorkerd(out, port);
  running.push(server);
  return server;
}

/** POSTs a JSON call to the test worker; its JSON answer (an error as { name, code, message, argument }). */
async function call<T = any>(path: string, body: object): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", body: JSON.stringify(body) });
  return (await response.json()) as T;
}

afterEach(async () => {
  for (const server of running.splice(0)) await server.stop("SIGKILL");
});

describe("the exact window in Durable Objects (workerd)", () => {
  for (const semantics of ["first-seen", "refresh"] as const) {
    it(`answers as the model does across batches, forgets, removals and restarts (${semantics}, 3 shards)`, async () => {
      await fresh();
      let server = await start();
      const random = rng(semantics === "refresh" ? 41 : 42);
      const { ttlMap, rules } = ttlVariant(false);
      useModelRules(rules);
      let now = Date.UTC(2026, 5, 1) / 1000;
      const model = new Model(semantics === "refresh");
      const set = { name: `model-${semantics}`, shards: 3, ttl: "1d", ttlMap, semantics };
      const ask = <T = any>(path: string, extra: object) => call<T>(path, { ...set, now: now * 1000, ...extra });
      const pick = () => KEYS[Math.floor(random() * KEYS.length)];
      const heldNow = (batch: string[]) => batch.map((k) => (model.held(k, now) ? 1 : 0));
      for (let step = 0; step < 300; step++) {
        const r = random();
        const keys = Array.from({ length: 1 + Math.floor(random() * 30) }, pick);
        if (r < 0.4) expect(await ask("/add", { keys }), `step ${step}`).toEqual(model.add(keys, now));
        else if (r < 0.48) expect(await ask("/has", { keys })).toEqual(heldNow(keys));
        else if (r < 0.52) expect(await ask("/due", { keys })).toEqual(heldNow(keys).map((f) => 1 - f));
        else if (r < 0.56)
          expect(await ask("/seen-at", { keys })).toEqual(
            keys.map((k) => (model.held(k, now) ? model.times.get(k)! * 1000 : null)),
          );
        else if (r < 0.6) expect(await ask("/remove", { keys })).toEqual(model.remove(keys, now));
        else if (r < 0.63) {
          const pattern = HOSTS[Math.floor(random() * HOSTS.length)];
          expect(await ask("/forget-host", { pattern })).toBe(true);
          model.tombstones.push([pattern, now]);
        } else if (r < 0.65) {
          expect(await ask("/forget-prefix", { pattern: "https://archive.example/old/" })).toBe(true);
          model.tombstones.push(["https://archive.example/old/", now]);
        } else if (r < 0.67) {
          // A restart: stopped cleanly, or killed; every acknowledged call is in the objects' storage.
          await server.stop(random() < 0.5 ? "SIGTERM" : "SIGKILL");
          server = await start();
        } else now += [0, 1, 90, 600, H, D, 2 * D][Math.floor(random() * 7)];
      }
      await server.stop("SIGKILL");
      server = await start();
      expect(await ask("/has", { keys: KEYS })).toEqual(heldNow(KEYS));
      expect(await ask("/seen-at", { keys: KEYS })).toEqual(
        KEYS.map((k) => (model.held(k, now) ? model.times.get(k)! * 1000 : null)),
      );
    }, 240_000);
  }

  it("four concurrent clients over overlapping keys, on one clock, see each key new exactly once between them", async () => {
    await fresh();
    await start();
    const set = { name: "race", shards: 3, ttl: "1d", now: 1_800_000_000_000 };
    const pool = Array.from({ length: 6000 }, (_, i) => `https://race${i % 5}.example/${i}`);
    const news = new Map<string, number>();
    await Promise.all(
      [0, 1, 2, 3].map(async (client) => {
        const mine = pool.slice(client * 1000, client * 1000 + 3000);
        for (let i = mine.length - 1; i > 0; i--) {
          const j = (i * 7919 + client * 31) % (i + 1);
          [mine[i], mine[j]] = [mine[j], mine[i]];
        }
        for (let at = 0; at < mine.length; at += 250) {
          const keys = mine.slice(at, at + 250);
          const flags = await call<number[]>("/add", { ...set, keys });
          keys.forEach((key, i) => news.set(key, (news.get(key) ?? 0) + flags[i]));
        }
      }),
    );
    expect(news.size).toBe(pool.length);
    expect([...news.values()].filter((n) => n !== 1)).toEqual([]);
    expect(await call("/size", set)).toBe(pool.length);
  }, 120_000);

  it("loses no key it acknowledged, nor its second, when workerd is killed (SIGKILL) in the middle of batches", async () => {
    await fresh();
    const server = await start();
    const set = { name: "crash", shards: 2, ttl: "52w" };
    const t0 = 1_800_000_000_000;
    const acknowledged = new Map<string, number>();
    let stop = false;
    const clients = [0, 1].map(async (client) => {
      for (let batch = 0; !stop; batch++) {
        const keys = Array.from({ length: 500 }, (_, i) => `https://crash${client}.example/${batch}/${i}`);
        const now = t0 + 1000 * batch;
        try {
          const flags = await call<number[]>("/add", { ...set, now, keys });
          keys.forEach((key, i) => flags[i] === 1 && acknowledged.set(key, now));
        } catch {
          return; // the connection died with workerd
        }
      }
    });
    while (acknowledged.size < 5000) await new Promise((done) => setTimeout(done, 20));
    await server.stop("SIGKILL");
    stop = true;
    await Promise.all(clients);
    await start();
    const keys = [...acknowledged.keys()];
    const times = await call<number[]>("/seen-at", { ...set, now: t0 + 3_600_000, keys });
    expect(keys.filter((key, i) => times[i] !== acknowledged.get(key))).toEqual([]);
  }, 120_000);

  it("without a client clock, each call is on the objects' clock (set by hand), or at the time the call names", async () => {
    await fresh();
    let server = await start();
    const t0 = 1_800_000_000_000;
    const set = { name: "clock", shards: 2, ttl: "1h", ttlMap: { "slow.example": "1d" } };
    const keys = ["https://a.example/1", "https://slow.example/1"];
    expect(await call("/clock", { t: t0 })).toBe(true);
    expect(await call("/add", { ...set, keys })).toEqual([1, 1]);
    expect(await call("/seen-at", { ...set, keys })).toEqual([t0, t0]);
    await server.stop();
    server = await start();
    expect(await call("/clock", { t: t0 + 3599_000 })).toBe(true);
    expect(await call("/add", { ...set, keys })).toEqual([0, 0]);
    expect(await call("/clock", { t: t0 + 3600_000 })).toBe(true);
    expect(await call("/due", { ...set, keys })).toEqual([1, 0]);
    // A time named by the call wins over the objects' clock.
    expect(await call("/has", { ...set, keys, at: t0 })).toEqual([1, 1]);
    expect(await call("/add", { ...set, keys })).toEqual([1, 0]);
    expect(await call("/forget-host", { ...set, pattern: "slow.example" })).toBe(true);
    expect(await call("/has", { ...set, keys })).toEqual([1, 0]);
    expect(await call("/size", { ...set })).toBe(2);
    expect(await call("/clear", { ...set })).toBe(true);
    expect(await call("/size", { ...set })).toBe(0);
  }, 120_000);

  it("rewrites many batches into few rows, dropping what no TTL holds, and answers the same after a restart", async () => {
    await fresh();
    let server = await start();
    const set = { name: "rows", shards: 1, ttl: "1h" };
    let now = 1_900_000_000_000;
    const gone = ["https://gone.example/1"];
    for (let batch = 0; batch < 340; batch++) {
      const keys = Array.from({ length: 20 }, (_, i) => `https://rows.example/${batch}/${i}`);
      expect(await call("/add", { ...set, now, keys })).toEqual(keys.map(() => 1));
      // A host forgotten before the last rewrite: its tombstone must outlive the rewrite.
      if (batch === 300) expect(await call("/add", { ...set, now, keys: gone })).toEqual([1]);
      if (batch === 305) expect(await call("/forget-host", { ...set, now, pattern: "gone.example" })).toBe(true);
      now += 60_000;
    }
    const probe = [...Array.from({ length: 340 }, (_, b) => `https://rows.example/${b}/7`), ...gone];
    const answers = await call<number[]>("/has", { ...set, now, keys: probe });
    // The batches of the last hour (59 of them, one a minute; the one an hour old is due) are held.
    expect(answers).toEqual(probe.map((_, b) => (b > 280 && b < 340 ? 1 : 0)));
    const head = { v: 1, ttl: "1h", at: now };
    const [sized] = await call<{ status: number; body: { size: number; rows: number } }[]>("/raw", {
      name: "rows",
      shards: 1,
      op: "size",
      head,
    });
    // 340 batches, one row each, rewritten every time the rows doubled: far fewer rows, and the
    // expired keys dropped from the table (20 a minute, an hour of them kept at the last rewrite).
    expect(sized.status).toBe(200);
    expect(sized.body.rows).toBeLessThan(340 - 64);
    expect(sized.body.size).toBeLessThan(340 * 20);
    await server.stop("SIGKILL");
    server = await start();
    expect(await call("/has", { ...set, now, keys: probe })).toEqual(answers);
  }, 120_000);

  it("refuses bad options, a plain set's name, a changed shard count and another protocol version, naming them", async () => {
    await fresh();
    await start();
    const set = { name: "opts", shards: 2, ttl: "1d" };
    const invalid = (argument: string) => expect.objectContaining({ name: "InvalidArgumentError", argument });
    expect(await call("/add", { ...set, ttl: "30x", keys: ["k"] })).toEqual(invalid("ttl"));
    expect(await call("/add", { ...set, ttl: "1500ms", keys: ["k"] })).toEqual(invalid("ttl"));
    expect(await call("/add", { ...set, ttlMap: { "a.example": "1x" }, keys: ["k"] })).toEqual(
      invalid('ttlMap["a.example"]'),
    );
    expect(await call("/add", { ...set, ttlMap: { "no pattern": "1h" }, keys: ["k"] })).toEqual(invalid("pattern"));
    expect(await call("/add", { ...set, semantics: "sometimes", keys: ["k"] })).toEqual(invalid("semantics"));
    expect(await call("/add", { ...set, shards: 0, keys: ["k"] })).toEqual(invalid("shards"));
    expect(await call("/add", { ...set, name: "", keys: ["k"] })).toEqual(invalid("name"));
    expect(await call("/add", { ...set, keys: ["k"], at: "noon" })).toEqual(invalid("at"));
    expect(await call("/forget-host", { ...set, pattern: "https://a.example/" })).toEqual(invalid("host"));
    expect(await call("/forget-prefix", { ...set, pattern: "a.example" })).toEqual(invalid("prefix"));
    // One name is a plain set or a window, never both; a shard count is fixed.
    expect(await call("/plain", { name: "plain", shards: 1, keys: ["k"] })).toEqual([1]);
    expect(await call("/add", { ...set, name: "plain", shards: 1, keys: ["k"] })).toMatchObject({
      code: "ERR_WINDOW_CHANGED",
    });
    expect(await call("/add", { ...set, keys: ["k"] })).toEqual([1]);
    expect(await call("/plain", { name: "opts", shards: 2, keys: ["k"] })).toMatchObject({
      code: "ERR_WINDOW_CHANGED",
    });
    expect(await call("/add", { ...set, shards: 3, keys: ["k"] })).toMatchObject({ code: "ERR_SHARD_COUNT" });
    // Another version of the window protocol is refused by the object, as is a body that is not one.
    const [other] = await call("/raw", {
      name: "raw-v2",
      shards: 1,
      op: "has",
      head: { v: 2, ttl: "1d" },
      keys: ["k"],
    });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("ERR_UNSUPPORTED_VERSION");
    const [same] = await call("/raw", { name: "raw", shards: 1, op: "add", head: { v: 1, ttl: "1d" }, keys: ["k"] });
    expect(same).toEqual({ status: 200, body: [1] });
  }, 120_000);
});
