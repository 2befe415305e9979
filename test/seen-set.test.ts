// openSeenSet: every backend answers as a JavaScript Set of the same keys would (Bloom backends
// at an FP rate too small to matter here), is atomic among concurrent callers and processes, and
// keeps what it reported through close and reopen (memory: through serialize).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CrawlsieveError,
  DisposedError,
  InvalidArgumentError,
  isSeenSet,
  openSeenSet,
  requestFingerprint,
  type SeenSet,
  type SeenSpec,
} from "../build/js/index.node.js";
import { fromNodeRedis, ScrapyRedisDupeFilter } from "../build/js/redis/index.js";
import type { WindowedSeenSet } from "../build/js/index.node.js";
import { ready } from "./helpers.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const WORKER = new URL("./support/seen-worker.mjs", import.meta.url).pathname;
let server: RedisServer;
let client: ReturnType<typeof createClient>;
let second: ReturnType<typeof createClient>;
let dir: string;

beforeAll(async () => {
  await ready();
  server = await startRedis();
  client = createClient({ url: server.url });
  second = createClient({ url: server.url });
  await Promise.all([client.connect(), second.connect()]);
  dir = mkdtempSync(join(tmpdir(), "cs-seen-"));
}, 120_000);
afterAll(async () => {
  await Promise.all([client?.quit(), second?.quit()]);
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** Each backend, as a factory of specs (a fresh name or folder each call unless `same`). */
const BACKENDS: Record<string, (same?: string) => SeenSpec> = {
  "memory exact": () => ({ backend: "memory" }),
  "memory Bloom": () => ({ backend: "memory", exact: false, items: 1000, fpRate: 1e-9 }),
  window: () => ({ backend: "window", window: "7d" }),
  "window Bloom": () => ({ backend: "window", window: "7d", exact: false, items: 20_000, fpRate: 1e-9 }),
  disk: (same) => ({ backend: "disk", path: join(dir, same ?? `l${n++}`) }),
  "disk window": (same) => ({ backend: "disk", path: join(dir, same ?? `w${n++}`), window: "7d" }),
  "redis exact": (same) => ({ backend: "redis", client, name: same ?? `e${n++}` }),
  "redis Bloom": (same) => ({
    backend: "redis",
    client,
    name: same ?? `b${n++}`,
    exact: false,
    items: 50_000,
    fpRate: 1e-9,
  }),
  "redis window": (same) => ({ backend: "redis", client, name: same ?? `x${n++}`, window: "2d" }),
  "redis Bloom window": (same) => ({
    backend: "redis",
    client,
    name: same ?? `w${n++}`,
    window: "2d",
    exact: false,
    items: 50_000,
    fpRate: 1e-9,
  }),
  "scrapy-redis dupefilter": (same) => ({
    backend: "redis",
    client,
    dupefilter: `${same ?? `spider${n++}`}:dupefilter`,
  }),
};

const keys = (from: number, to: number, tag = "k") =>
  Array.from({ length: to - from }, (_, i) => `https://www.example.com/${tag}/${from + i}?q=${(from + i) % 7}`);
const ones = (flags: Uint8Array) => flags.reduce((a, b) => a + b, 0);

describe.each(Object.keys(BACKENDS))("openSeenSet: %s", (name) => {
  const make = BACKENDS[name];

  it("answers addMany and hasMany as a Set does, a repeat inside a batch included", async () => {
    const seen = await openSeenSet(make());
    expect(isSeenSet(seen)).toBe(true);
    const first = keys(0, 3000);
    const batch = [...first, ...first.slice(0, 500)];
    const ref = new Set<string>();
    const expected = batch.map((k) => (ref.has(k) ? 0 : (ref.add(k), 1)));
    expect(Array.from(await seen.hasMany(keys(0, 10)))).toEqual(new Array(10).fill(0));
    expect(Array.from(await seen.addMany(batch))).toEqual(expected);
    expect(Array.from(await seen.addMany(keys(2000, 4000)))).toEqual([
      ...new Array(1000).fill(0),
      ...new Array(1000).fill(1),
    ]);
    expect(Array.from(await seen.hasMany([...keys(3990, 4010)]))).toEqual([
      ...new Array(10).fill(1),
      ...new Array(10).fill(0),
    ]);
    expect(await seen.size()).toBe(4000);
    await seen.clear();
    expect(ones(await seen.hasMany(keys(0, 4000)))).toBe(0);
    expect(ones(await seen.addMany(keys(0, 100)))).toBe(100);
    await seen.close();
  });

  it("lets exactly one of several concurrent callers see each key as new", async () => {
    const seen = await openSeenSet(make());
    const all = keys(0, 2000, "c");
    const calls = [0, 1, 2, 3].map((c) => seen.addMany(c % 2 === 0 ? all : [...all].reverse()));
    const results = await Promise.all(calls);
    const wins = new Array(all.length).fill(0);
    results.forEach((flags, c) => flags.forEach((f, i) => (wins[c % 2 === 0 ? i : all.length - 1 - i] += f)));
    expect(wins.every((w) => w === 1)).toBe(true);
    await seen.close();
  });

  it("forgets removed keys exactly when the backend can remove", async () => {
    const seen = await openSeenSet(make());
    await seen.addMany(keys(0, 1000, "r"));
    if (!seen.exact) {
      expect(seen.removeMany).toBeUndefined();
      return seen.close();
    }
    const odd = keys(0, 1000, "r").filter((_, i) => i % 2 === 1);
    expect(ones(await seen.removeMany!([...odd, "never-added"]))).toBe(500);
    const has = await seen.hasMany(keys(0, 1000, "r"));
    expect(Array.from(has)).toEqual(Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? 1 : 0)));
    expect(ones(await seen.addMany(odd))).toBe(500);
    expect(await seen.size()).toBe(1000);
    await seen.close();
  });
});

