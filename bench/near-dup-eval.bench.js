// Near-duplicate pairs against the truth: precision, recall and F1 at Jaccard >= 0.9 and >= 0.8
// of word 3-shingles, and the speed (documents/s, MB/s of text, CPU seconds) of each method, on
// three corpora built by bench/near-dup-corpus.js from real data: the PostgreSQL manuals (the
// corpus parameters were chosen on), the Python manuals and the SpamAssassin mail (held out).
// Every method runs in the same process, alternating, three times; times are medians.
//
//   bench/near-dup-corpus.sh && node bench/near-dup-corpus.js   (once: data and truth)
//   flock /tmp/cs-bench.lock node bench/near-dup-eval.bench.js [corpus...]   (ONLY=CLI,plain-JS: some methods)
import { spawnSync } from "node:child_process";
import { features, initSync, MinHashIndex, NearDupIndex, simhashMany } from "../build/js/index.node.js";
import { estimate, lshPairs, signature } from "./minhash-baseline.js";
import { CORPORA, loadCorpus } from "./near-dup-corpus.js";
import { machine, table } from "./common.js";
import { readFileSync } from "node:fs";

initSync();

const THRESHOLDS = [0.9, 0.8];
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SKETCH = process.env.SKETCH ? Number(process.env.SKETCH) : undefined;

/** Each method maps (texts, t) to predicted pairs [i, j] with i < j. */
export const METHODS = [
  {
    name: "SimHash k=3 (near-dups before issue 16)",
    run: (texts) => simhashPairs(texts, 3),
  },
  {
    name: "SimHash k=3 + estimate",
    run: (texts, t) => verified(texts, t, simhashPairs(texts, 3)),
  },
  {
    name: "SimHash k=8 + estimate",
    run: (texts, t) => verified(texts, t, simhashPairs(texts, 8)),
  },
  {
    name: "crawlsieve MinHash-LSH only",
    run: (texts, t) => minhash(texts, t, (index) => index.candidates()),
  },
  {
    name: "crawlsieve MinHash-LSH + estimate",
    run: (texts, t) => minhash(texts, t, (index) => index.pairs()),
  },
  {
    name: "`crawlsieve near-dups --pairs --threshold J` (the CLI on the JSON lines)",
    cli: true,
    run(texts, t, corpus) {
      const cli = new URL("../build/js/cli/main.js", import.meta.url).pathname;
      const result = spawnSync(process.execPath, [cli, "near-dups", "--pairs", "--threshold", String(t)], {
        input: corpus.jsonl,
        maxBuffer: 1 << 30,
      });
      if (result.status !== 0) throw new Error(result.stderr.toString());
      return result.stdout
        .toString()
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const { a, b } = JSON.parse(line);
          return [corpus.number.get(a), corpus.number.get(b)].sort((x, y) => x - y);
        });
    },
  },
  {
    name: "plain-JS MinHash 128, LSH only",
    run(texts, t) {
      return lshPairs(
        texts.map((text) => signature(text)),
        t >= 0.85 ? 8 : 5,
      );
    },
  },
  {
    name: "plain-JS MinHash 128, LSH + estimate",
    run(texts, t) {
      const sigs = texts.map((text) => signature(text));
      return lshPairs(sigs, t >= 0.85 ? 8 : 5).filter(([i, j]) => estimate(sigs[i], sigs[j]) >= t);
    },
  },
  {
    name: "plain-JS MinHash 128, sketching alone",
    sketchOnly: true,
    run(texts) {
      for (const text of texts) signature(text);
      return [];
    },
  },
];

function simhashPairs(texts, k) {
  const fps = simhashMany(texts, { shingle: 3 });
  const usable = [];
  texts.forEach((text, i) => (fps[i] !== 0n || features(text).length > 0) && usable.push(i));
  const index = new NearDupIndex({ maxDistance: k });
  index.addMany(
    usable,
    BigUint64Array.from(usable, (i) => fps[i]),
  );
  const pairs = index.pairs().map(({ a, b }) => (a < b ? [a, b] : [b, a]));
  index.dispose();
  return pairs;
}

/** Candidates kept when the bottom-k estimate reaches t (the sketching counted in the time). */
function verified(texts, t, candidates) {
  const index = new MinHashIndex({ threshold: t, sketchSize: SKETCH });
  index.addMany(
    texts.map((_, i) => i),
    texts,
  );
  const estimates = index.similarityMany(candidates);
  index.dispose();
  return candidates.filter((_, i) => estimates[i] >= t);
}

