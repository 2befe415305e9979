// Writes the golden files once. They are committed and must load forever: never regenerate them
// to make a test pass; a format change gets a new version and new golden files beside these.
// Usage: node test/golden/make-golden.js
import { existsSync, writeFileSync } from "node:fs";
import { AgePartitionedFilter, IdfTable, MinHashIndex, NearDupFilter, NearDupIndex, simhashMany, BlockedBloomFilter, BloomFilter, CountingBloomFilter, MultiDimBloomFilter, ScalableBloomFilter, TimeWindowFilter, initSync } from "../../build/js/index.node.js";

initSync();
const keys = Array.from({ length: 1000 }, (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`);
const out = (name, filter) => {
  const file = new URL(name, import.meta.url);
  if (existsSync(file)) return; // written once, kept forever
  if (filter.addMany) filter.addMany(keys);
  else filter.seenMany(keys);
  writeFileSync(file, filter.serialize());
};
out("bloom-v1.bin", new BloomFilter({ items: 1000, fpRate: 0.01 }));
out("partitioned-bloom-v1.bin", new BloomFilter({ items: 1000, fpRate: 0.01, maxPartitionBytes: 256 }));
out("blocked-bloom-v1.bin", new BlockedBloomFilter({ items: 1000, fpRate: 0.01 }));
out("scalable-bloom-v1.bin", new ScalableBloomFilter({ fpRate: 0.01, initialItems: 300 }));
out("counting-bloom-v1.bin", new CountingBloomFilter({ items: 1000, fpRate: 0.01 }));
// Windows at a fixed instant: 2026-01-01T00:00Z (the tests query at the same instant).
const instant = () => Date.UTC(2026, 0, 1);
out("time-window-v1.bin", new TimeWindowFilter({ granularity: "hour", slices: 24, itemsPerSlice: 1000, fpRate: 0.01, now: instant }));
out("age-partitioned-v1.bin", new AgePartitionedFilter({ items: 1000, fpRate: 0.01 }));
out("multi-dim-v1.bin", new MultiDimBloomFilter({ groups: 4, bits: 4096, hashes: 4 }));
// SimHash: an index of the golden keys' fingerprints (id = key number), and an IDF table over them.
const goldenIndex = new URL("near-dup-index-v1.bin", import.meta.url);
if (!existsSync(goldenIndex)) {
  const index = new NearDupIndex({ layout: 10 });
  index.addMany(keys.map((_, i) => i), simhashMany(keys, { shingle: 1 }));
  writeFileSync(goldenIndex, index.serialize());
}
const goldenIdf = new URL("idf-v1.bin", import.meta.url);
if (!existsSync(goldenIdf)) writeFileSync(goldenIdf, IdfTable.build(keys, { shingle: 1 }).serialize());
// MinHash: the first 200 golden keys' sketches (id = key number), 64 values each, LSH for threshold 0.8.
const goldenMinHash = new URL("minhash-index-v1.bin", import.meta.url);
if (!existsSync(goldenMinHash)) {
  const index = new MinHashIndex({ threshold: 0.8, sketchSize: 64 });
  index.addMany(keys.slice(0, 200).map((_, i) => i), keys.slice(0, 200));
  writeFileSync(goldenMinHash, index.serialize());
}
// Near-duplicate filter: the golden keys as texts, 13 bands of 3 rows (threshold 0.8) for 1000 texts at 0.01.
out("near-dup-filter-v1.bin", new NearDupFilter({ items: 1000, fpRate: 0.01, threshold: 0.8, bands: 13, rows: 3 }));
// Redis shards: exportBytes() of a RedisBloomFilter over several shards, written only when a
// server is named (REDIS_URL=redis://127.0.0.1:6379 node test/golden/make-golden.js).
const goldenRedis = new URL("redis-bloom-v1.bin", import.meta.url);
if (!existsSync(goldenRedis) && process.env.REDIS_URL) {
  const { createClient } = await import("redis");
  const { fromNodeRedis, RedisBloomFilter } = await import("../../build/js/redis/index.js");
  const client = createClient({ url: process.env.REDIS_URL });
  await client.connect();
  const filter = await RedisBloomFilter.open(fromNodeRedis(client), { name: `golden-${Date.now()}`, items: 1000, fpRate: 0.01, maxShardBytes: 256 });
  await filter.addMany(keys);
  writeFileSync(goldenRedis, await filter.exportBytes());
  await filter.destroy();
  await client.quit();
}