describe("openSeenSet: what survives", () => {
  it("memory backends restore from serialize() bytes with every key seen", async () => {
    for (const spec of [BACKENDS["memory exact"](), BACKENDS["memory Bloom"](), BACKENDS.window()] as const) {
      const seen = await openSeenSet(spec);
      await seen.addMany(keys(0, 5000, "s"));
      const bytes = seen.serialize!();
      await seen.close();
      await expect(seen.addMany(["x"])).rejects.toThrow(DisposedError);
      const back = await openSeenSet({ ...spec, bytes } as SeenSpec);
      expect(ones(await back.hasMany(keys(0, 5000, "s")))).toBe(5000);
      expect(ones(await back.addMany(keys(4000, 6000, "s")))).toBe(1000);
      await back.close();
    }
  });

  it("disk and redis keep every key through close and reopen", async () => {
    for (const name of [
      "disk",
      "redis exact",
      "redis Bloom",
      "redis window",
      "redis Bloom window",
      "scrapy-redis dupefilter",
    ]) {
      const spec = BACKENDS[name](`reopen-${name.replaceAll(" ", "-")}`);
      const seen = await openSeenSet(spec);
      expect(ones(await seen.addMany(keys(0, 3000, "o")))).toBe(3000);
      await seen.close();
      const again = await openSeenSet(spec);
      expect(ones(await again.addMany(keys(0, 3500, "o")))).toBe(500);
      await again.close();
    }
  });

  it("a redis window is exact and windowed: TTLs by host, refresh, forgetting one host", async () => {
    let now = Date.UTC(2026, 0, 1);
    const seen = (await openSeenSet({
      backend: "redis",
      client,
      name: `ttl-map-${n++}`,
      window: "7d",
      ttlMap: { "news.example": "1h" },
      semantics: "refresh",
      now: () => now,
    })) as WindowedSeenSet;
    expect(seen.exact).toBe(true);
    expect(seen.semantics).toBe("refresh");
    const keys = ["https://news.example/a", "https://shop.example/a", "https://www.news.example/b"];
    expect(Array.from(await seen.addMany(keys))).toEqual([1, 1, 1]);
    now += 3_600_000; // an hour: the news keys are due, the shop key is not
    expect(Array.from(await seen.dueMany(keys))).toEqual([1, 0, 1]);
    now += 6 * 86_400_000;
    expect(Array.from(await seen.addMany(keys.slice(1, 2)))).toEqual([0]); // refreshed at 6 days
    now += 2 * 86_400_000;
    expect(Array.from(await seen.hasMany(keys.slice(1, 2)))).toEqual([1]);
    await seen.forgetHost("shop.example");
    expect(Array.from(await seen.addMany(keys))).toEqual([1, 1, 1]);
    await seen.close();
  });

  it.each([
    ["exact", {}],
    ["Bloom", { exact: false, items: 1000, fpRate: 1e-9 }],
  ])("a windowed set (%s) reports a key new again once the window has passed", async (_, kind) => {
    let now = Date.UTC(2026, 0, 1);
    const seen = await openSeenSet({ backend: "window", window: "7d", ...kind, now: () => now } as SeenSpec);
    expect(ones(await seen.addMany(["a", "b"]))).toBe(2);
    now += 5 * 86_400_000;
    expect(ones(await seen.addMany(["a", "b", "c"]))).toBe(1);
    now += 3 * 86_400_000;
    expect(Array.from(await seen.addMany(["a", "b", "c"]))).toEqual([1, 1, 0]);
    await seen.close();
  });
});

