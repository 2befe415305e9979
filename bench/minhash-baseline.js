// The plain-JavaScript MinHash a user would write instead of crawlsieve (about the 100 lines the
// issue measured): words by a Unicode regex, FNV-1a of each 3-word shingle string, 128 hash
// functions (multiply, add, then a xorshift-multiply finaliser) with one minimum each, LSH bands
// of r rows as Map keys, and the estimated Jaccard (equal slots / 128) to check each candidate.
const HASHES = 128;
const A = new Int32Array(HASHES);
const B = new Int32Array(HASHES);
let seed = 0x2545f491;
const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) | 0), seed);
for (let i = 0; i < HASHES; i++) {
  A[i] = next() | 1;
  B[i] = next();
}

function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The 128-slot signature of a text's word 3-shingles. */
export function signature(text, w = 3) {
  const tokens = text.toLowerCase().match(/[\p{L}\p{M}\p{N}_]+/gu) ?? [];
  const sig = new Uint32Array(HASHES).fill(0xffffffff);
  const shingles = tokens.length < w ? (tokens.length ? [tokens.join(" ")] : []) : [];
  for (let i = 0; i + w <= tokens.length; i++) shingles.push(tokens.slice(i, i + w).join(" "));
  for (const shingle of shingles) {
    const x = fnv1a(shingle);
    for (let k = 0; k < HASHES; k++) {
      let v = (Math.imul(x, A[k]) + B[k]) | 0;
      v ^= v >>> 15;
      v = Math.imul(v, 0x2c1b3c6d);
      v ^= v >>> 12;
      if (v >>> 0 < sig[k]) sig[k] = v >>> 0;
    }
  }
  return shingles.length ? sig : undefined;
}

/** Estimated Jaccard of two signatures. */
export function estimate(a, b) {
  let same = 0;
  for (let k = 0; k < HASHES; k++) if (a[k] === b[k]) same++;
  return same / HASHES;
}

/** Candidate pairs (i < j) of signatures sharing a band of r rows. */
export function lshPairs(sigs, rows) {
  const pairs = new Set();
  for (let band = 0; band + rows <= HASHES; band += rows) {
    const buckets = new Map();
    sigs.forEach((sig, i) => {
      if (sig === undefined) return;
      const key = Array.prototype.join.call(sig.subarray(band, band + rows), ".");
      const list = buckets.get(key);
      if (list === undefined) buckets.set(key, [i]);
      else {
        for (const j of list) pairs.add(j * 0x100000 + i);
        list.push(i);
      }
    });
  }
  return [...pairs].map((key) => [Math.floor(key / 0x100000), key % 0x100000]);
}
