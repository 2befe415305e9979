// Seen-sets in Redis on a crawl-order stream, one node against a three-master cluster (both
// started here on loopback): keys per second for one client, Redis CPU and memory per key, for
// pipelined SADD (what a user who cares for speed keeps), RedisBloomFilter (p = 1e-4; BITFIELD
// text, reads first and sets only the keys not all set; its default k = 5 and with k = 13, the
// least-memory sizing) and RedisBlockedBloomFilter (p = 1e-4; binary records, one script call a shard),
// RedisDeduplicator (exact), and each of the two behind withRecentCache. Streams: the shipped
// example (Node's API documentation links in page order) and a generated crawl-order stream
// (sites whose every page repeats the site's navigation, about 89% duplicates). Methods run in
// alternating order, three rounds; the median is reported, with the client's CPU seconds.
// usage: flock /tmp/cs-bench.lock node bench/redis-cluster.bench.js   (CRAWL_LINES=1e6 by default;
// TOPOLOGY=one or cluster runs one of the two)
import { readFileSync } from "node:fs";
import { createClient, createCluster } from "redis";
import { initSync } from "../build/js/index.node.js";
import {
  fromNodeRedis,
  RedisBlockedBloomFilter,
  RedisBloomFilter,
  RedisDeduplicator,
  withRecentCache,
} from "../build/js/redis/index.js";
import { startCluster } from "../test/support/redis-cluster.js";
import { machine, startRedis, table } from "./common.js";

initSync();
const BATCH = 4096;

/** A deterministic crawl-order link stream: each page lists its site's navigation, then links to other pages. */
export function crawlStream(lines, seed = 1) {
  let s = seed >>> 0 || 1;
  const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), (s >>> 0) / 2 ** 32);
  const out = [];
  const sites = 40;
  const pages = new Array(sites).fill(0);
  while (out.length < lines) {
    const site = Math.floor(next() * sites);
    const host = `https://docs${site}.example.org`;
    for (let n = 0; n < 30; n++) out.push(`${host}/nav/${n}.html`);
    for (let c = 0; c < 12; c++) {
      // A new page of the site, or one linked before (more often a recent one).
      const page = next() < 0.3 ? pages[site]++ : Math.floor(pages[site] * Math.sqrt(next()));
      out.push(`${host}/page/${page}.html${next() < 0.1 ? `?lang=${Math.floor(next() * 4)}` : ""}`);
    }
  }
  return out.slice(0, lines);
}

async function singleNode() {
  const server = await startRedis();
  const port = Number(new URL(server.url).port);
  const client = createClient({ url: server.url, disableOfflineQueue: true });
  await client.connect();
  return {
    name: "one node",
    client,
    ports: [port],
    cli: null,
    stop: async () => (await client.quit(), server.stop()),
  };
}

async function threeMasters() {
  const cluster = await startCluster();
  const client = createCluster({
    rootNodes: cluster.urls.map((url) => ({ url })),
    defaults: { disableOfflineQueue: true },
  });
  client.on("error", () => undefined);
  await client.connect();
  return {
    name: "3-master cluster",
    client,
    ports: cluster.masters(),
    cli: cluster.cli,
    stop: async () => (await client.close(), await cluster.stop()),
  };
}

/** used_memory and used_cpu (s) summed over the topology's masters. */
async function serverTotals(topology, redis) {
  const infos = topology.cli
    ? topology.ports.map((port) => topology.cli(["INFO"], port))
    : [String(await redis.send(["INFO"]))];
  const field = (name) => infos.reduce((sum, info) => sum + Number(new RegExp(`${name}:([\\d.]+)`).exec(info)[1]), 0);
  return { memory: field("used_memory"), cpu: field("used_cpu_user") + field("used_cpu_sys") };
}

async function flush(topology, redis) {
  if (topology.cli) for (const port of topology.ports) topology.cli(["FLUSHALL"], port);
  else await redis.send(["FLUSHALL"]);
}