describe("openSeenSet: processes sharing one set", () => {
  /** Runs the worker: the keys it saw as new. */
  const run = (spec: object, count: number, seed: number) =>
    new Promise<string[]>((resolve, reject) => {
      const child = spawn(process.execPath, [WORKER, JSON.stringify(spec), String(count), String(seed)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`worker exited ${code}`))));
    });

  it.each([
    ["disk", () => ({ backend: "disk", path: join(dir, "fleet") })],
    ["redis exact", () => ({ backend: "redis", url: server.url, name: "fleet-e" })],
    [
      "redis Bloom",
      () => ({ backend: "redis", url: server.url, name: "fleet-b", exact: false, items: 50_000, fpRate: 1e-9 }),
    ],
    ["redis window (exact)", () => ({ backend: "redis", url: server.url, name: "fleet-w", window: "30d" })],
  ])(
    "%s: three processes see every key new exactly once among them",
    async (_, spec) => {
      const results = await Promise.all([1, 2, 3].map((seed) => run(spec(), 6000, seed)));
      const all = results.flat();
      expect(all.length).toBe(6000);
      expect(new Set(all).size).toBe(6000);
    },
    180_000,
  );
});

describe("openSeenSet: bad specs", () => {
  it("names the bad value in a typed error", async () => {
    await expect(openSeenSet({ backend: "tape" } as unknown as SeenSpec)).rejects.toThrow(/backend.*tape/s);
    await expect(openSeenSet({ backend: "disk" } as unknown as SeenSpec)).rejects.toThrow(
      /path must be a directory path, got undefined/,
    );
    await expect(openSeenSet(null as unknown as SeenSpec)).rejects.toThrow(InvalidArgumentError);
    await expect(openSeenSet({ backend: "memory", fpRate: 0.01 })).rejects.toThrow(/fpRate/);
    await expect(openSeenSet({ backend: "memory", exact: false, fpRate: 2 })).rejects.toThrow(InvalidArgumentError);
    await expect(openSeenSet({ backend: "window", window: "7 days" as never })).rejects.toThrow(/window.*7 days/s);
    await expect(openSeenSet({ backend: "disk", path: "" })).rejects.toThrow(InvalidArgumentError);
    await expect(openSeenSet({ backend: "redis", client, name: "x", exact: false })).rejects.toThrow(/items/);
    await expect(openSeenSet({ backend: "redis", client: {}, name: "x" })).rejects.toThrow(InvalidArgumentError);
    await expect(openSeenSet({ backend: "redis", client, name: "x", window: "1d", fpRate: 1e-6 })).rejects.toThrow(
      /fpRate.*exact: false/,
    );
    await expect(openSeenSet({ backend: "redis", client, name: "x", ttlMap: { "a.example": "1h" } })).rejects.toThrow(
      /ttlMap.*exact window/,
    );
    await expect(
      openSeenSet({ backend: "redis", client, name: "x", window: "1d", exact: false, items: 10, semantics: "refresh" }),
    ).rejects.toThrow(/semantics.*exact window/);
    await expect(openSeenSet({ backend: "redis", client, name: "x", window: "1.5s" })).rejects.toThrow(/window.*1\.5s/);
    await expect(openSeenSet({ backend: "memory", bytes: new Uint8Array(10) })).rejects.toThrow(CrawlsieveError);
  });

  it("shares a Scrapy-Redis dupefilter: what ScrapyRedisDupeFilter recorded is seen by fingerprint, and the reverse", async () => {
    const seen = await openSeenSet({ backend: "redis", client, dupefilter: "shared:dupefilter" });
    const filter = new ScrapyRedisDupeFilter(fromNodeRedis(client), { key: "shared:dupefilter" });
    const request = { method: "GET", url: "https://shop.example/item?b=2&a=1" };
    expect(await filter.requestSeen(request)).toBe(false);
    const fp = requestFingerprint(request, { algorithm: "scrapy-redis" });
    expect(Array.from(await seen.addMany([fp]))).toEqual([0]);
    expect(
      Array.from(
        await seen.addMany([requestFingerprint({ url: "https://shop.example/other" }, { algorithm: "scrapy-redis" })]),
      ),
    ).toEqual([1]);
    expect(await filter.requestSeen({ url: "https://shop.example/other" })).toBe(true);
    await expect(openSeenSet({ backend: "redis", client, dupefilter: "x", name: "y" })).rejects.toThrow(/dupefilter/);
  });

  it("passes a ready SeenSet through unchanged", async () => {
    const seen: SeenSet = await openSeenSet({ backend: "memory" });
    expect(await openSeenSet(seen)).toBe(seen);
  });
});