function minhash(texts, t, pairsOf) {
  const index = new MinHashIndex({ threshold: t, sketchSize: SKETCH });
  index.addMany(
    texts.map((_, i) => i),
    texts,
  );
  const pairs = pairsOf(index).map(({ a, b }) => [a, b]);
  index.dispose();
  return pairs;
}

function score(pairs, truth, t) {
  let hits = 0;
  const seen = new Set();
  for (const [i, j] of pairs) {
    const key = `${i} ${j}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if ((truth.get(key) ?? 0) >= t) hits++;
  }
  let relevant = 0;
  for (const s of truth.values()) if (s >= t) relevant++;
  const precision = seen.size === 0 ? 1 : hits / seen.size;
  const recall = relevant === 0 ? 1 : hits / relevant;
  return {
    predicted: seen.size,
    precision,
    recall,
    f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall),
  };
}

/** CPU seconds of waited-for child processes (Linux /proc; clock ticks of 1/100 s), 0 elsewhere. */
function childCpu() {
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

function timed(fn) {
  const cpu = process.cpuUsage();
  const children = childCpu();
  const start = performance.now();
  const value = fn();
  const wall = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { value, wall, cpu: (used.user + used.system) / 1e6 + childCpu() - children };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The evaluation of `methods` on one corpus; returns markdown. */
export function evaluateCorpus(name, methods = METHODS) {
  const { docs, truth, path } = loadCorpus(name);
  const texts = docs.map((doc) => doc.text);
  const corpus = { jsonl: readFileSync(path), number: new Map(docs.map((doc, i) => [doc.id, i])) };
  const mb = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / 1e6;
  const rows = [];
  for (const t of THRESHOLDS) {
    const runs = methods.map(() => ({ walls: [], cpus: [], result: undefined }));
    for (let round = 0; round < ROUNDS; round++) {
      methods.forEach((method, m) => {
        if (method.sketchOnly && t !== THRESHOLDS[0]) return;
        const { value, wall, cpu } = timed(() => method.run(texts, t, corpus));
        runs[m].walls.push(wall);
        runs[m].cpus.push(cpu);
        runs[m].result ??= method.sketchOnly ? undefined : score(value, truth, t);
      });
    }
    methods.forEach((method, m) => {
      if (runs[m].walls.length === 0) return;
      const wall = median(runs[m].walls);
      const r = runs[m].result;
      rows.push([
        t,
        method.name,
        r ? r.predicted : "-",
        r ? r.precision.toFixed(3) : "-",
        r ? r.recall.toFixed(3) : "-",
        r ? `**${r.f1.toFixed(3)}**` : "-",
        Math.round(texts.length / wall),
        (mb / wall).toFixed(1),
        wall.toFixed(2),
        median(runs[m].cpus).toFixed(2),
      ]);
    });
  }
  const truthAt = (t) => [...truth.values()].filter((s) => s >= t).length;
  return [
    `#### ${name}: ${texts.length} documents, ${mb.toFixed(1)} MB of text; true pairs: ${truthAt(0.9)} at J >= 0.9, ${truthAt(0.8)} at J >= 0.8\n`,
    table(
      [
        "J >=",
        "method",
        "pairs",
        "precision",
        "recall",
        "F1",
        "docs/s",
        "MB/s",
        "wall s (median of " + ROUNDS + ")",
        "CPU s",
      ],
      rows,
    ),
    "",
  ].join("\n");
}

/** The whole evaluation as markdown. */
export function nearDupEvalSuite(corpora = CORPORA, methods = METHODS) {
  const out = [`### Near-duplicate pairs against exact Jaccard of word 3-shingles (${machine()})\n`];
  for (const name of corpora) out.push(evaluateCorpus(name, methods));
  out.push(`Peak RSS of the whole run: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB.`);
  return out.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.slice(2);
  // ONLY=cli,plain-JS runs the methods whose names contain one of the words (default: all).
  const only = process.env.ONLY?.split(",");
  const methods = only === undefined ? METHODS : METHODS.filter((m) => only.some((word) => m.name.includes(word)));
  console.log(nearDupEvalSuite(names.length ? names : CORPORA, methods));
}