/** The methods, each a factory of a fresh seen-set under a round-specific name. */
const methods = (redis) => [
  [
    "SADD pipelined",
    async () => ({
      addMany: (keys) =>
        Promise.all(keys.map((k) => redis.send(["SADD", "bench:seen", k]))).then((r) => Uint8Array.from(r, Number)),
    }),
  ],
  ["RedisBloomFilter (p = 1e-4)", async (n, name) => RedisBloomFilter.open(redis, { name, items: n, fpRate: 1e-4 })],
  [
    "RedisBloomFilter (p = 1e-4, k = 13: least memory)",
    async (n, name) => RedisBloomFilter.open(redis, { name, items: n, fpRate: 1e-4, hashes: 13 }),
  ],
  [
    "RedisBloomFilter + recent cache",
    async (n, name) =>
      withRecentCache(await RedisBloomFilter.open(redis, { name, items: n, fpRate: 1e-4 }), { entries: 2 ** 16 }),
  ],
  [
    "RedisBlockedBloomFilter (binary, p = 1e-4)",
    async (n, name) => RedisBlockedBloomFilter.open(redis, { name, items: n, fpRate: 1e-4 }),
  ],
  [
    "RedisBlockedBloomFilter + recent cache",
    async (n, name) =>
      withRecentCache(await RedisBlockedBloomFilter.open(redis, { name, items: n, fpRate: 1e-4 }), {
        entries: 2 ** 16,
      }),
  ],
  ["RedisDeduplicator (exact)", async (_n, name) => new RedisDeduplicator(redis, { name })],
  [
    "RedisDeduplicator + recent cache",
    async (_n, name) => withRecentCache(new RedisDeduplicator(redis, { name }), { entries: 2 ** 16 }),
  ],
];

async function measure(topology, stream, distinct) {
  const redis = fromNodeRedis(topology.client, { timeoutMs: 120_000 });
  const list = methods(redis);
  const runs = list.map(() => []);
  for (let round = 0; round < 3; round++) {
    // Alternating: each round starts one method later, so no method always runs first.
    for (let step = 0; step < list.length; step++) {
      const m = (step + round) % list.length;
      await flush(topology, redis);
      const before = await serverTotals(topology, redis);
      const seen = await list[m][1](distinct, `bench-${m}-${round}`);
      const cpu = process.cpuUsage();
      const started = performance.now();
      let fresh = 0;
      for (let i = 0; i < stream.length; i += BATCH)
        for (const f of await seen.addMany(stream.slice(i, i + BATCH))) fresh += f;
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const after = await serverTotals(topology, redis);
      runs[m].push({
        seconds,
        clientCpu: (used.user + used.system) / 1e6,
        serverCpu: after.cpu - before.cpu,
        bytes: after.memory - before.memory,
        fresh,
        hits: seen.stats?.hits,
      });
      seen.dispose?.();
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[1];
  return list.map(([name], m) => {
    const r = runs[m];
    return {
      name,
      keysPerSecond: stream.length / median(r.map((x) => x.seconds)),
      clientCpu: median(r.map((x) => x.clientCpu)),
      serverCpu: median(r.map((x) => x.serverCpu)),
      bytesPerKey: median(r.map((x) => x.bytes)) / distinct,
      fresh: r[0].fresh,
      hitRate: r[0].hits === undefined ? undefined : r[0].hits / stream.length,
    };
  });
}

/** One table per stream and topology. */
export async function redisClusterSuite(lines = Number(process.env.CRAWL_LINES ?? 1e6)) {
  const streams = [
    [
      "shipped example (examples/nodejs-doc-links.txt)",
      readFileSync(new URL("../examples/nodejs-doc-links.txt", import.meta.url), "utf8")
        .split("\n")
        .slice(0, -1),
    ],
    [`generated crawl-order stream (${lines.toLocaleString("en-US")} links)`, crawlStream(lines)],
  ];
  const out = [`### Seen-sets in Redis on crawl-order streams — ${machine()}\n`];
  const topologies = { one: [singleNode], cluster: [threeMasters], both: [singleNode, threeMasters] }[
    process.env.TOPOLOGY ?? "both"
  ];
  for (const make of topologies) {
    const topology = await make();
    try {
      for (const [label, stream] of streams) {
        const distinct = new Set(stream).size;
        const rows = await measure(topology, stream, distinct);
        const sadd = rows[0].keysPerSecond;
        out.push(
          `${topology.name}, ${label}: ${stream.length.toLocaleString("en-US")} keys, ${distinct.toLocaleString("en-US")} distinct (${((1 - distinct / stream.length) * 100).toFixed(1)}% duplicates)\n`,
        );
        out.push(
          table(
            [
              "method",
              "keys/s (median of 3)",
              "/ SADD pipelined",
              "client CPU s",
              "Redis CPU s",
              "Redis bytes per distinct key",
              "new keys",
              "answered by the cache",
            ],
            rows.map((r) => [
              r.name,
              Math.round(r.keysPerSecond).toLocaleString("en-US"),
              (r.keysPerSecond / sadd).toFixed(2),
              r.clientCpu.toFixed(2),
              r.serverCpu.toFixed(2),
              r.bytesPerKey.toFixed(1),
              r.fresh.toLocaleString("en-US"),
              r.hitRate === undefined ? "" : `${(r.hitRate * 100).toFixed(1)}%`,
            ]),
          ),
        );
        out.push("");
      }
    } finally {
      await topology.stop();
    }
  }
  return out.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await redisClusterSuite());
