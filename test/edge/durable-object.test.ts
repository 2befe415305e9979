// crawlsieve/durable-object in real workerd (the npm package's binary) with SQLite-backed
// Durable Objects on local disk: keys stay seen across a restart, concurrent clients over
// overlapping keys see each key new exactly once between them, a SIGKILL loses no key a client
// was told was new, many small batches merged into few rows still load, and a changed shard
// count is refused. The worker is examples/durable-object/worker.js, built by its build.js.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildDurableWorker } from "../../examples/durable-object/build.js";
import { freePort, startWorkerd, type RunningWorkerd as Running } from "../../examples/durable-object/serve.js";

let out: string;
let storage: string;
let port: number;
const running: Running[] = [];

/** A fresh build with empty storage. */
async function fresh(entry?: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "cs-do-"));
  out = join(dir, "out");
  storage = join(dir, "storage");
  port = await freePort();
  await buildDurableWorker({ out, storage, port, ...(entry === undefined ? {} : { entry }) });
}

async function start(): Promise<Running> {
  const server = await startWorkerd(out, port);
  running.push(server);
  return server;
}

/** POSTs keys to the example worker; the JSON answer (flags, a size, or an error). */
async function call(
  path: string,
  set: string,
  shards: number,
  keys?: string[],
  window?: string,
  extra = "",
): Promise<{ status: number; body: any }> {
  const response = await fetch(
    `http://127.0.0.1:${port}${path}?set=${set}&shards=${shards}${window === undefined ? "" : `&window=${window}`}${extra}`,
    { method: "POST", body: keys === undefined ? undefined : JSON.stringify(keys) },
  );
  return { status: response.status, body: await response.json() };
}

const urls = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `https://example.com/page/${from + i}?q=${(from + i) % 7}`);

afterEach(async () => {
  for (const server of running.splice(0)) await server.stop("SIGKILL");
});

beforeAll(async () => {
  await fresh();
});

