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
//   `bands` of `rows`, each band hashed to a 64-bit value whose high 32 bits are its LSH key; the
//   near-duplicate filter keeps all 64 (keyWords 2), since a billion 32-bit keys would collide.
//
// Layout of one sketch (stride 4 + 4k bytes): u32 count (distinct values kept, at most k),
// then k u32 values ascending (unused ones 0xFFFFFFFF).

import { tokenize, voteReset, JOIN_UNDERSCORE, FOLD_CASE, MAX_SHINGLE, UNSPACED_FLAG } from "./simhash";
import { mix64 } from "./xxh64";
import { sortValues } from "./sort";

const EMPTY: u32 = 0xFFFFFFFF;
const BAND_SEED: u64 = 0x6A09E667F3BCC909;

// Sorts the `m` values at `from`, then copies the distinct ones, at most k, to `values`; returns how many.
// @ts-ignore: decorator
@inline function smallestDistinct(from: usize, m: u32, k: u32, values: usize): u32 {
  sortValues<u32>(from, <usize>m);
  let count: u32 = 0;
  for (let i: u32 = 0; i < m && count < k; i++) {
    const v = load<u32>(from + (<usize>i << 2));
    if (count == 0 || v != load<u32>(values + (<usize>(count - 1) << 2))) {
      store<u32>(values + (<usize>count << 2), v);
      count++;
    }
  }
  return count;
}

/**
 * Bottom-k and OPH band keys of `n` shingle hashes at `hashes` (overwritten: the pass packs their
 * hi32 values into the first half); writes the sketch at `sketch`, `bands` keys of `keyWords` u32
 * (1: the high half of the band's hash, 2: all of it) at `keys`, uses B = bands * rows u32 at `bins`.
 */
export function sketchHashes(hashes: usize, n: u32, k: u32, bands: u32, rows: u32, bins: usize, sketch: usize, keys: usize, keyWords: u32): void {
  const values = sketch + 4;
  const b = bands * rows;
  for (let i: u32 = 0; i < b; i++) store<u32>(bins + (<usize>i << 2), EMPTY);
  // One pass: OPH bins from lo32, hi32 packed in place (u32 i is written after u64 i is read).
  for (let i: u32 = 0; i < n; i++) {
    const h = load<u64>(hashes + (<usize>i << 3));
    store<u32>(hashes + (<usize>i << 2), <u32>(h >> 32));
    // The bin is the top of lo32; the value keeps its low 31 bits (the top bit marks copies below).
    const lo = <u32>h;
    const at = bins + (<usize>(<u32>((<u64>lo * <u64>b) >> 32)) << 2);
    const v31 = lo & 0x7FFFFFFF;
    if (v31 < load<u32>(at)) store<u32>(at, v31);
  }
  // Bottom-k: the k smallest distinct of n uniform values are, almost surely, all below
  // 2(k + 32)/n of the range; those are copied to the free upper half and sorted alone. When
  // repeats leave fewer than k distinct there (and some were left out), all n are sorted.
  let count: u32 = 0;
  if (<u64>n > 2 * <u64>k + 64) {
    const limit = (<u64>(2 * k + 64) << 32) / <u64>n;
    const upper = hashes + (<usize>n << 2);
    let m: u32 = 0;
    for (let i: u32 = 0; i < n; i++) {
      const v = load<u32>(hashes + (<usize>i << 2));
      if (<u64>v < limit) {
        store<u32>(upper + (<usize>m << 2), v);
        m++;
      }
    }
    count = smallestDistinct(upper, m, k, values);
    if (count < k && m < n) count = smallestDistinct(hashes, n, k, values);
  } else {
    count = smallestDistinct(hashes, n, k, values);
  }
  store<u32>(sketch, count);
  for (let i = count; i < k; i++) store<u32>(values + (<usize>i << 2), EMPTY);
  if (n == 0) {
    for (let j: u32 = 0; j < bands * keyWords; j++) store<u32>(keys + (<usize>j << 2), 0);
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
    if (keyWords == 2) store<u64>(keys + (<usize>j << 3), x);
    else store<u32>(keys + (<usize>j << 2), <u32>(x >> 32));
  }
}

/**
 * Sketches `count` documents given as spans of one buffer: tokenizes each (w-word shingles),
 * writes sketch i at sketches + i * (4 + 4k) and band keys i at keys + 4 * keyWords * bands * i. `work`
 * must hold shingleCapacity(bytes of the longest document) u64, `bins` B u32, `state`
 * TOKEN_STATE_BYTES. A document without a word gets count 0. Returns how many documents
 * hold letters of a script written without spaces, and sets byte i at `unspaced` for each (the
 * caller segments those into words and sketches them again).
 */
export function sketchDocs(text: usize, spans: usize, count: u32, w: u32, k: u32, bands: u32, rows: u32, state: usize, work: usize, bins: usize, sketches: usize, keys: usize, unspaced: usize, keyWords: u32): u32 {
  let found: u32 = 0;
  const stride = <usize>(4 + 4 * k);
  const shingle = min<u32>(max<u32>(w, 1), MAX_SHINGLE);
  for (let i: u32 = 0; i < count; i++) {
    const s = load<u32>(spans + (<usize>i << 3));
    const e = load<u32>(spans + (<usize>i << 3), 4);
    voteReset(state);
    store<u32>(state + UNSPACED_FLAG, 0);
    tokenize(text + s, e - s, shingle, state, work, JOIN_UNDERSCORE | FOLD_CASE);
    const n = load<u32>(state, 324);
    sketchHashes(work, n, k, bands, rows, bins, sketches + <usize>i * stride, keys + (<usize>(i * bands * keyWords) << 2), keyWords);
    const flag = load<u32>(state + UNSPACED_FLAG);
    store<u8>(unspaced + <usize>i, <u8>flag);
    found += flag;
  }
  return found;
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
