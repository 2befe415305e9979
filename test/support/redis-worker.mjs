// One crawler process for the concurrency test: opens the shared structure and checks its keys
// in batches, then prints the keys it was the one to see first as a JSON array.
// Usage: node redis-worker.mjs URL MODE NAME FROM TO   (URL: one server, or a JSON array of cluster nodes)
import { createClient, createCluster } from "redis";
import { initSync } from "../../build/js/index.node.js";
import { fromNodeRedis, RedisBloomFilter, RedisDeduplicator } from "../../build/js/redis/index.js";

initSync();
const [url, mode, name, from, to] = process.argv.slice(2);
const client = url.startsWith("[")
  ? createCluster({ rootNodes: JSON.parse(url).map((u) => ({ url: u })), defaults: { disableOfflineQueue: true, socket: { reconnectStrategy: false } } })
  : createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
await client.connect();
const redis = fromNodeRedis(client);
const keys = [];
for (let i = Number(from); i < Number(to); i++) keys.push(`https://shared.example/page/${i}`);
// Each process walks its range in its own order, so processes race on the overlaps.
keys.sort(() => Math.random() - 0.5);
const fresh = [];
const structure = mode === "exact"
  ? new RedisDeduplicator(redis, { name })
  : mode === "impcb"
    ? new RedisDeduplicator(redis, { name, countingFilter: { items: 50_000, fpRate: 0.01 } })
    : await RedisBloomFilter.open(redis, { name, items: 50_000, fpRate: 0.001 });
for (let i = 0; i < keys.length; i += 500) {
  const batch = keys.slice(i, i + 500);
  const flags = mode === "bloom" ? await structure.addMany(batch) : (await structure.checkMany(batch)).isNew;
  batch.forEach((key, j) => flags[j] === 1 && fresh.push(key));
}
process.stdout.write(JSON.stringify(fresh));
await client.close();
