// crawlsieve/redis against a real redis-server on a loopback port: same bits as in memory,
// concurrent processes, Redis killed mid-stream, expiry under a controllable clock, cluster
// slots, and the Scrapy-Redis layouts.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import xxhashWasm from "xxhash-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  Deduplicator,
  FilterTooLargeError,
  openLmdbStore,
  requestFingerprint,
  sizing,
  StoreDeduplicator,
  TimeWindowFilter,
} from "../build/js/index.node.js";
import {
  fromNodeRedis,
  fromSend,
  keyPrefix,
  RedisBlockedBloomFilter,
  keySlot,
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisDeduplicator,
  RedisTimeWindowFilter,
  RedisWindowedSeenSet,
  RedisUnavailableError,
  ScrapyRedisBloomFilter,
  ScrapyRedisDupeFilter,
  withRecentCache,
  type RedisCommander,
} from "../build/js/redis/index.js";
import { ready, rng, urls } from "./helpers.js";
import { partitionOf, setBits, standardPositions } from "./reference-positions.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const WORKER = new URL("./support/redis-worker.mjs", import.meta.url).pathname;
let server: RedisServer;
let client: ReturnType<typeof createClient>;
let redis: RedisCommander;

beforeAll(async () => {
  await ready();
  server = await startRedis();
  client = createClient({ url: server.url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
  client.on("error", () => undefined);
  await client.connect();
  redis = fromNodeRedis(client);
}, 120_000);
afterAll(async () => {
  if (client.isOpen) await client.quit();
  await server.stop();
});

const sum = (flags: Uint8Array) => flags.reduce((a, b) => a + b, 0);
const PARAMS_END = 24 + 40;

describe("RedisBloomFilter", () => {
  it("holds exactly the bits of a BloomFilter of the same geometry, and exports/imports format v1", async () => {
    const options = { items: 20_000, fpRate: 0.001, maxShardBytes: 8192 };
    const shared = await RedisBloomFilter.open(redis, { name: "same-bits", ...options });
    // Sized with fewer probes than the least-memory filter (each probe is a Redis bit operation).
    const size = sizing.probeThriftyBloom({ items: 20_000, fpRate: 0.001 });
    expect(shared.geometry.hashes).toBe(size.hashes);
    expect(size.hashes).toBeLessThan(sizing.optimalBloom({ items: 20_000, fpRate: 0.001 }).hashes);
    const local = new BloomFilter({ bits: size.bits, hashes: size.hashes, maxPartitionBytes: 8192 });
    expect(shared.geometry.partitions).toBe(local.partitions);
    expect(local.partitions).toBeGreaterThan(3);
    const keys = urls(20_000, "rb");
    expect(await shared.addMany(keys)).toEqual(local.addMany(keys));
    const exported = await shared.exportBytes();
    const payload = (bytes: Uint8Array) => bytes.subarray(PARAMS_END, bytes.length - 8);
    expect(payload(exported)).toEqual(payload(local.serialize()));
    const probe = urls(30_000, "absent");
    expect(await shared.hasMany(probe)).toEqual(local.hasMany(probe));
    const copy = await RedisBloomFilter.importBytes(redis, "imported", local.serialize());
    expect(sum(await copy.hasMany(keys))).toBe(keys.length);
    const again = await RedisBloomFilter.open(redis, { name: "same-bits", items: 5, fpRate: 0.5 });
    expect(again.geometry).toEqual(shared.geometry);
    // The second handle, asked for another size, reads the first one's bits: every key it added is there.
    expect(sum(await again.hasMany(keys))).toBe(keys.length);
    expect(JSON.parse(String(await redis.send(["GET", `${keyPrefix("same-bits")}meta`])))).toMatchObject({
      v: 1,
      kind: "bloom",
      slots: shared.geometry.slots,
      hashes: shared.geometry.hashes,
    });
  });

  it("matches the Redis-shard golden file (format v1, must load forever) bit for bit, and the modelled partition routing", async () => {
    const goldenKeys = Array.from(
      { length: 1000 },
      (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`,
    );
    const bytes = new Uint8Array(readFileSync(new URL("./golden/redis-bloom-v1.bin", import.meta.url)));
    const filter = await RedisBloomFilter.open(redis, {
      name: "golden-shards",
      items: 1000,
      fpRate: 0.01,
      maxShardBytes: 256,
    });
    expect(filter.geometry.partitions).toBeGreaterThan(2);
    await filter.addMany(goldenKeys);
    expect(Buffer.from(await filter.exportBytes()).equals(Buffer.from(bytes))).toBe(true);
    const loaded = BloomFilter.deserialize(bytes);
    expect(sum(loaded.hasMany(goldenKeys))).toBe(1000);
    // Routing and positions from the independent model (reference-positions.ts).
    const { h64Raw } = await xxhashWasm();
    const { partitions, slots, hashes } = filter.geometry;
    const shardBits = Math.ceil(Math.ceil(slots / 8) / 64) * 512;
    const expected = new Set<number>();
    for (const key of goldenKeys) {
      const h1 = h64Raw(new TextEncoder().encode(key), 0n);
      for (const pos of standardPositions(h1, slots, hashes))
        expected.add(partitionOf(h1, partitions) * shardBits + pos);
    }
    expect(setBits(bytes.subarray(64, -8))).toEqual([...expected].sort((a, b) => a - b));
    loaded.dispose();
  });

  it("creates its shards at full size in one allocation, so filling them bit by bit costs no more memory", async () => {
    const keys = urls(20_000, "prealloc");
    const shared = await RedisBloomFilter.open(redis, {
      name: "prealloc",
      items: 20_000,
      fpRate: 0.001,
      maxShardBytes: 8192,
    });
    // One key at a time first: each write past a shard's end would grow it.
    for (const key of keys.slice(0, 200)) await shared.add(key);
    await shared.addMany(keys);
    const bytes = Math.ceil(shared.geometry.slots / 8);
    for (let p = 0; p < shared.geometry.partitions; p++) {
      const used = Number(await redis.send(["MEMORY", "USAGE", shared.shardKey(p)]));
      // Bit by bit from nothing, Redis doubles a string under 1 MB as it grows: up to twice the bytes.
      expect(used, `shard ${p}`).toBeLessThan(bytes * 1.15 + 128);
      expect(Number(await redis.send(["STRLEN", shared.shardKey(p)]))).toBe(bytes);
    }
    // Opening again leaves existing shards and their bits alone.
    const again = await RedisBloomFilter.open(redis, {
      name: "prealloc",
      items: 20_000,
      fpRate: 0.001,
      maxShardBytes: 8192,
    });
    expect(sum(await again.hasMany(keys))).toBe(keys.length);
    const day = 86_400_000;
    const at = Math.floor(Date.now() / day) * day + 1_000;
    const window = await RedisTimeWindowFilter.open(redis, {
      name: "prealloc-window",
      granularity: "day",
      slices: 3,
      itemsPerSlice: 20_000,
      fpRate: 0.001,
      now: () => at,
    });
    for (const key of keys.slice(0, 100)) await window.add(key);
    await window.addMany(keys);
    const slice = window.sliceKey(Math.floor(at / day));
    const sliceBytes = Number(await redis.send(["STRLEN", slice]));
    expect(sliceBytes).toBe(Math.ceil(sizing.optimalBloom({ items: 20_000, fpRate: 0.001 }).bits / 8));
    expect(Number(await redis.send(["MEMORY", "USAGE", slice]))).toBeLessThan(sliceBytes * 1.15 + 128);
  });

  it("an add reads first once most keys are repeats, and answers as in memory either way", async () => {
    const names: string[] = [];
    const counted: RedisCommander = {
      send: (args, options) => (names.push(String(args[0])), redis.send(args, options)),
    };
    const shared = await RedisBloomFilter.open(counted, { name: "read-first", items: 20_000, fpRate: 0.001 });
    const local = new BloomFilter({
      bits: shared.geometry.slots * shared.geometry.partitions,
      hashes: shared.geometry.hashes,
    });
    const old = urls(4_000, "read-first");
    const step = async (keys: string[]) => {
      names.length = 0;
      expect(await shared.addMany(keys)).toEqual(local.addMany(keys));
      return names.includes("BITFIELD_RO");
    };
    // New keys: set directly, one round trip.
    expect(await step(old)).toBe(false);
    // All repeats: after two such batches the share of repeats passes 3/4 and adds read first.
    await step(old);
    await step(old);
    expect(await step(old)).toBe(true);
    // Read first, a batch of repeats and new keys (some repeated inside it) still answers as in memory.
    const mixed = [...old.slice(0, 3_000), ...urls(600, "read-first-new"), ...urls(100, "read-first-new")];
    expect(await step(mixed)).toBe(true);
    local.dispose();
  });

  it("takes the probes asked for, sized to meet fpRate with them, and the least-memory filter's bits at its k", async () => {
    const keys = urls(5_000, "k-asked");
    for (const hashes of [3, 10]) {
      const shared = await RedisBloomFilter.open(redis, {
        name: `hashes-${hashes}`,
        items: 5_000,
        fpRate: 0.001,
        hashes,
      });
      expect(shared.geometry.hashes).toBe(hashes);
      // m from (1 - e^(-kn/m))^k = p, solved here: m = -k n / ln(1 - p^(1/k)).
      const bits = Math.ceil((-hashes * 5_000) / Math.log(1 - Math.pow(0.001, 1 / hashes)));
      expect(Math.abs(shared.geometry.slots * shared.geometry.partitions - bits)).toBeLessThanOrEqual(
        shared.geometry.partitions,
      );
      const local = new BloomFilter({ bits: shared.geometry.slots * shared.geometry.partitions, hashes });
      // Added twice in one call: the second occurrence is not new, as in memory.
      const twice = [...keys.slice(0, 100), ...keys.slice(0, 100), ...keys];
      expect(await shared.addMany(twice)).toEqual(local.addMany(twice));
      local.dispose();
    }
    await expect(
      RedisBloomFilter.open(redis, { name: "hashes-bad", items: 5_000, fpRate: 0.001, hashes: 0 }),
    ).rejects.toThrow(/hashes/);
  });

  it("keeps every key of one filter in one cluster slot, as a cluster computes it", async () => {
    const cluster = await startRedis(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]);
    const c = createClient({ url: cluster.url });
    await c.connect();
    try {
      for (const key of [
        "cs:{crawl}:b:0",
        "cs:{crawl}:b:17",
        "cs:{crawl}:meta",
        "cs:{crawl}:w:20000",
        "cs:{crawl}:fp:00ff",
        "plain-key",
        "a{}b",
        "{user1000}.following",
      ]) {
        expect(keySlot(key), key).toBe(Number(await c.sendCommand(["CLUSTER", "KEYSLOT", key])));
      }
      expect(
        new Set(["b:0", "b:9", "meta", "w:1", "fp:abcd"].map((s) => keySlot(`${keyPrefix("crawl")}${s}`))).size,
      ).toBe(1);
    } finally {
      await c.quit();
      await cluster.stop();
    }
  }, 120_000);
});

describe("concurrent processes", () => {
  it.each(["exact", "impcb", "bloom"])(
    "8 processes with overlapping ranges: every key reported new %s",
    async (mode) => {
      const name = `race-${mode}`;
      // Process p takes keys [p * 3000, p * 3000 + 6000): each key is in two processes' ranges.
      const runs = Array.from(
        { length: 8 },
        (_, p) =>
          new Promise<string[]>((resolve, reject) => {
            const child = spawn(process.execPath, [
              WORKER,
              server.url,
              mode,
              name,
              String(p * 3000),
              String(p * 3000 + 6000),
            ]);
            let out = "";
            let err = "";
            child.stdout.on("data", (d) => (out += d));
            child.stderr.on("data", (d) => (err += d));
            child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
          }),
      );
      const fresh = (await Promise.all(runs)).flat();
      const counts = new Map<string, number>();
      for (const key of fresh) counts.set(key, (counts.get(key) ?? 0) + 1);
      const all = 7 * 3000 + 6000;
      expect(Math.max(...counts.values())).toBe(1);
      if (mode !== "bloom") expect(counts.size).toBe(all);
      else expect(counts.size).toBeGreaterThan(all * 0.99);
    },
    180_000,
  );
});

describe("RedisCountingBloomFilter", () => {
  it("adds, saturates and removes exactly as the in-memory CountingBloomFilter", async () => {
    const options = { items: 5_000, fpRate: 0.01, maxShardBytes: 2048 };
    const shared = new RedisCountingBloomFilter(redis, { name: "counting", ...options });
    const local = new CountingBloomFilter({ items: 5_000, fpRate: 0.01, maxPartitionBytes: 2048 });
    // The local filter's counters (an internal member) are laid out as the shared one's.
    expect(shared.geometry).toEqual((local as unknown as { store: { geometry: unknown } }).store.geometry);
    const keys = urls(3_000, "cnt");
    // Some keys 20 times: their counters saturate at 15 and must never move again.
    const stream = [...keys, ...Array.from({ length: 20 }, () => keys.slice(0, 50)).flat()];
    expect(await shared.addMany(stream)).toEqual(local.addMany(stream));
    const removals = [...keys.slice(0, 100), ...keys.slice(0, 10), ...urls(200, "never")];
    expect(await shared.removeMany(removals)).toEqual(local.removeMany(removals));
    const probe = [...keys, ...urls(5_000, "probe")];
    expect(await shared.hasMany(probe)).toEqual(local.hasMany(probe));
    for (const key of keys.slice(0, 60)) expect(await shared.multiplicity(key)).toBe(local.multiplicity(key));
    // One key at a time, as every filter offers: add answers "was absent", has "all counters set".
    for (const key of [keys[0], "single-counting", "single-counting"])
      expect(await shared.add(key)).toBe(local.add(key));
    for (const key of [keys[1], "single-counting", "never-added"]) expect(await shared.has(key)).toBe(local.has(key));
  });
});

describe("RedisBlockedBloomFilter (binary wire format)", () => {
  it("holds exactly the bits of a BlockedBloomFilter of the same geometry, and exports format v1", async () => {
    const options = { items: 20_000, fpRate: 0.001, maxShardBytes: 8192 };
    const shared = await RedisBlockedBloomFilter.open(redis, { name: "blocked-bits", ...options });
    const local = new BlockedBloomFilter({ items: 20_000, fpRate: 0.001, maxPartitionBytes: 8192 });
    expect(shared.geometry.partitions).toBe(local.partitions);
    expect(local.partitions).toBeGreaterThan(3);
    const keys = urls(20_000, "rbb");
    expect(await shared.addMany(keys)).toEqual(local.addMany(keys));
    const exported = await shared.exportBytes();
    const payload = (bytes: Uint8Array) => bytes.subarray(PARAMS_END, bytes.length - 8);
    expect(payload(exported)).toEqual(payload(local.serialize()));
    expect(
      BlockedBloomFilter.deserialize(exported)
        .hasMany(keys)
        .every((x: number) => x === 1),
    ).toBe(true);
    const probe = urls(30_000, "absent");
    expect(await shared.hasMany(probe)).toEqual(local.hasMany(probe));
    for (const key of [keys[0], "single-blocked", "single-blocked"]) expect(await shared.add(key)).toBe(local.add(key));
    for (const key of [keys[1], "single-blocked", "never-added"]) expect(await shared.has(key)).toBe(local.has(key));
    const again = await RedisBlockedBloomFilter.open(redis, { name: "blocked-bits", items: 5, fpRate: 0.5 });
    expect(again.geometry).toEqual(shared.geometry);
    expect(sum(await again.hasMany(keys))).toBe(keys.length);
    expect(JSON.parse(String(await redis.send(["GET", `${keyPrefix("blocked-bits")}meta`])))).toMatchObject({
      v: 1,
      kind: "blocked-bloom",
    });
    await expect(RedisBlockedBloomFilter.open(redis, { name: "same-bits", items: 5, fpRate: 0.5 })).rejects.toThrow(
      /field "kind" must be "blocked-bloom"/,
    );
  });

  it("reports a key new exactly once among concurrent callers", async () => {
    const keys = urls(5_000, "blocked-race");
    const a = await RedisBlockedBloomFilter.open(redis, { name: "blocked-race", items: 10_000, fpRate: 1e-4 });
    const b = await RedisBlockedBloomFilter.open(redis, { name: "blocked-race", items: 10_000, fpRate: 1e-4 });
    const [x, y] = await Promise.all([a.addMany(keys), b.addMany([...keys].reverse())]);
    const both = keys.filter((_, i) => x[i] === 1 && y[keys.length - 1 - i] === 1);
    expect(both).toEqual([]);
    expect(sum(x) + sum(y)).toBeGreaterThan(4_990); // a key may be a false positive of those before it
  });
});

describe("RedisDeduplicator", () => {
  it("counts references and removes at the last one", async () => {
    const dedup = new RedisDeduplicator(redis, { name: "refs" });
    const first = await dedup.checkMany(["a", "b", "a"]);
    expect(Array.from(first.isNew)).toEqual([1, 1, 0]);
    expect(Array.from(first.counts)).toEqual([1, 1, 2]);
    expect(await dedup.count("a")).toBe(2);
    expect(Array.from(await dedup.removeMany(["a", "a", "a", "zzz"]))).toEqual([1, 0, -1, -1]);
    expect(await dedup.check("a")).toEqual({ isNew: true, count: 1 });
  });

  it("check gives { isNew, count } as in memory and on disk, and counts past 255", async () => {
    // Reference: a Map of references, written here; each structure must agree with it key by key.
    const next = rng(18);
    const keys = Array.from({ length: 400 }, () => `k${Math.floor(next() * 60)}`);
    const held = new Map<string, number>();
    const expected = keys.map((k) => {
      const count = (held.get(k) ?? 0) + 1;
      held.set(k, count);
      return { isNew: count === 1, count };
    });
    const store = new StoreDeduplicator(openLmdbStore(mkdtempSync(join(tmpdir(), "crawlsieve-shape-"))), {
      items: 100,
    });
    const memory = new Deduplicator({ items: 100 });
    const plain = new RedisDeduplicator(redis, { name: "shape-plain" });
    const impcb = await RedisDeduplicator.open(redis, {
      name: "shape-impcb",
      countingFilter: { items: 100, fpRate: 0.01 },
    });
    const got = { memory: [] as unknown[], store: [] as unknown[], plain: [] as unknown[], impcb: [] as unknown[] };
    for (const key of keys) {
      got.memory.push(memory.check(key));
      got.store.push(store.check(key));
      got.plain.push(await plain.check(key));
      got.impcb.push(await impcb.check(key));
    }
    store.close();
    expect(got).toEqual({ memory: expected, store: expected, plain: expected, impcb: expected });
    // counts is a Uint32Array: 300 references to one key read back as 300, not 300 mod 256.
    for (const dedup of [plain, impcb]) {
      const many = await dedup.checkMany(Array(300).fill("many"));
      expect(many.counts).toBeInstanceOf(Uint32Array);
      expect(many.counts[299]).toBe(300);
    }
  });

  it("runs IMP-CB in Redis: new keys skip the store read, duplicates are found, counts are kept", async () => {
    const dedup = new RedisDeduplicator(redis, { name: "impcb", countingFilter: { items: 10_000, fpRate: 0.01 } });
    const keys = urls(5_000, "impcb");
    const first = await dedup.checkMany(keys);
    expect(sum(first.isNew)).toBe(keys.length);
    expect(dedup.stats.lookupsAvoided).toBeGreaterThan(4_900);
    const again = await dedup.checkMany([...keys.slice(0, 100), ...urls(100, "impcb-new")]);
    expect(Array.from(again.isNew)).toEqual([...Array(100).fill(0), ...Array(100).fill(1)]);
    expect(Array.from(again.counts.slice(0, 3))).toEqual([2, 2, 2]);
    expect(await dedup.count(keys[0])).toBe(2);
  });
});

describe("RedisDeduplicator with a counting filter never reports a recorded key new", () => {
  it("after keys recorded without the filter (the CLI's plain mode)", async () => {
    const lines = urls(5_000, "plain-then-filter");
    const cli = spawnSync(process.execPath, [CLI, "dedup", "--redis", server.url, "--namespace", "mixed"], {
      input: lines.join("\n") + "\n",
      maxBuffer: 1 << 24,
    });
    expect(cli.status, cli.stderr.toString()).toBe(0);
    const dedup = await RedisDeduplicator.open(redis, {
      name: "mixed",
      countingFilter: { items: 10_000, fpRate: 0.01 },
    });
    const first = await dedup.checkMany(lines);
    expect(sum(first.isNew)).toBe(0);
    expect(new Set(first.counts)).toEqual(new Set([2]));
    expect(dedup.stats.staleFilter).toBe(5_000);
    // The filter learned the keys it missed: now they are ordinary "maybe"s.
    const second = await dedup.checkMany(lines);
    expect(sum(second.isNew)).toBe(0);
    expect(dedup.stats.staleFilter).toBe(5_000);
    expect(await dedup.count(lines[0])).toBe(3);
  });

  it("between processes opened with different filter sizes: the first geometry is recorded and adopted", async () => {
    const keys = urls(5_000, "two-sizes");
    const big = new RedisDeduplicator(redis, { name: "sizes", countingFilter: { items: 50_000, fpRate: 0.001 } });
    expect(sum((await big.checkMany(keys)).isNew)).toBe(5_000);
    const small = new RedisDeduplicator(redis, { name: "sizes", countingFilter: { items: 1_000, fpRate: 0.1 } });
    const again = await small.checkMany(keys);
    expect(sum(again.isNew)).toBe(0);
    expect(new Set(again.counts)).toEqual(new Set([2]));
    expect(small.stats.staleFilter).toBe(0); // same counters: nothing was missed
    const meta = JSON.parse(String(await redis.send(["GET", `${keyPrefix("sizes")}cf:meta`])));
    expect(meta).toMatchObject({ v: 1, kind: "counting", counterBits: 4 });
  });

  it("after the filter was deleted, and refuses a forged description by name", async () => {
    const keys = urls(2_000, "deleted-filter");
    const dedup = await RedisDeduplicator.open(redis, {
      name: "deleted",
      countingFilter: { items: 10_000, fpRate: 0.01 },
    });
    expect(sum((await dedup.checkMany(keys)).isNew)).toBe(2_000);
    await redis.send(["DEL", `${keyPrefix("deleted")}cf`, `${keyPrefix("deleted")}cf:meta`]);
    expect(sum((await dedup.checkMany(keys)).isNew)).toBe(0);
    await redis.send([
      "SET",
      `${keyPrefix("forged")}cf:meta`,
      JSON.stringify({ v: 1, kind: "counting", slots: 2 ** 40, hashes: 7, counterBits: 4 }),
    ]);
    await expect(
      RedisDeduplicator.open(redis, { name: "forged", countingFilter: { items: 10, fpRate: 0.1 } }),
    ).rejects.toThrow(/field "slots" must be an integer from 1 to 134217728, got 1099511627776/);
  });
});

describe("withRecentCache in front of Redis", () => {
  it("gives the answers of the structure behind it, with fewer commands sent", async () => {
    let sent = 0;
    const counted: RedisCommander = { send: (args, options) => (sent++, redis.send(args, options)) };
    const lines = urls(3_000, "cached").flatMap((url, i) => (i % 3 === 0 ? [url, url, url] : [url]));
    const plain = new RedisDeduplicator(counted, { name: "cache-plain" });
    const cached = withRecentCache(new RedisDeduplicator(counted, { name: "cache-front" }), { entries: 8192 });
    const wrap = { addMany: async (keys: readonly string[]) => (await plain.checkMany(keys)).isNew };
    sent = 0;
    const expected: number[] = [];
    for (let i = 0; i < lines.length; i += 500) expected.push(...(await wrap.addMany(lines.slice(i, i + 500))));
    const plainCommands = sent;
    sent = 0;
    const got: number[] = [];
    for (let i = 0; i < lines.length; i += 500) got.push(...(await cached.addMany(lines.slice(i, i + 500))));
    expect(got).toEqual(expected);
    expect(sum(Uint8Array.from(got))).toBe(3_000);
    // One HINCRBY per distinct key, every repeat answered locally; each deduplicator also adopts
    // its store's recorded layout once (SET NX, GET).
    expect(sent).toBe(3_000 + 2);
    expect(plainCommands).toBe(lines.length + 2);
    const bloom = withRecentCache(
      await RedisBloomFilter.open(redis, { name: "cache-bloom", items: 10_000, fpRate: 1e-4 }),
      { entries: 8192 },
    );
    expect(sum(await bloom.addMany(lines))).toBe(3_000);
    expect(sum(await bloom.addMany(lines))).toBe(0);
    // First pass: the 2,000 repeats inside the call; second: most of 5,000 (a 2-way set holding a
    // third key evicts one, so a few go to Redis again, which answers "seen").
    expect(bloom.stats.hits).toBeGreaterThan(2_000 + 4_000);
  });
});

describe("RedisTimeWindowFilter records its slices' size", () => {
  it("a process with another itemsPerSlice reads the same bits; another window length is refused by name", async () => {
    const at = Date.now(); // Redis expires slices by its own clock: the test's must be near it
    const first = await RedisTimeWindowFilter.open(redis, {
      name: "win-desc",
      granularity: "day",
      slices: 7,
      itemsPerSlice: 50_000,
      fpRate: 0.001,
      now: () => at,
    });
    const keys = urls(3_000, "win-desc");
    expect(sum(await first.seenMany(keys))).toBe(0);
    const other = new RedisTimeWindowFilter(redis, {
      name: "win-desc",
      granularity: "day",
      slices: 7,
      itemsPerSlice: 10,
      fpRate: 0.2,
      now: () => at,
    });
    expect(sum(await other.hasMany(keys))).toBe(3_000);
    const longer = new RedisTimeWindowFilter(redis, {
      name: "win-desc",
      granularity: "day",
      slices: 30,
      itemsPerSlice: 50_000,
      fpRate: 0.001,
    });
    await expect(longer.hasMany(keys)).rejects.toThrow(
      /cs:\{win-desc\}:w:meta: field "slices" must be 30, as this process asked/,
    );
  });
});

describe("RedisCountingBloomFilter.open records its geometry", () => {
  it("a process opening it with another size adopts the first one's counters", async () => {
    const first = await RedisCountingBloomFilter.open(redis, { name: "cbf-desc", items: 20_000, fpRate: 0.001 });
    const keys = urls(2_000, "cbf-desc");
    expect(sum(await first.addMany(keys))).toBe(2_000);
    const second = await RedisCountingBloomFilter.open(redis, { name: "cbf-desc", items: 10, fpRate: 0.3 });
    expect(second.geometry).toEqual(first.geometry);
    expect(sum(await second.hasMany(keys))).toBe(2_000);
    expect(sum(await second.removeMany(keys))).toBe(2_000);
    expect(sum(await first.hasMany(keys))).toBeLessThan(20);
  });
});

describe("RedisBloomFilter refuses a description it cannot trust", () => {
  const forge = async (name: string, meta: unknown) => {
    await redis.send(["SET", `${keyPrefix(name)}meta`, typeof meta === "string" ? meta : JSON.stringify(meta)]);
    return RedisBloomFilter.open(redis, { name, items: 1000, fpRate: 0.01 });
  };
  it("with a typed error naming the field, before sizing anything from it", async () => {
    await expect(forge("zero-hashes", { kind: "bloom", slots: 9586, partitions: 1, hashes: 0 })).rejects.toThrow(
      /field "hashes" must be an integer from 1 to 64, got 0/,
    );
    await expect(forge("huge-slots", { kind: "bloom", slots: 4e12, partitions: 1, hashes: 7 })).rejects.toThrow(
      /field "slots" must be an integer/,
    );
    await expect(forge("many-shards", { kind: "bloom", slots: 64, partitions: 2 ** 31, hashes: 7 })).rejects.toThrow(
      /field "partitions"/,
    );
    // Every field in range, the product 4 TiB: past the 1 TiB bound of a filter in memory.
    await expect(
      forge("huge-product", { kind: "bloom", slots: 2 ** 29, partitions: 2 ** 16, hashes: 7 }),
    ).rejects.toThrow(
      /field "partitions" must be a count whose shards of 67108864 bytes hold at most 1099511627776 bytes/,
    );
    await expect(forge("not-json", "{nope")).rejects.toThrow(/not JSON/);
    await expect(forge("future", { v: 2, kind: "bloom", slots: 64, partitions: 1, hashes: 7 })).rejects.toThrow(
      /description version 2/,
    );
    await expect(forge("other-kind", { kind: "counting", slots: 64, partitions: 1, hashes: 7 })).rejects.toThrow(
      /field "kind"/,
    );
  });

  it("a filter larger than Redis has room for is refused before a shard is made, from options, a forged description or the CLI", async () => {
    const small = await startRedis(["--maxmemory", "64mb"]);
    const client = createClient({ url: small.url });
    await client.connect();
    try {
      const own = fromNodeRedis(client);
      // 1e9 keys at 0.1%: about 1.7 GB of bits against 64 MB.
      await expect(RedisBloomFilter.open(own, { name: "too-big", items: 1e9, fpRate: 0.001 })).rejects.toThrow(
        FilterTooLargeError,
      );
      await expect(RedisBloomFilter.open(own, { name: "too-big", items: 1e9, fpRate: 0.001 })).rejects.toThrow(
        /need more than the \d+ bytes Redis has free/,
      );
      // 67 bytes of description, every field in range: 64 shards of 64 MiB.
      await own.send([
        "SET",
        `${keyPrefix("forged-big")}meta`,
        JSON.stringify({ kind: "bloom", slots: 2 ** 29, partitions: 64, hashes: 7 }),
      ]);
      await expect(RedisBloomFilter.open(own, { name: "forged-big", items: 10, fpRate: 0.1 })).rejects.toThrow(
        FilterTooLargeError,
      );
      await expect(
        RedisCountingBloomFilter.open(own, { name: "too-big-counting", items: 1e9, fpRate: 0.001 }),
      ).rejects.toThrow(FilterTooLargeError);
      // Only the descriptions were written: no shard, no memory taken.
      expect((await own.send(["KEYS", "*"])) as string[]).toHaveLength(3);
      const cli = spawnSync(
        process.execPath,
        [CLI, "dedup", "--approx", "--items", "1e11", "--redis", small.url, "--namespace", "cli-too-big"],
        { input: "a\nb\n" },
      );
      expect(cli.status).toBe(2);
      expect(cli.stdout.toString()).toBe("");
      expect(cli.stderr.toString()).toMatch(/^crawlsieve: .*too large.*Redis has free.*\n$/);
      // A filter that fits is made as before.
      const fits = await RedisBloomFilter.open(own, { name: "fits", items: 100_000, fpRate: 0.001 });
      expect(sum(await fits.addMany(urls(1000, "fits")))).toBe(1000);
    } finally {
      await client.quit();
      await small.stop();
    }
  });

  it("and so does dedup --redis --approx: exit 2 with the field named, no line dropped silently", async () => {
    await redis.send([
      "SET",
      `${keyPrefix("cli-forged")}meta`,
      JSON.stringify({ kind: "bloom", slots: 9586, partitions: 1, hashes: 0 }),
    ]);
    const cli = spawnSync(
      process.execPath,
      [CLI, "dedup", "--approx", "--redis", server.url, "--namespace", "cli-forged"],
      { input: "a\nb\n" },
    );
    expect(cli.status).toBe(2);
    expect(cli.stdout.toString()).toBe("");
    expect(cli.stderr.toString()).toMatch(
      /cs:\{cli-forged\}:meta: field "hashes" must be an integer from 1 to 64, got 0/,
    );
  });

  it("keeps a local error local: it is not reported as Redis being unavailable", async () => {
    const local = fromSend(() => {
      throw new RangeError("Invalid array length");
    });
    const broken = fromSend(() => Promise.reject(new RangeError("Invalid string length")));
    await expect(local.send(["PING"])).rejects.toBeInstanceOf(RangeError);
    await expect(broken.send(["PING"])).rejects.toBeInstanceOf(RangeError);
  });
});

describe("RedisTimeWindowFilter", () => {
  it("keeps a key through the window and forgets it after, under a controllable clock; slices expire", async () => {
    let clock = Date.now();
    const day = 86_400_000;
    const window = new RedisTimeWindowFilter(redis, {
      name: "week",
      granularity: "day",
      slices: 7,
      itemsPerSlice: 1000,
      fpRate: 1e-6,
      now: () => clock,
    });
    const start = clock;
    expect(await window.seen("https://x/1")).toBe(false);
    expect(await window.seen("https://x/1")).toBe(true);
    const dayStart = Math.floor(start / day) * day;
    for (const offset of [1, 3 * day, 6 * day]) {
      clock = dayStart + offset;
      expect(await window.has("https://x/1"), `+${offset}`).toBe(true);
    }
    clock = dayStart + 7 * day;
    expect(await window.has("https://x/1")).toBe(false);
    expect(await window.seen("https://x/1")).toBe(false);
    const ttl = Number(await redis.send(["PTTL", window.sliceKey(Math.floor(start / day))]));
    expect(ttl).toBeGreaterThan(6 * day);
    expect(ttl).toBeLessThanOrEqual(8 * day);
    clock = dayStart - 30 * day; // a clock jumping back sees only its own window
    expect(await window.has("https://x/1")).toBe(false);
  });

  it("add/addMany record every key now, refreshing its age, and answer as TimeWindowFilter does over random days", async () => {
    const day = 86_400_000;
    const start = Math.floor(Date.now() / day) * day;
    const options = { granularity: "day" as const, slices: 5, itemsPerSlice: 2_000, fpRate: 1e-4 };
    const shared = new RedisTimeWindowFilter(redis, { name: "win-add", ...options });
    const local = new TimeWindowFilter(options);
    const pool = urls(300, "win-add");
    const random = rng(17);
    let t = start;
    for (let step = 0; step < 60; step++) {
      // Mostly the same day, sometimes a day or three later: keys age out unless added again.
      t += random() < 0.7 ? 1_000 : day * (1 + Math.floor(random() * 3));
      const keys = Array.from({ length: 40 }, () => pool[Math.floor(random() * pool.length)]);
      const how = random();
      if (how < 0.5) expect(await shared.addMany(keys, t), `step ${step}`).toEqual(local.addMany(keys, t));
      else if (how < 0.8) expect(await shared.seenMany(keys, t), `step ${step}`).toEqual(local.seenMany(keys, t));
      else expect(await shared.hasMany(keys, t), `step ${step}`).toEqual(local.hasMany(keys, t));
    }
    // add refreshes: a key added again on day 4 is still there on day 8, one recorded once with seen is not.
    t += 30 * day;
    expect(await shared.add("refreshed", t)).toBe(true);
    expect(await shared.seen("once", t)).toBe(false);
    expect(await shared.add("refreshed", t + 4 * day)).toBe(false);
    expect(await shared.seen("once", t + 4 * day)).toBe(true);
    expect(await shared.has("refreshed", t + 8 * day)).toBe(true);
    expect(await shared.has("once", t + 8 * day)).toBe(false);
    local.dispose();
  });
});

describe("Scrapy-Redis interop", () => {
  const request = { method: "GET", url: "https://example.com/a?b=2&a=1" };

  it("adds scrapy-redis fingerprints to the SET dupefilter", async () => {
    const filter = new ScrapyRedisDupeFilter(redis, { key: "spider:dupefilter" });
    expect(await filter.requestSeen(request)).toBe(false);
    expect(await filter.requestSeen({ ...request, url: "https://example.com/a?a=1&b=2" })).toBe(true);
    const members = ((await redis.send(["SMEMBERS", "spider:dupefilter"])) as Buffer[]).map(String);
    expect(members).toEqual([requestFingerprint(request, { algorithm: "scrapy-redis" })]);
  });

  it("computes the ScrapyRedisBloomFilter offsets as the Python code does (arbitrary-precision reference)", async () => {
    const bloom = new ScrapyRedisBloomFilter(redis, { key: "spider2:dupefilter", bit: 30, hashNumber: 6 });
    const fp = requestFingerprint(request, { algorithm: "scrapy-redis" });
    const python = Array.from({ length: 6 }, (_, seed) => {
      let ret = 0n;
      for (const ch of fp) ret += BigInt(seed) * ret + BigInt(ch.charCodeAt(0));
      return Number(ret & ((1n << 30n) - 1n));
    });
    expect(bloom.offsets(fp)).toEqual(python);
    expect(await bloom.requestSeen(request)).toBe(false);
    expect(await bloom.requestSeen(request)).toBe(true);
    for (const offset of python)
      expect(Number(await redis.send(["GETBIT", "spider2:dupefilter", String(offset)]))).toBe(1);
  });
});

/** Streams 400,000 lines through `dedup --redis` and SIGKILLs the server once 20,000 are printed. */
async function dedupUntilRedisDies(
  target: RedisServer,
  args: string[],
  host: string,
): Promise<{ code: number | null; printed: string; err: string }> {
  const lines = Array.from({ length: 400_000 }, (_, i) => `https://${host}.example/${i}`).join("\n") + "\n";
  const child = spawn(process.execPath, [CLI, "dedup", "--redis", target.url, ...args]);
  let printed = "";
  let err = "";
  child.stdout.on("data", (d) => (printed += d));
  child.stderr.on("data", (d) => (err += d));
  child.stdin.on("error", () => undefined);
  child.stdin.end(lines);
  while (printed.split("\n").length < 20_000) await new Promise((r) => setTimeout(r, 20));
  await target.kill();
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, printed, err };
}

describe("Redis going away", () => {
  it("the CLI stops with a typed error, and after a restart nothing it printed is forgotten", async () => {
    const { code, printed, err } = await dedupUntilRedisDies(server, ["--namespace", "killed"], "killed");
    expect(code).toBe(2);
    expect(err).toMatch(/Redis is unavailable/);
    await server.restart();
    const c = createClient({ url: server.url });
    await c.connect();
    const dedup = new RedisDeduplicator(fromNodeRedis(c), { name: "killed" });
    const got = printed.split("\n").filter((l) => l !== "");
    expect(got.length).toBeGreaterThan(10_000);
    const counts = await Promise.all(got.map((line) => dedup.count(line)));
    expect(counts.filter((n) => n < 1)).toEqual([]);
    await c.quit();
    // Reconnect the shared client for the rest of the file.
    client = createClient({ url: server.url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
    client.on("error", () => undefined);
    await client.connect();
    redis = fromNodeRedis(client);
  }, 180_000);

  it.each([
    ["exact", []],
    ["Bloom", ["--approx"]],
  ])(
    "dedup --redis --window (%s): Redis killed mid-stream ends the CLI with exit 2 and one line, no stack; nothing printed is forgotten",
    async (kind, extra) => {
      const own = await startRedis();
      try {
        const { code, printed, err } = await dedupUntilRedisDies(
          own,
          [...extra, "--namespace", "wk", "--window", "7d"],
          "window-killed",
        );
        expect(code, err).toBe(2);
        expect(err).toMatch(/^crawlsieve: Redis is unavailable/);
        expect(err).not.toMatch(/\n\s+at /);
        await own.restart();
        const c = createClient({ url: own.url });
        await c.connect();
        try {
          const window =
            kind === "exact"
              ? await RedisWindowedSeenSet.open(fromNodeRedis(c), { name: "wk", ttl: "7d" })
              : new RedisTimeWindowFilter(fromNodeRedis(c), {
                  name: "wk",
                  granularity: "day",
                  slices: 7,
                  itemsPerSlice: 1_000_000,
                  fpRate: 0.001,
                });
          const got = printed.split("\n").filter((l) => l !== "");
          expect(got.length).toBeGreaterThan(10_000);
          expect(sum(await window.hasMany(got))).toBe(got.length);
        } finally {
          await c.quit();
        }
      } finally {
        await own.stop();
      }
    },
    180_000,
  );

  it("a command Redis refuses ends the CLI with a message naming it, without hanging", async () => {
    await redis.send(["RPUSH", "cs:{wrongtype}:meta", "not a description"]);
    const result = spawnSync(
      process.execPath,
      [CLI, "dedup", "--approx", "--redis", server.url, "--namespace", "wrongtype"],
      { input: "https://a/\n", encoding: "utf8", timeout: 120_000 },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/Redis refused GET: WRONGTYPE/);
  }, 120_000);

  it("a command to a dead server fails with RedisUnavailableError instead of hanging", async () => {
    const dead = await startRedis();
    const c = createClient({ url: dead.url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
    c.on("error", () => undefined);
    await c.connect();
    await dead.kill();
    const filter = new RedisDeduplicator(fromNodeRedis(c, { timeoutMs: 2000 }), { name: "dead" });
    await expect(filter.check("x")).rejects.toBeInstanceOf(RedisUnavailableError);
    await dead.stop();
  }, 120_000);
});
