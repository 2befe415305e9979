// Scores dedup runs on a bench/gen-clusters.js collection against its planted truth
// (bench/planted-truth.js), the same code for crawlsieve and the peer: every record once, kept
// count against the truth's, removal F1 against the truth's removed copies, the share of removed
// records naming a kept duplicate_of at exact Jaccard >= 0.75 (word 3-shingles by
// bench/near-dup-corpus.js's shingleSet on the texts, at most SAMPLE removed records a run, an
// even stride), and the planted pairs at exact J >= 0.9 with both records kept. One pass over
// the collection serves all runs. usage: imported by bench/near-dup-scale.bench.js.
import { createReadStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { shingleSet } from "./near-dup-corpus.js";

const SAMPLE = 200_000;

function exactJaccard(x, y) {
  const [a, b] = x.size < y.size ? [x, y] : [y, x];
  let common = 0;
  for (const s of a) if (b.has(s)) common++;
  return common / (a.size + b.size - common);
}

/** runs: [{ removedFile, keptCount }]; truth: readPlanted()'s; returns one score object a run. */
export async function scoreRuns(collection, docs, truth, runs) {
  const checked = runs.map(({ removedFile }) => {
    const removed = readFileSync(removedFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const stride = Math.max(1, Math.ceil(removed.length / SAMPLE));
    return { removed, ids: new Set(removed.map((r) => r.id)), sample: removed.filter((_, i) => i % stride === 0) };
  });
  // Texts wanted: the sampled removed records and their duplicate_of, and 1,000 planted pairs
  // whose exact Jaccard the planted file states (a check that the two tokenizers agree).
  const strideP = Math.max(1, Math.floor(truth.pairs.length / 1000));
  const crossCheck = truth.pairs.filter((_, i) => i % strideP === 0).slice(0, 1000);
  const wanted = new Set();
  for (const { sample } of checked)
    for (const r of sample) wanted.add(Number(r.id)), wanted.add(Number(r.duplicate_of));
  for (const [a, b] of crossCheck) wanted.add(a), wanted.add(b);
  const texts = new Map();
  for await (const line of createInterface({ input: createReadStream(collection), crlfDelay: Infinity })) {
    const id = Number(/^\{"id":(\d+)/.exec(line)?.[1]);
    if (wanted.has(id)) texts.set(id, JSON.parse(line).text);
  }
  const jaccardOf = (a, b) => exactJaccard(shingleSet(texts.get(Number(a))), shingleSet(texts.get(Number(b))));
  const disagree = crossCheck.filter(([a, b, j]) => Math.abs(jaccardOf(a, b) - j) > 1e-5).length;
  if (disagree > 0)
    throw new Error(`${disagree} of ${crossCheck.length} planted pairs' Jaccard differ from shingleSet's`);

  const strong = truth.pairs.filter(([, , j]) => j >= 0.9);
  return runs.map(({ keptCount }, n) => {
    const { removed, ids, sample } = checked[n];
    const truePositives = removed.filter((r) => truth.removed.has(Number(r.id))).length;
    const close = sample.filter((r) => !ids.has(r.duplicate_of) && jaccardOf(r.id, r.duplicate_of) >= 0.75).length;
    return {
      kept: keptCount,
      removed: removed.length,
      everyRecordOnce: keptCount + removed.length === docs && ids.size === removed.length,
      truthKept: docs - truth.removed.size,
      f1: (2 * truePositives) / (removed.length + truth.removed.size),
      precision: { close, of: sample.length, sampled: sample.length < removed.length },
      bothKept: { n: strong.filter(([a, b]) => !ids.has(a) && !ids.has(b)).length, of: strong.length },
      crossChecked: crossCheck.length,
    };
  });
}
