// The near-duplicate filter (NearDupFilter, RedisNearDupFilter) beside the exact pipeline on the
// corpora bench/near-dup-corpus.js builds (the PostgreSQL and Python manuals across versions, the
// SpamAssassin mail), in one run: precision and recall of "this document has an earlier one at
// exact Jaccard >= J" (truth by the corpus's own tokenizer and similarity join, no crawlsieve
// code) for the filter, MinHashIndex (LSH + bottom-k estimate, pairs()), `near-dups --dedup` and
// `near-dups --filter`; bytes a document; texts/s of NearDupFilter.addMany against
// MinHashIndex.addMany on the same texts (median of 3, alternating); and on a local redis-server
// (a 3-master cluster with TOPOLOGY=cluster, both with both, neither with none) bytes a document from INFO memory and
// texts/s from one process, against RedisMinHashIndex.
//
//   bench/near-dup-corpus.sh && node bench/near-dup-corpus.js   (once: data and truth)
//   flock /tmp/cs-bench.lock node bench/near-dup-filter.bench.js [corpus...]   (npm run bench:near-filter)
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, createCluster } from "redis";
import { initSync, MinHashIndex, NearDupFilter, sizing } from "../build/js/index.node.js";
import { fromNodeRedis, RedisMinHashIndex, RedisNearDupFilter } from "../build/js/redis/index.js";
import { startCluster } from "../test/support/redis-cluster.js";
import { machine, startRedis, table } from "./common.js";
import { CORPORA, loadCorpus } from "./near-dup-corpus.js";

initSync();
const THRESHOLD = Number(process.env.THRESHOLD ?? 0.8);
const FP_RATE = 1e-4;
const BATCH = 512;
const ROUNDS = 3;
const TOPOLOGY = process.env.TOPOLOGY ?? "one";
const cli = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Per document: 1 when an earlier document is at exact Jaccard >= t (the truth pairs are i < j). */
function truthFlags(count, truth, t) {
  const flags = new Uint8Array(count);
  for (const [key, s] of truth) if (s >= t) flags[Number(key.split(" ")[1])] = 1;
  return flags;
}

/** Precision and recall of predicted flags against the truth's. */
function score(predicted, actual, relaxed) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let nearMiss = 0;
  for (let i = 0; i < actual.length; i++) {
    if (predicted[i] && actual[i]) tp++;
    else if (predicted[i]) {
      fp++;
      if (relaxed[i]) nearMiss++;
    } else if (actual[i]) fn++;
  }
  return { flagged: tp + fp, precision: tp / (tp + fp || 1), recall: tp / (tp + fn || 1), nearMiss };
}

function inBatches(texts, run) {
  const out = new Uint8Array(texts.length);
  for (let at = 0; at < texts.length; at += BATCH) out.set(run(texts.slice(at, at + BATCH)), at);
  return out;
}

function filterFlags(texts) {
  const filter = new NearDupFilter({ items: texts.length, fpRate: FP_RATE, threshold: THRESHOLD });
  const flags = inBatches(texts, (batch) => filter.addMany(batch));
  const bytes = filter.byteLength;
  filter.dispose();
  return { flags, bytes };
}

function minhashFlags(texts) {
  const index = new MinHashIndex({ threshold: THRESHOLD });
  index.addMany(
    texts.map((_, i) => i),
    texts,
  );
  const flags = new Uint8Array(texts.length);
  for (const { b } of index.pairs()) flags[b] = 1;
  const bytes = index.byteLength;
  index.dispose();
  return { flags, bytes };
}

function cliFlags(mode, corpus) {
  const input = join(mkdtempSync(join(tmpdir(), "cs-bench-ndf-")), `${corpus.name}.jsonl`);
  writeFileSync(input, corpus.docs.map((doc, i) => JSON.stringify({ id: i, text: doc.text })).join("\n") + "\n");
  const args =
    mode === "filter" ? ["--filter", "--items", String(corpus.docs.length), "--fp-rate", String(FP_RATE)] : ["--dedup"];
  const started = performance.now();
  const result = spawnSync(process.execPath, [cli, "near-dups", ...args, "--threshold", String(THRESHOLD), input], {
    maxBuffer: 1 << 30,
  });
  const seconds = (performance.now() - started) / 1000;
  if (result.status !== 0) throw new Error(result.stderr.toString());
  const flags = new Uint8Array(corpus.docs.length).fill(1);
  for (const line of result.stdout.toString().split("\n").filter(Boolean)) flags[JSON.parse(line).id] = 0;
  return { flags, seconds };
}

