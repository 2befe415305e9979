// The plain-JS MinHash-LSH dedup of datasketch's design, the peer of `near-dups --dedup`: 128
// permutations (bench/minhash-baseline.js's signature), b bands of r rows chosen as datasketch's
// _optimal_param does (ekzhu/datasketch, datasketch/lsh.py: the (b, r) with b * r <= 128 that
// minimises 0.5 * the false-positive integral of 1 - (1 - s^r)^b over [0, t] plus 0.5 * the
// false-negative integral over [t, 1]), each band's slice of the signature as a key in its own
// Map of buckets (datasketch's in-memory "dict" storage: bytes of the slice -> set of keys). A
// record that shares a band with an earlier kept one is removed, naming it, unverified as
// datasketch leaves verification to the caller; with --verify, only when the 128-slot estimate
// of some candidate reaches the threshold (the most similar is named). Records without a word
// are kept. Reads JSON lines {"id", "text"} on stdin, writes the kept lines to stdout and
// {"id", "duplicate_of", "similarity"} lines to --removed, as `near-dups --dedup` does.
// usage: node bench/minhash-lsh-peer.js [--threshold 0.8] [--verify] [--removed R.jsonl] < in.jsonl > kept.jsonl
import { createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import { estimate, signature } from "./minhash-baseline.js";

const NUM_PERM = 128;

/** Simpson's rule with n (even) steps; scipy's quad agrees to far more digits than the choice needs. */
function integrate(f, a, b, n = 2000) {
  const h = (b - a) / n;
  let sum = f(a) + f(b);
  for (let i = 1; i < n; i++) sum += f(a + i * h) * (i % 2 ? 4 : 2);
  return (sum * h) / 3;
}

/** datasketch's _optimal_param(threshold, num_perm, fp_weight, fn_weight) -> [b, r]. */
export function optimalParam(threshold, numPerm = NUM_PERM, fpWeight = 0.5, fnWeight = 0.5) {
  let minError = Infinity;
  let opt = [0, 0];
  for (let b = 1; b <= numPerm; b++) {
    for (let r = 1; r <= Math.floor(numPerm / b); r++) {
      const fp = integrate((s) => 1 - (1 - s ** r) ** b, 0, threshold);
      const fn = integrate((s) => 1 - (1 - (1 - s ** r) ** b), threshold, 1);
      const error = fp * fpWeight + fn * fnWeight;
      if (error < minError) (minError = error), (opt = [b, r]);
    }
  }
  return opt;
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
  const threshold = Number(option("--threshold", "0.8"));
  const verify = args.includes("--verify");
  const removedPath = option("--removed", undefined);
  const [bands, rows] = optimalParam(threshold);
  process.stderr.write(
    `minhash-lsh-peer: ${NUM_PERM} permutations, ${bands} bands x ${rows} rows${verify ? ", candidates checked by the estimate" : ", no verification"}\n`,
  );

  const tables = Array.from({ length: bands }, () => new Map()); // band key -> kept ordinal, or an array of them
  const keptIds = []; // kept ordinal -> id
  const keptSigs = []; // kept ordinal -> signature (--verify only)
  const removed = removedPath ? createWriteStream(removedPath) : undefined;
  let out = [];
  let outChars = 0;
  let removedOut = [];
  const flush = async () => {
    if (!process.stdout.write(out.join(""))) await new Promise((resolve) => process.stdout.once("drain", resolve));
    out = [];
    outChars = 0;
    if (removed && removedOut.length && !removed.write(removedOut.join("")))
      await new Promise((resolve) => removed.once("drain", resolve));
    removedOut = [];
  };
  const keys = new Array(bands);
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.length === 0) continue;
    const record = JSON.parse(line);
    const sig = signature(String(record.text ?? ""));
    let duplicateOf;
    let similarity = null;
    if (sig !== undefined) {
      const halves = new Uint16Array(sig.buffer);
      for (let b = 0; b < bands; b++)
        keys[b] = String.fromCharCode.apply(null, halves.subarray(2 * b * rows, 2 * (b + 1) * rows));
      const seen = verify ? new Set() : undefined;
      for (let b = 0; b < bands && (verify || duplicateOf === undefined); b++) {
        const bucket = tables[b].get(keys[b]);
        if (bucket === undefined) continue;
        for (const k of typeof bucket === "number" ? [bucket] : bucket) {
          if (!verify) {
            duplicateOf = k;
            break;
          }
          if (seen.has(k)) continue;
          seen.add(k);
          const e = estimate(sig, keptSigs[k]);
          if (e >= threshold && (similarity === null || e > similarity)) (duplicateOf = k), (similarity = e);
        }
      }
    }
    if (duplicateOf === undefined) {
      if (sig !== undefined) {
        const k = keptIds.length;
        for (let b = 0; b < bands; b++) {
          const bucket = tables[b].get(keys[b]);
          if (bucket === undefined) tables[b].set(keys[b], k);
          else if (typeof bucket === "number") tables[b].set(keys[b], [bucket, k]);
          else bucket.push(k);
        }
        keptIds.push(record.id);
        if (verify) keptSigs.push(sig);
      }
      out.push(line, "\n");
      outChars += line.length;
      if (outChars > 1 << 20) await flush();
    } else removedOut.push(`${JSON.stringify({ id: record.id, duplicate_of: keptIds[duplicateOf], similarity })}\n`);
  }
  await flush();
  if (removed) await new Promise((resolve) => removed.end(resolve));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
