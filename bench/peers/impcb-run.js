// One contender of bench/impcb.bench.js in its own process (so its peak RSS is its own). The set
// starts holding STORED old keys (memory and Redis: added here, untimed; disk: the store the driver
// filled); the timed stream is N keys in batches of 4,096, a share REPEATS of them old keys (each
// once, spread over the old ones) and the rest new keys, shuffled. Prints one JSON line: wall and
// CPU seconds of the stream, new keys counted, store reads made and avoided, filter bits a key, RSS
// (after the keys were made, and the peak from then on).
// After the stream a disk store is put back as it was (untimed): the new keys removed again.
// usage: node bench/peers/impcb-run.js TIER CONTENDER REPEATS N STORED [DIR | REDIS_URL | REAL_KEYS_FILE]
//        node bench/peers/impcb-run.js fill lmdb-impcb|lmdb-plain|disk-impcb|disk N DIR STREAM   (the filter planned for N + STREAM keys)
import { readFileSync, writeFileSync } from "node:fs";
import {
  Deduplicator,
  FingerprintSet,
  initSync,
  openDiskDeduplicator,
  openDiskSeenSet,
  openLmdbStore,
  optimalBloom,
  StoreDeduplicator,
} from "../../build/js/index.node.js";
import { urlKeys, xorshift32 } from "../common.js";

initSync();
const BATCH = 4096;
const FP_RATE = 0.01;
/** The disk seen-set's budget when it has one: the least it takes, so 1e6 stored keys stay on disk. */
const DISK_MEMORY = 16 * 2 ** 20;
const [tier, contender, ...rest] = process.argv.slice(2);