/**
 * texts/s of NearDupFilter.addMany and MinHashIndex.addMany on the same texts, rounds alternating;
 * each structure is made before its clock starts (a filter's 16 band instances take about 110 ms
 * to make, once), and that time is reported apart.
 */
function speeds(texts) {
  const times = { filter: [], index: [], make: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const which of round % 2 === 0 ? ["filter", "index"] : ["index", "filter"]) {
      const made = performance.now();
      const structure =
        which === "filter"
          ? new NearDupFilter({ items: texts.length, fpRate: FP_RATE, threshold: THRESHOLD })
          : new MinHashIndex({ threshold: THRESHOLD });
      if (which === "filter") times.make.push(performance.now() - made);
      const started = performance.now();
      for (let at = 0; at < texts.length; at += BATCH) {
        const batch = texts.slice(at, at + BATCH);
        if (which === "filter") structure.addMany(batch);
        else
          structure.addMany(
            Array.from({ length: batch.length }, (_, i) => at + i),
            batch,
          );
      }
      times[which].push((performance.now() - started) / 1000);
      structure.dispose();
    }
  }
  return {
    filter: texts.length / median(times.filter),
    index: texts.length / median(times.index),
    makeMs: median(times.make),
  };
}

async function oneNode() {
  const server = await startRedis();
  const client = createClient({ url: server.url, disableOfflineQueue: true });
  await client.connect();
  const redis = fromNodeRedis(client);
  const info = async () => [String(await redis.send(["INFO", "memory"]))];
  return {
    name: "one node",
    redis,
    info,
    flush: () => redis.send(["FLUSHALL"]),
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
  const info = async () => cluster.masters().map((port) => cluster.cli(["INFO", "memory"], port));
  return {
    name: "3-master cluster",
    redis: fromNodeRedis(client),
    info,
    flush: () => cluster.masters().forEach((port) => cluster.cli(["FLUSHALL"], port)),
    stop: async () => (await client.close(), await cluster.stop()),
  };
}

const usedMemory = async (topology) =>
  (await topology.info()).reduce((sum, text) => sum + Number(/used_memory:(\d+)/.exec(text)[1]), 0);

/** Redis bytes a document (INFO used_memory after, less before, over the documents) and texts/s of one process. */
async function onRedis(topology, corpus, texts) {
  const rows = [];
  const ids = corpus.docs.map((doc, i) => `${i}:${doc.id}`);
  for (const method of ["RedisNearDupFilter", "RedisMinHashIndex"]) {
    await topology.flush();
    const before = await usedMemory(topology);
    const started = performance.now();
    const flags = new Uint8Array(texts.length);
    if (method === "RedisNearDupFilter") {
      const filter = await RedisNearDupFilter.open(topology.redis, {
        name: `bench-${corpus.name}`,
        items: texts.length,
        fpRate: FP_RATE,
        threshold: THRESHOLD,
      });
      for (let at = 0; at < texts.length; at += BATCH) flags.set(await filter.addMany(texts.slice(at, at + BATCH)), at);
    } else {
      const index = await RedisMinHashIndex.open(topology.redis, {
        name: `bench-${corpus.name}`,
        threshold: THRESHOLD,
      });
      for (let at = 0; at < texts.length; at += BATCH)
        (await index.addMany(ids.slice(at, at + BATCH), texts.slice(at, at + BATCH))).forEach(
          (m, i) => (flags[at + i] = m === null ? 0 : 1),
        );
    }
    const seconds = (performance.now() - started) / 1000;
    const bytes = (await usedMemory(topology)) - before;
    rows.push({ method, flags, bytesPerDoc: bytes / texts.length, textsPerSecond: texts.length / seconds });
  }
  return rows;
}

/** Redis bytes a planned text of a filter planned for `items`: its shards are made whole at open, so INFO used_memory after the corpus is added, less before, over `items`. */
async function plannedBytes(topology, texts, items) {
  await topology.flush();
  const before = await usedMemory(topology);
  const filter = await RedisNearDupFilter.open(topology.redis, {
    name: "bench-planned",
    items,
    fpRate: FP_RATE,
    threshold: THRESHOLD,
  });
  for (let at = 0; at < texts.length; at += BATCH) await filter.addMany(texts.slice(at, at + BATCH));
  return ((await usedMemory(topology)) - before) / items;
}

const corpora = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : CORPORA).map((name) => ({
  name,
  ...loadCorpus(name),
}));
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim();
console.log(
  `## Near-duplicate filter (issue 47): ${new Date().toISOString().slice(0, 10)}, commit ${commit}, ${machine()}`,
);
console.log(
  `threshold ${THRESHOLD}, fp rate ${FP_RATE}, batches of ${BATCH}; plan at 1e6 texts: ${JSON.stringify((({ bands, rows, bytesPerItem }) => ({ bands, rows, bytesPerItem: +bytesPerItem.toFixed(2) }))(sizing.optimalNearDupFilter({ items: 1e6, fpRate: FP_RATE, threshold: THRESHOLD })))}\n`,
);
const quality = [];
const speed = [];
const redisRows = [];
const planned = [];
const PLANNED = Number(process.env.PLANNED ?? 1e6);
const topologies = TOPOLOGY === "both" ? ["one", "cluster"] : TOPOLOGY === "none" ? [] : [TOPOLOGY];
for (const corpus of corpora) {
  const texts = corpus.docs.map((doc) => doc.text);
  const actual = truthFlags(texts.length, corpus.truth, THRESHOLD);
  const relaxed = truthFlags(texts.length, corpus.truth, 0.7);
  const positives = actual.reduce((a, b) => a + b, 0);
  const add = (method, flags, extra = {}) => {
    const s = score(flags, actual, relaxed);
    quality.push([
      corpus.name,
      `${texts.length} (${positives})`,
      method,
      s.flagged,
      s.precision.toFixed(3),
      s.recall.toFixed(3),
      `${s.flagged - Math.round(s.precision * s.flagged)} (${s.nearMiss})`,
      extra.bytes ?? "",
      extra.seconds ?? "",
    ]);
  };
  const filter = filterFlags(texts);
  add("NearDupFilter (LSHBloom)", filter.flags, { bytes: (filter.bytes / texts.length).toFixed(1) });
  const index = minhashFlags(texts);
  add("MinHashIndex pairs() (LSH + estimate)", index.flags, {
    bytes: `${(index.bytes / texts.length).toFixed(0)} + band Map`,
  });
  const dedup = cliFlags("dedup", corpus);
  add("`near-dups --dedup` (removed)", dedup.flags, { seconds: dedup.seconds.toFixed(1) });
  const filtered = cliFlags("filter", corpus);
  add("`near-dups --filter` (left out)", filtered.flags, { seconds: filtered.seconds.toFixed(1) });
  const s = speeds(texts);
  speed.push([
    corpus.name,
    texts.length,
    (texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / texts.length / 1024).toFixed(1),
    Math.round(s.filter),
    Math.round(s.index),
    (s.filter / s.index).toFixed(2),
    s.makeMs.toFixed(0),
  ]);
  for (const which of topologies) {
    const topology = which === "cluster" ? await threeMasters() : await oneNode();
    try {
      for (const row of await onRedis(topology, corpus, texts)) {
        const sc = score(row.flags, actual, relaxed);
        redisRows.push([
          corpus.name,
          topology.name,
          row.method,
          row.bytesPerDoc.toFixed(1),
          Math.round(row.textsPerSecond),
          sc.precision.toFixed(3),
          sc.recall.toFixed(3),
        ]);
      }
      if (corpus === corpora[0])
        planned.push([
          topology.name,
          PLANNED.toExponential(0),
          (await plannedBytes(topology, texts, PLANNED)).toFixed(1),
          sizing
            .optimalNearDupFilter({ items: PLANNED, fpRate: FP_RATE, threshold: THRESHOLD })
            .bytesPerItem.toFixed(1),
        ]);
    } finally {
      await topology.stop();
    }
  }
}
console.log(
  `### "Has an earlier near-duplicate at exact J >= ${THRESHOLD}": documents flagged, precision, recall (false positives, of them at J >= 0.7 in brackets)\n`,
);
console.log(
  table(
    [
      "corpus",
      "documents (positives)",
      "method",
      "flagged",
      "precision",
      "recall",
      "false positives (J >= 0.7)",
      "bytes a document",
      "CLI s",
    ],
    quality,
  ),
);
console.log(`\n### Texts/s in memory, one thread (median of ${ROUNDS}, alternating)\n`);
console.log(
  table(
    [
      "corpus",
      "texts",
      "KiB a text",
      "NearDupFilter.addMany",
      "MinHashIndex.addMany",
      "ratio",
      "new NearDupFilter (ms)",
    ],
    speed,
  ),
);
console.log(
  `\n### Redis: bytes a document (INFO used_memory, after less before, over the documents) and texts/s of one process\n`,
);
console.log(table(["corpus", "topology", "method", "bytes a document", "texts/s", "precision", "recall"], redisRows));
console.log(
  `\n### Redis bytes a planned text: RedisNearDupFilter planned for N texts (its shards made whole at open), the first corpus added, INFO used_memory after less before, over N\n`,
);
console.log(table(["topology", "N", "Redis bytes a planned text", "in memory (plan, 16 bands)"], planned));
