// MinHash sketches of word-shingle sets, for estimating Jaccard similarity and for LSH.
//
// A document's shingles come from the SimHash tokenizer (assembly/simhash.ts) with "_" as a
// word character and two-byte letters case-folded; each distinct shingle hash h (64 bits) is
// one set element, so a shingle repeated on a page weighs once. Two sketches per document:
//
// - Bottom-k (Broder 1997; Cohen and Kaplan 2007): the k smallest distinct values of hi32(h),
//   sorted. For two documents the k smallest of the union of their sketches are the k smallest
//   of the union of their sets, and the fraction of those present in both estimates Jaccard
//   without bias (variance about J(1 - J)/k); a set of at most k shingles is kept whole, so
//   short documents compare exactly.
// - One-permutation hashing (Li, Owen, Zhang 2012) into B = bands * rows bins by lo32(h)
//   (bin = lo32 * B >> 32, value = the least low 31 bits of lo32 in the bin), empty bins filled by optimal
//   densification (Shrivastava 2017: bin i takes the value of the first non-empty bin along
//   its own probe sequence), so that two bins agree with probability J. Bins are grouped into
//   `bands` of `rows`, each band hashed to a 32-bit LSH key.
//
// Layout of one sketch (stride 4 + 4k bytes): u32 count (distinct values kept, at most k),
// then k u32 values ascending (unused ones 0xFFFFFFFF).

import { tokenize, voteReset, JOIN_UNDERSCORE, FOLD_CASE, MAX_SHINGLE } from "./simhash";
import { mix64 } from "./xxh64";

const EMPTY: u32 = 0xFFFFFFFF;
const BAND_SEED: u64 = 0x6A09E667F3BCC909;

// Inserts v into the ascending list of `count` values at `at` (capacity k) unless present;
// returns the new count. A full list drops its largest value.
// @ts-ignore: decorator
@inline function insertValue(at: usize, count: u32, k: u32, v: u32): u32 {
  // Binary search for the first value >= v.
  let lo: u32 = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (load<u32>(at + (<usize>mid << 2)) < v) lo = mid + 1;
    else hi = mid;
  }
  if (lo < count && load<u32>(at + (<usize>lo << 2)) == v) return count;
  const keep = count < k ? count : k - 1;
  if (lo >= k) return count;
  memory.copy(at + (<usize>(lo + 1) << 2), at + (<usize>lo << 2), <usize>(keep - lo) << 2);
  store<u32>(at + (<usize>lo << 2), v);
  return keep + 1;
}

/** Bottom-k and OPH band keys of `n` shingle hashes at `hashes`; writes the sketch at `sketch`, `bands` keys at `keys`, uses B u32 at `bins`. */
export function sketchHashes(hashes: usize, n: u32, k: u32, bands: u32, rows: u32, bins: usize, sketch: usize, keys: usize): void {
  const values = sketch + 4;
  let count: u32 = 0;
  let top: u32 = EMPTY; // the largest kept value once the list is full
  const b = bands * rows;
  for (let i: u32 = 0; i < b; i++) store<u32>(bins + (<usize>i << 2), EMPTY);
  for (let i: u32 = 0; i < n; i++) {
    const h = load<u64>(hashes + (<usize>i << 3));
    const v = <u32>(h >> 32);
    if (count < k || v < top) {
      count = insertValue(values, count, k, v);
      if (count == k) top = load<u32>(values + (<usize>(k - 1) << 2));
    }
    // The bin is the top of lo32; the value keeps its low 31 bits (the top bit marks copies below).
    const lo = <u32>h;
    const at = bins + (<usize>(<u32>((<u64>lo * <u64>b) >> 32)) << 2);
    const v31 = lo & 0x7FFFFFFF;
    if (v31 < load<u32>(at)) store<u32>(at, v31);
  }
  store<u32>(sketch, count);
  for (let i = count; i < k; i++) store<u32>(values + (<usize>i << 2), EMPTY);
  if (n == 0) {
    for (let j: u32 = 0; j < bands; j++) store<u32>(keys + (<usize>j << 2), 0);
    return;
  }
  // Densify: a bin left empty takes the value of the first non-empty bin on its probe sequence
  // (a fixed function of the bin and the attempt, the same for every document). Copies carry
  // the top bit, so only original values are ever copied.
  for (let i: u32 = 0; i < b; i++) {
    if (load<u32>(bins + (<usize>i << 2)) != EMPTY) continue;
    let attempt: u64 = 1;
    while (true) {
      const j = <u32>((mix64((<u64>i << 32) | attempt) & 0xFFFFFFFF) * <u64>b >> 32);
      const v = load<u32>(bins + (<usize>j << 2));
      if ((v & 0x80000000) == 0) {
        store<u32>(bins + (<usize>i << 2), v | 0x80000000);
        break;
      }
      attempt++;
    }
  }
  for (let j: u32 = 0; j < bands; j++) {
    let x = BAND_SEED + <u64>j;
    for (let r: u32 = 0; r < rows; r++) x = mix64(x ^ <u64>(load<u32>(bins + (<usize>(j * rows + r) << 2)) & 0x7FFFFFFF));
    store<u32>(keys + (<usize>j << 2), <u32>(x >> 32));
  }
}