/** Resident and peak resident set, MiB (/proc/self/status). */
function rss() {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]);
  return { now: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

const batches = (keys) =>
  Array.from({ length: Math.ceil(keys.length / BATCH) }, (_, b) => keys.slice(b * BATCH, (b + 1) * BATCH));

/** IMP-CB's counting filter sized for `items` keys at FP_RATE, given as counters and hashes (4-bit counters). */
function filterFor(items) {
  const { bits, hashes } = optimalBloom({ items, fpRate: FP_RATE });
  return { counters: bits, hashes };
}

if (tier === "fill") {
  // The disk tier's store of N old keys, made once by the driver (untimed).
  const [n, dir, streamKeys] = [Number(rest[0]), rest[1], Number(rest[2])];
  const old = urlKeys(n, "old");
  if (contender === "disk") {
    const set = await openDiskSeenSet(dir, { items: n, durable: false });
    for (const batch of batches(old)) await set.addMany(batch);
    await set.close();
  } else if (contender === "disk-impcb") {
    const dedup = await openDiskDeduplicator(dir, { items: n + streamKeys, fpRate: FP_RATE, durable: false });
    for (const batch of batches(old)) await dedup.checkMany(batch);
    await dedup.close();
  } else {
    const dedup = new StoreDeduplicator(
      openLmdbStore(dir, { durable: false }),
      contender === "lmdb-plain" ? { items: n, counters: 1, hashes: 1 } : { items: n, ...filterFor(n + streamKeys) },
    );
    for (const batch of batches(old)) dedup.checkMany(batch);
    dedup.close();
  }
  console.log(JSON.stringify({ filled: n }));
  process.exit(0);
}

const repeats = Number(rest[0]);
let n = Number(rest[1]);
let stored = Number(rest[2]);
const where = rest[3];

// The keys: generated URLs (bench/common.js urlKeys, 60-100 bytes), or real ones read from a file
// (then the first half of its lines are the old keys and the second half the new ones).
let old;
let fresh;
if (where !== undefined && where.endsWith(".txt")) {
  const lines = readFileSync(where, "latin1").split("\n").filter(Boolean);
  const half = lines.length >> 1;
  old = lines.slice(0, half);
  fresh = lines.slice(half, 2 * half);
  n = Math.min(n, half);
  stored = half;
} else {
  old = urlKeys(stored, "old");
  fresh = urlKeys(Math.round(n * (1 - repeats)), "new");
}
const oldUsed = Math.round(n * repeats);
const newUsed = n - oldUsed;
const stream = [
  ...fresh.slice(0, newUsed),
  ...Array.from({ length: oldUsed }, (_, j) => old[Math.floor((j * stored) / oldUsed)]),
];
const random = xorshift32(0x1234567);
for (let i = stream.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [stream[i], stream[j]] = [stream[j], stream[i]];
}
const streamBatches = batches(stream);
const distinct = stored + newUsed;
// The keys' RSS, after a full collection (the runner is started with --expose-gc) drops the texts they were split from.
// The peak is reset then (clear_refs 5, Linux), so the peak reported is the contender's and its keys', not the texts'.
// (Peak less this RSS is no measure of the contender alone: V8 hands freed pages back lazily, and it read 0 where a table grew.)
globalThis.gc?.();
writeFileSync("/proc/self/clear_refs", "5");
const beforeContender = rss();

/** Each contender: make (and preload), check one batch (-> count of new keys), stats after. */
async function contenderOf(name) {
  switch (name) {
    case "deduplicator": {
      const d = new Deduplicator({ items: distinct });
      for (const b of batches(old)) d.checkMany(b);
      const at = d.stats;
      return {
        check: (b) => count(d.checkMany(b).isNew),
        stats: () => ({
          reads: d.stats.lookups - at.lookups,
          avoided: d.stats.lookupsAvoided - at.lookupsAvoided,
          filterBits: (d.filter.counters * d.filter.counterBits) / distinct,
        }),
      };
    }
    case "deduplicator-plain": {
      const d = new Deduplicator({ items: distinct, counters: 1, hashes: 1 });
      for (const b of batches(old)) d.checkMany(b);
      const at = d.stats;
      return {
        check: (b) => count(d.checkMany(b).isNew),
        stats: () => ({ reads: d.stats.lookups - at.lookups, avoided: d.stats.lookupsAvoided - at.lookupsAvoided }),
      };
    }
    case "fingerprint-set": {
      const s = new FingerprintSet({ items: distinct });
      for (const b of batches(old)) s.addMany(b);
      return { check: (b) => count(s.addMany(b)), stats: () => ({ reads: n }) };
    }
    case "js-set": {
      const s = new Set(old);
      return {
        check: (b) => {
          let added = 0;
          for (const k of b) {
            const size = s.size;
            s.add(k);
            added += s.size - size;
          }
          return added;
        },
        stats: () => ({ reads: n }),
      };
    }
    case "lmdb-impcb":
    case "lmdb-plain": {
      const t = performance.now();
      const d = new StoreDeduplicator(openLmdbStore(where), { items: distinct });
      const open = (performance.now() - t) / 1000;
      return {
        open,
        check: (b) => count(d.checkMany(b).isNew),
        stats: () => ({
          reads: d.stats.lookups,
          avoided: d.stats.lookupsAvoided,
          filterBits: name === "lmdb-impcb" ? (4 * filterFor(stored + n).counters) / distinct : undefined,
          covers: d.filterCoversStore,
        }),
        restore: () => {
          for (const b of batches(fresh.slice(0, newUsed))) d.removeMany(b, { all: true });
          for (const b of batches(stream.filter((k) => k.includes("/old/")))) d.removeMany(b);
          d.close();
        },
      };
    }
    case "disk-impcb": {
      const t = performance.now();
      const d = await openDiskDeduplicator(where, { items: stored + n, fpRate: FP_RATE });
      const open = (performance.now() - t) / 1000;
      const before = d.stats;
      return {
        open,
        check: async (b) => count((await d.checkMany(b)).isNew),
        stats: () => ({
          reads: d.stats.lookups - before.lookups,
          avoided: d.stats.lookupsAvoided - before.lookupsAvoided,
          filterBits: (d.filter.counters * d.filter.counterBits) / distinct,
        }),
        restore: async () => {
          for (const b of batches(fresh.slice(0, newUsed))) await d.removeMany(b, { all: true });
          for (const b of batches(stream.filter((k) => k.includes("/old/")))) await d.removeMany(b);
          await d.close();
        },
      };
    }
    case "disk":
    case "disk-budget": {
      const t = performance.now();
      const s = await openDiskSeenSet(where, name === "disk-budget" ? { memory: DISK_MEMORY } : {});
      await s.size();
      const open = (performance.now() - t) / 1000;
      const at = { asked: s.stats.diskLookups ?? 0, blocks: s.stats.diskBlocksRead ?? 0 };
      return {
        open,
        check: async (b) => count(await s.addMany(b)),
        stats: () =>
          name === "disk"
            ? { reads: 0, diskLookups: 0, blocksRead: 0 }
            : {
                diskLookups: s.stats.diskLookups - at.asked,
                blocksRead: s.stats.diskBlocksRead - at.blocks,
                reads: s.stats.diskBlocksRead - at.blocks,
                avoided: n - (s.stats.diskBlocksRead - at.blocks),
                // cold-keys.ts: the filter takes half the budget, 8 to 16 bits a key of the sorted part.
                filterBits: Math.min(16, Math.max(8, (4 * DISK_MEMORY) / stored)),
              },
        restore: async () => {
          for (const b of batches(fresh.slice(0, newUsed))) await s.removeMany(b);
          await s.close();
        },
      };
    }
    default:
      return redisContender(name);
  }
}

function count(flags) {
  let c = 0;
  for (let i = 0; i < flags.length; i++) c += flags[i];
  return c;
}

/** The Redis contenders, on the server at `where` (emptied first); commands and round trips counted at the client. */
async function redisContender(name) {
  const { createClient } = await import("redis");
  const { fromNodeRedis, RedisDeduplicator } = await import("../../build/js/redis/index.js");
  const client = createClient({ url: where });
  await client.connect();
  const inner = fromNodeRedis(client, { timeoutMs: 120_000 });
  // Commands sent, and client writes: commands sent in the same tick are pipelined (one write, one wait).
  const sent = { commands: 0, trips: 0 };
  let inTick = false;
  const redis = {
    send: (args, options) => {
      sent.commands++;
      if (!inTick) {
        inTick = true;
        sent.trips++;
        setImmediate(() => (inTick = false));
      }
      return inner.send(args, options);
    },
  };
  await redis.send(["FLUSHALL"]);
  let check;
  let dedup;
  if (name === "redis-sadd") {
    check = async (b) => {
      const replies = await Promise.all(b.map((k) => redis.send(["SADD", "bench:seen", k])));
      return replies.reduce((s, r) => s + Number(r), 0);
    };
  } else {
    dedup = await RedisDeduplicator.open(redis, {
      name: "bench",
      ...(name === "redis-impcb" ? { countingFilter: { items: distinct, fpRate: FP_RATE } } : {}),
    });
    check = async (b) => count((await dedup.checkMany(b)).isNew);
  }
  for (const b of batches(old)) await check(b);
  const info = async (section) => String(await inner.send(["INFO", section]));
  const serverCpu = async () => {
    const text = await info("cpu");
    return Number(/used_cpu_user:([\d.]+)/.exec(text)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(text)[1]);
  };
  const commandCalls = async () => {
    const calls = {};
    for (const [, cmd, c] of (await info("commandstats")).matchAll(/cmdstat_([\w|]+):calls=(\d+)/g))
      calls[cmd] = Number(c);
    return calls;
  };
  let at;
  return {
    begin: async () => {
      at = {
        sent: { ...sent },
        cpu: await serverCpu(),
        calls: await commandCalls(),
        stats: { ...(dedup?.stats ?? {}) },
      };
    },
    check,
    stats: async () => {
      const cpu = (await serverCpu()) - at.cpu;
      const calls = await commandCalls();
      const server = {};
      for (const [cmd, c] of Object.entries(calls))
        if (c - (at.calls[cmd] ?? 0) > 0 && cmd !== "info") server[cmd] = c - (at.calls[cmd] ?? 0);
      const filterBytes = name === "redis-impcb" ? Number(await inner.send(["STRLEN", "cs:{bench}:cf"])) : 0;
      const out = {
        commands: sent.commands - at.sent.commands,
        trips: sent.trips - at.sent.trips,
        serverCpu: cpu,
        server,
        reads: name === "redis-impcb" ? dedup.stats.lookups - at.stats.lookups : n,
        avoided: name === "redis-impcb" ? dedup.stats.lookupsAvoided - at.stats.lookupsAvoided : undefined,
        filterBits: name === "redis-impcb" ? (8 * filterBytes) / distinct : undefined,
      };
      await client.quit();
      return out;
    },
  };
}

const c = await contenderOf(contender);
await c.begin?.();
const memoryBefore = rss();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let added = 0;
for (const b of streamBatches) added += await c.check(b);
const wall = (performance.now() - t0) / 1000;
const used = process.cpuUsage(cpu0);
const stats = await c.stats();
const memoryAfter = rss();
await c.restore?.();
console.log(
  JSON.stringify({
    n,
    stored,
    expectedNew: newUsed,
    added,
    wall,
    cpu: (used.user + used.system) / 1e6,
    open: c.open,
    ...stats,
    rssKeys: beforeContender.now,
    rssBeforeStream: memoryBefore.now,
    peakRss: memoryAfter.peak,
  }),
);
