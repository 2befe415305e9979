// Distributed dedup against a local redis-server (started here on a free loopback port, no
// persistence, so the client and the commands are what is measured). Keys per second for one
// client: crawlsieve RedisBloomFilter (batches, one BITFIELD per shard per 256 keys, pipelined)
// and RedisDeduplicator (exact, HINCRBY per key, pipelined) against what Python fleets do today:
// scrapy-redis's dupefilter (one SADD per request, waited for) and ScrapyRedisBloomFilter (k
// GETBITs then k SETBITs per request, each waited for). Then Redis memory per key (INFO memory)
// after 1e6 keys at p = 1e-4 against the SADD dupefilter.
import { createClient } from "redis";
import { initSync, requestFingerprint } from "../build/js/index.node.js";
import { fromNodeRedis, RedisBloomFilter, RedisDeduplicator, ScrapyRedisBloomFilter } from "../build/js/redis/index.js";
import { millions, startRedis, table, urlKeys } from "./common.js";

initSync();

async function usedMemory(redis) {
  const info = String(await redis.send(["INFO", "memory"]));
  return Number(/used_memory:(\d+)/.exec(info)[1]);
}

async function rate(count, fn) {
  const started = performance.now();
  await fn();
  return count / ((performance.now() - started) / 1000);
}

/** Throughput and memory tables. */
export async function redisSuite(n = 1_000_000) {
  const server = await startRedis();
  const client = createClient({ url: server.url });
  await client.connect();
  const redis = fromNodeRedis(client, { timeoutMs: 60_000 });
  const keys = urlKeys(n, "redis");
  const throughputKeys = keys.slice(0, 200_000);
  const slowKeys = keys.slice(0, 5_000);
  const BATCH = 4096;
  const rows = [];
  const bloom = await RedisBloomFilter.open(redis, { name: "bench-bloom", items: n, fpRate: 1e-4 });
  const ours = await rate(throughputKeys.length, async () => {
    for (let i = 0; i < throughputKeys.length; i += BATCH) await bloom.addMany(throughputKeys.slice(i, i + BATCH));
  });
  const exact = new RedisDeduplicator(redis, { name: "bench-exact" });
  const oursExact = await rate(throughputKeys.length, async () => {
    for (let i = 0; i < throughputKeys.length; i += BATCH) await exact.checkMany(throughputKeys.slice(i, i + BATCH));
  });
  const fingerprints = slowKeys.map((url) => requestFingerprint({ url }, { algorithm: "scrapy-redis" }));
  const sadd = await rate(slowKeys.length, async () => {
    for (const fp of fingerprints) await redis.send(["SADD", "bench:dupefilter", fp]);
  });
  const saddPipelined = await rate(throughputKeys.length, async () => {
    for (let i = 0; i < throughputKeys.length; i += BATCH)
      await Promise.all(
        throughputKeys.slice(i, i + BATCH).map((key) => redis.send(["SADD", "bench:dupefilter2", key])),
      );
  });
  const python = new ScrapyRedisBloomFilter(redis, { key: "bench:bloomfilter", bit: 30, hashNumber: 6 });
  const getsetbit = await rate(slowKeys.length, async () => {
    for (const fp of fingerprints) {
      const offsets = python.offsets(fp);
      let all = 1;
      for (const o of offsets) all &= Number(await redis.send(["GETBIT", "bench:bloomfilter", String(o)]));
      if (!all) for (const o of offsets) await redis.send(["SETBIT", "bench:bloomfilter", String(o), "1"]);
    }
  });
  rows.push([
    `crawlsieve RedisBloomFilter.addMany (p = 1e-4, k = ${bloom.geometry.hashes})`,
    `${BATCH}`,
    Math.round(ours).toLocaleString("en-US"),
    "1.00",
  ]);
  rows.push([
    "crawlsieve RedisDeduplicator.checkMany (exact, MD5)",
    `${BATCH}`,
    Math.round(oursExact).toLocaleString("en-US"),
    (ours / oursExact).toFixed(2),
  ]);
  rows.push([
    "scrapy-redis style: SADD per request, waited for",
    "1",
    Math.round(sadd).toLocaleString("en-US"),
    (ours / sadd).toFixed(1),
  ]);
  rows.push([
    "SADD pipelined (not what scrapy-redis does)",
    `${BATCH}`,
    Math.round(saddPipelined).toLocaleString("en-US"),
    (ours / saddPipelined).toFixed(2),
  ]);
  rows.push([
    "ScrapyRedisBloomFilter style: k GETBIT then k SETBIT, each waited for",
    "1",
    Math.round(getsetbit).toLocaleString("en-US"),
    (ours / getsetbit).toFixed(0),
  ]);
  await redis.send(["FLUSHALL"]);

  // Memory per key after n keys.
  const memoryRows = [];
  const base = await usedMemory(redis);
  const filled = await RedisBloomFilter.open(redis, { name: "mem-bloom", items: n, fpRate: 1e-4 });
  for (let i = 0; i < n; i += BATCH) await filled.addMany(keys.slice(i, i + BATCH));
  const bloomBytes = (await usedMemory(redis)) - base;
  await redis.send(["FLUSHALL"]);
  const base2 = await usedMemory(redis);
  for (let i = 0; i < n; i += BATCH)
    await Promise.all(
      keys
        .slice(i, i + BATCH)
        .map((url) =>
          redis.send(["SADD", "mem:dupefilter", requestFingerprint({ url }, { algorithm: "scrapy-redis" })]),
        ),
    );
  const saddBytes = (await usedMemory(redis)) - base2;
  await redis.send(["FLUSHALL"]);
  const base3 = await usedMemory(redis);
  const store = new RedisDeduplicator(redis, { name: "mem-exact" });
  for (let i = 0; i < n; i += BATCH) await store.checkMany(keys.slice(i, i + BATCH));
  const exactBytes = (await usedMemory(redis)) - base3;
  memoryRows.push([
    "crawlsieve RedisBloomFilter, p = 1e-4",
    (bloomBytes / n).toFixed(2),
    (bloomBytes / saddBytes).toFixed(3),
  ]);
  memoryRows.push([
    "crawlsieve RedisDeduplicator (exact, 14-byte fields in 65,536 hashes)",
    (exactBytes / n).toFixed(1),
    (exactBytes / saddBytes).toFixed(2),
  ]);
  memoryRows.push(["scrapy-redis SADD dupefilter (40-hex SHA1 per request)", (saddBytes / n).toFixed(1), "1.000"]);
  await client.quit();
  server.stop();
  return [
    `### Redis: keys per second for one client (local redis-server ${String((await import("node:child_process")).execSync("redis-server --version")).match(/v=(\S+)/)[1]}, loopback)\n`,
    table(["method", "batch", "keys/s", "crawlsieve Bloom / this"], rows),
    "",
    `### Redis memory per key after ${millions(n)} M keys (INFO memory used_memory)\n`,
    table(["structure", "bytes per key", "/ SADD dupefilter"], memoryRows),
    "",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`)
  console.log(await redisSuite(Number(process.env.REDIS_KEYS ?? 1e6)));