describe("Durable Object seen-set in workerd", () => {
  it("keeps keys seen after workerd is stopped and started again", async () => {
    await fresh();
    let server = await start();
    const keys = urls(0, 5000);
    const first = await call("/add", "persist", 4, [...keys, keys[0]]);
    expect(first.status).toBe(200);
    expect(first.body.slice(0, 5000).every((flag: number) => flag === 1)).toBe(true);
    expect(first.body[5000]).toBe(0);
    expect((await call("/size", "persist", 4)).body).toBe(5000);
    await server.stop();
    server = await start();
    const again = await call("/add", "persist", 4, [...keys, "https://example.com/new"]);
    expect(again.body.slice(0, 5000).every((flag: number) => flag === 0)).toBe(true);
    expect(again.body[5000]).toBe(1);
    expect((await call("/has", "persist", 4, ["https://example.com/never", keys[42]])).body).toEqual([0, 1]);
    expect((await call("/size", "persist", 4)).body).toBe(5001);
    // Another name is another set.
    expect((await call("/has", "other", 4, [keys[42]])).body).toEqual([0]);
  }, 120_000);

  it("four concurrent clients over overlapping keys see each key new exactly once between them", async () => {
    await fresh();
    await start();
    const pool = urls(0, 8000);
    const news = new Map<string, number>();
    // Each client takes a window of the pool overlapping its neighbours', shuffled, in batches of 250.
    await Promise.all(
      [0, 1, 2, 3].map(async (client) => {
        const mine = pool.slice(client * 1500, client * 1500 + 3500);
        for (let i = mine.length - 1; i > 0; i--) {
          const j = (i * 7919 + client * 31) % (i + 1);
          [mine[i], mine[j]] = [mine[j], mine[i]];
        }
        for (let at = 0; at < mine.length; at += 250) {
          const batch = mine.slice(at, at + 250);
          const { body } = await call("/add", "race", 3, batch);
          batch.forEach((key, i) => news.set(key, (news.get(key) ?? 0) + body[i]));
        }
      }),
    );
    const offered = new Set(pool.slice(0, 3 * 1500 + 3500));
    expect(news.size).toBe(offered.size);
    expect([...news.values()].filter((n) => n !== 1)).toEqual([]);
    expect((await call("/size", "race", 3)).body).toBe(offered.size);
  }, 120_000);

  it("loses nothing it acknowledged when workerd is killed (SIGKILL) in the middle of batches", async () => {
    await fresh();
    const server = await start();
    const acknowledged: string[] = [];
    let stop = false;
    const clients = [0, 1].map(async (client) => {
      for (let batch = 0; !stop; batch++) {
        const keys = urls(client * 1e6 + batch * 500, client * 1e6 + batch * 500 + 500);
        try {
          const { body } = await call("/add", "crash", 2, keys);
          keys.forEach((key, i) => body[i] === 1 && acknowledged.push(key));
        } catch {
          return; // the connection died with workerd
        }
      }
    });
    await new Promise((done) => setTimeout(done, 1500));
    await server.stop("SIGKILL");
    stop = true;
    await Promise.all(clients);
    expect(acknowledged.length).toBeGreaterThan(1000);
    await start();
    const { body } = await call("/has", "crash", 2, acknowledged);
    expect(body.length).toBe(acknowledged.length);
    expect(acknowledged.filter((_, i) => body[i] !== 1)).toEqual([]);
  }, 120_000);

  it("merges many one-key batches into few rows and still loads every key", async () => {
    await fresh();
    let server = await start();
    const keys = urls(0, 300);
    for (const key of keys) expect((await call("/add", "small", 1, [key])).body).toEqual([1]);
    await server.stop();
    server = await start();
    expect((await call("/has", "small", 1, keys)).body).toEqual(keys.map(() => 1));
    expect((await call("/add", "small", 1, keys)).body).toEqual(keys.map(() => 0));
  }, 120_000);

  it("refuses a changed shard count for an existing name with a typed error", async () => {
    await fresh();
    await start();
    expect((await call("/add", "fixed", 4, urls(0, 100))).status).toBe(200);
    for (const shards of [2, 8]) {
      const refused = await call("/add", "fixed", shards, urls(0, 100));
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ name: "ShardCountError", code: "ERR_SHARD_COUNT" });
      expect(refused.body.message).toContain("created with 4 shards");
    }
    expect((await call("/add", "fixed", 4, urls(0, 101))).body).toEqual([...urls(0, 100).map(() => 0), 1]);
  }, 120_000);

  it("with a window, a key is new again between the window and 17/16 of it after it was first added, across a restart (the objects' clock set by hand)", async () => {
    await fresh(new URL("./clock-worker.js", import.meta.url).pathname);
    let server = await start();
    const early = urls(0, 500);
    const late = urls(500, 1000);
    const t0 = 1_700_000_000_000;
    const clock = async (t: number) =>
      expect((await call(`/clock`, "x", 1, undefined, undefined, `&t=${t}`)).body).toBe(true);
    await clock(t0);
    expect((await call("/add", "recent", 2, early, "4s")).body).toEqual(early.map(() => 1));
    await clock(t0 + 1500);
    expect((await call("/add", "recent", 2, [...early, ...late], "4s")).body).toEqual([
      ...early.map(() => 0),
      ...late.map(() => 1),
    ]);
    await server.stop();
    server = await start();
    // Past 17/16 of the 4 s window for the early keys (epochs of 250 ms), 2.85 s for the late ones.
    await clock(t0 + 4350);
    expect((await call("/has", "recent", 2, [...early, ...late], "4s")).body).toEqual([
      ...early.map(() => 0),
      ...late.map(() => 1),
    ]);
    expect((await call("/add", "recent", 2, early, "4s")).body).toEqual(early.map(() => 1));
    expect((await call("/size", "recent", 2, undefined, "4s")).body).toBe(1000);
    // The late keys' window has passed too (they were added at t0 + 1500).
    await clock(t0 + 1500 + 4250 + 1);
    expect((await call("/has", "recent", 2, late, "4s")).body).toEqual(late.map(() => 0));
    // The window is fixed for a name, like the shard count; a set without one never forgets.
    expect((await call("/add", "recent", 2, early, "1d")).body).toMatchObject({ code: "ERR_WINDOW_CHANGED" });
    expect((await call("/add", "recent", 2, early)).body).toMatchObject({ code: "ERR_WINDOW_CHANGED" });
  }, 120_000);
});