/**
 * Sketches `count` documents given as spans of one buffer: tokenizes each (w-word shingles),
 * writes sketch i at sketches + i * (4 + 4k) and band keys i at keys + 4 * bands * i. `work`
 * must hold one u64 per shingle of the longest document (bytes / 2 + 2), `bins` B u32, `state`
 * the tokenizer's 1 KiB. Returns nothing; a document without a word gets count 0.
 */
export function sketchDocs(text: usize, spans: usize, count: u32, w: u32, k: u32, bands: u32, rows: u32, state: usize, work: usize, bins: usize, sketches: usize, keys: usize): void {
  const stride = <usize>(4 + 4 * k);
  const shingle = min<u32>(max<u32>(w, 1), MAX_SHINGLE);
  for (let i: u32 = 0; i < count; i++) {
    const s = load<u32>(spans + (<usize>i << 3));
    const e = load<u32>(spans + (<usize>i << 3), 4);
    voteReset(state);
    tokenize(text + s, e - s, shingle, state, work, JOIN_UNDERSCORE | FOLD_CASE);
    const n = load<u32>(state, 324);
    sketchHashes(work, n, k, bands, rows, bins, sketches + <usize>i * stride, keys + (<usize>(i * bands) << 2));
  }
}

/**
 * Estimated Jaccard of `count` pairs of sketches (u32 slot pairs at `pairs`, sketch of slot s at
 * base + s * stride), to f64 at `out`. A sketch holding fewer than k values holds its whole set;
 * a full one holds every element of its set up to its largest value. So every element of the
 * union up to the smaller of the full sketches' largest values is known, with whether it is in
 * both: a uniform sample of the union of at least k elements (all of it when neither sketch is
 * full, and then the answer is exact). The estimate is the fraction of the sample in both.
 */
export function estimatePairs(base: usize, k: u32, pairs: usize, count: u32, out: usize): void {
  const stride = <usize>(4 + 4 * k);
  for (let i: u32 = 0; i < count; i++) {
    const a = base + <usize>load<u32>(pairs + (<usize>i << 3)) * stride;
    const b = base + <usize>load<u32>(pairs + (<usize>i << 3), 4) * stride;
    store<f64>(out + (<usize>i << 3), estimate(a, b, k));
  }
}

// @ts-ignore: decorator
@inline function estimate(a: usize, b: usize, k: u32): f64 {
  const na = load<u32>(a);
  const nb = load<u32>(b);
  if (na == 0 || nb == 0) return 0.0; // a text without a word is like no other
  let bound: u64 = 0x100000000;
  if (na >= k) bound = min<u64>(bound, <u64>load<u32>(a + 4 + (<usize>(na - 1) << 2)));
  if (nb >= k) bound = min<u64>(bound, <u64>load<u32>(b + 4 + (<usize>(nb - 1) << 2)));
  let x: u32 = 0;
  let y: u32 = 0;
  let union: u32 = 0;
  let both: u32 = 0;
  while (x < na || y < nb) {
    const va: u64 = x < na ? <u64>load<u32>(a + 4 + (<usize>x << 2)) : 0x100000000;
    const vb: u64 = y < nb ? <u64>load<u32>(b + 4 + (<usize>y << 2)) : 0x100000000;
    const v = min<u64>(va, vb);
    if (v > bound) break;
    if (va == vb) {
      both++;
      x++;
      y++;
    } else if (va < vb) x++;
    else y++;
    union++;
  }
  return <f64>both / <f64>union;
}
