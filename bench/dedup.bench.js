// Exact dedup. (1) The IMP-CB paper's experiment: total time and store reads of the plain
// MD5-store method (every URL looks up its fingerprint) against IMP-CB (k = 8, m/n = 20), at
// 0.5M-2M and 1e7 URLs with 50% duplicates, on the in-memory table and on LMDB. The plain
// method is the same code with a one-counter filter that always answers "maybe", so only the
// counting filter differs. (2) Throughput and memory per unique URL against a JavaScript Set.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deduplicator, initSync, openLmdbStore, StoreDeduplicator } from "../build/js/index.node.js";
import { lineChart } from "./chart.js";
import { keysPerSecond, millions, table, urlKeys } from "./common.js";

initSync();

/** n lines, half of them repeats, as one buffer of lines with their spans (the CLI's path). */
function workload(n) {
  const unique = urlKeys(n / 2, "imp");
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i % (n / 2);
  // A fixed shuffle (xorshift) so first occurrences are spread through the input.
  let x = 2463534242;
  for (let i = n - 1; i > 0; i--) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    const j = x % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const lengths = unique.map((u) => u.length);
  let total = 0;
  for (let i = 0; i < n; i++) total += lengths[order[i]] + 1;
  const data = Buffer.allocUnsafe(total);
  const spans = new Uint32Array(2 * n);
  for (let i = 0, at = 0; i < n; i++) {
    const u = unique[order[i]];
    spans[2 * i] = at;
    at += data.latin1Write(u, at);
    spans[2 * i + 1] = at;
    data[at++] = 10;
  }
  return { data, spans, unique: n / 2, keys: Array.from(order, (o) => unique[o]) };
}

function run(kind, method, w) {
  const items = w.unique;
  const filter = method === "plain" ? { counters: 1, hashes: 1 } : { counters: 20 * items, hashes: 8 };
  let dir;
  const dedup =
    kind === "memory"
      ? new Deduplicator({ items, ...filter })
      : new StoreDeduplicator(openLmdbStore((dir = mkdtempSync(join(tmpdir(), "cs-bench-")))), { items, ...filter });
  const started = performance.now();
  dedup.checkSpans(w.data, w.spans);
  const seconds = (performance.now() - started) / 1000;
  const stats = dedup.stats;
  if (kind === "memory") dedup.dispose();
  else {
    dedup.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { seconds, reads: stats.lookups, readsForNew: stats.lookupsForNew, fresh: stats.new };
}

/** The paper's experiment; returns markdown and writes bench/imp-cb.svg. */
export async function paperSuite(sizes = [5e5, 1e6, 1.5e6, 2e6, 1e7]) {
  const rows = [];
  const series = { "memory, plain": [], "memory, IMP-CB": [], "LMDB, plain": [], "LMDB, IMP-CB": [] };
  for (const n of sizes) {
    const w = workload(n);
    for (const kind of ["memory", "lmdb"]) {
      const plain = run(kind, "plain", w);
      const imp = run(kind, "imp-cb", w);
      const label = kind === "memory" ? "memory" : "LMDB";
      series[`${label}, plain`].push({ x: n, y: plain.seconds });
      series[`${label}, IMP-CB`].push({ x: n, y: imp.seconds });
      rows.push([
        n.toLocaleString("en-US"),
        label,
        plain.seconds.toFixed(2),
        imp.seconds.toFixed(2),
        (plain.seconds / imp.seconds).toFixed(2),
        plain.reads.toLocaleString("en-US"),
        imp.reads.toLocaleString("en-US"),
        plain.readsForNew.toLocaleString("en-US"),
        imp.readsForNew.toLocaleString("en-US"),
        (100 * (1 - imp.readsForNew / plain.readsForNew)).toFixed(2) + "%",
      ]);
    }
  }
  const svg = lineChart({
    title: "Exact dedup: total time, plain MD5 store vs IMP-CB",
    xLabel: "URLs (50% duplicates)",
    yLabel: "seconds",
    series: Object.entries(series).map(([name, points]) => ({ name, points })),
  });
  writeFileSync(new URL("./imp-cb.svg", import.meta.url), svg);
  return [
    "### IMP-CB vs the plain MD5-store method (k = 8, m/n = 20; 50% duplicates; chart: bench/imp-cb.svg)",
    "",
    table(
      [
        "URLs",
        "store",
        "plain s",
        "IMP-CB s",
        "speed-up",
        "plain reads",
        "IMP-CB reads",
        "plain reads for new URLs",
        "IMP-CB reads for new URLs",
        "reads for new URLs saved",
      ],
      rows,
    ),
    "",
  ].join("\n");
}

/** Throughput and memory per unique URL against a JavaScript Set; returns markdown. */
export async function throughputSuite(n = 1e6) {
  const w = workload(n);
  let dedup;
  const rates = await keysPerSecond(`exact ${n}`, { count: n }, [
    {
      name: "Deduplicator.checkSpans (MD5, bytes)",
      fn: () => dedup.checkSpans(w.data, w.spans),
      options: {
        beforeEach: () => {
          dedup?.dispose();
          dedup = new Deduplicator({ items: w.unique });
        },
      },
    },
    {
      name: "Deduplicator.checkMany (MD5, strings)",
      fn: () => dedup.checkMany(w.keys),
      options: {
        beforeEach: () => {
          dedup?.dispose();
          dedup = new Deduplicator({ items: w.unique });
        },
      },
    },
    {
      name: "Deduplicator.checkSpans (xxh64x2, bytes)",
      fn: () => dedup.checkSpans(w.data, w.spans),
      options: {
        beforeEach: () => {
          dedup?.dispose();
          dedup = new Deduplicator({ items: w.unique, fingerprint: "xxh64x2" });
        },
      },
    },
    {
      name: "Set<string>",
      fn: () => {
        const set = new Set();
        let fresh = 0;
        for (const k of w.keys)
          if (!set.has(k)) {
            set.add(k);
            fresh++;
          }
        return fresh;
      },
    },
  ]);
  dedup.dispose();
  const sized = new Deduplicator({ items: w.unique });
  sized.checkSpans(w.data, w.spans);
  const ourBytes = sized.byteLength / w.unique;
  const grown = new Deduplicator({ items: 1000 });
  grown.checkSpans(w.data, w.spans);
  const grownBytes = grown.byteLength / w.unique;
  // A Set must keep every URL string: measure a Set of fresh copies, strings included.
  // gc() without --expose-gc on the command line (npm run bench passes none): set the flag here.
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  gc();
  const before = process.memoryUsage().heapUsed;
  const set = new Set();
  for (const k of w.keys) set.add(Buffer.from(k, "latin1").toString("latin1"));
  gc();
  const setBytes = (process.memoryUsage().heapUsed - before) / set.size;
  const set0 = rates.get("Set<string>");
  return [
    `### Exact dedup throughput, ${n.toExponential(0)} URL lines, 50% duplicates (one core)`,
    "",
    table(
      ["implementation", "M lines/s", "ratio to Set<string>"],
      [...rates].map(([name, rate]) => [name, millions(rate), (rate / set0).toFixed(2)]),
    ),
    "",
    table(
      ["memory per unique URL", "bytes"],
      [
        ["Deduplicator sized for the load (items = unique URLs)", ourBytes.toFixed(1)],
        ["Deduplicator planned for 1,000, grown by doubling", grownBytes.toFixed(1)],
        ["Set<string> with its strings (heap delta)", setBytes.toFixed(1)],
      ],
    ),
    "",
  ].join("\n");
}
