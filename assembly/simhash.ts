// SimHash (Charikar; as used for crawling by Manku, Jain, Das Sarma, WWW 2007): every feature's
// 64-bit hash votes +1 or -1 on each of the 64 positions; the signs give the fingerprint.
// Features are word shingles: runs of w consecutive tokens, the token hashes (XXH64 of the
// token's UTF-8) chained through mix64. Term frequency is the default weight, which is what
// voting once per occurrence gives. A text with fewer than w tokens is one feature of them all.
//
// Tokens here: maximal runs of word characters in UTF-8, where ASCII letters and digits are word
// characters (A-Z lowered in place) and so is every code point from U+0080 up except
// punctuation, symbol and space blocks (see isSeparator). The caller has already applied NFKC
// and lower-casing to non-ASCII text, and segments Han, Kana, Thai and similar scripts itself.
//
// Votes are counted with SIMD: one u8 lane per position counts the features whose bit is 1
// (four v128 of 16 lanes), flushed into u32 totals before a lane can overflow. Bit b of the
// fingerprint is 1 when 2 * ones[b] > features (a tie gives 0).
//
// State at `state` (the caller's TOKEN_STATE_BYTES of scratch): [0, 64) u8 lane counters; [64, 320)
// u32 totals; [320] u32 features since the last flush; [324] u32 features in all; [328] the
// unspaced flag; [384, 512) token ring (simhashWeighted sums its 64 f64 over [0, 512)).

import { xxh64, mix64 } from "./xxh64";
import { sortValues } from "./sort";

const SHINGLE_SEED: u64 = 0x9E3779B97F4A7C15;
const RING: usize = 384;
/** Bytes of the state the tokenizing kernels keep in the caller's scratch; the wrapper sizes its scratch by this global. */
export const TOKEN_STATE_BYTES: u32 = 1024;
/** Most tokens per shingle (the ring holds 16 token hashes); the wrapper validates `shingle` against this global. */
export const MAX_SHINGLE: u32 = 16;

/**
 * Most shingle hashes a text of `len` UTF-8 bytes can give, so the size of a `work` or `out`
 * region in u64: a token is a byte and a separator at least, and a short text still gives one.
 */
export function shingleCapacity(len: u32): u32 {
  return len / 2 + 2;
}

// @ts-ignore: decorator
@inline function flush(state: usize): void {
  for (let b: usize = 0; b < 64; b++) {
    store<u32>(state + 64 + (b << 2), load<u32>(state + 64 + (b << 2)) + <u32>load<u8>(state + b));
  }
  memory.fill(state, 0, 64);
  store<u32>(state, 0, 320);
}

/** Clears the vote state before a new document. */
export function voteReset(state: usize): void {
  memory.fill(state, 0, 328);
}

// @ts-ignore: decorator
@inline function vote(state: usize, h: u64): void {
  const v = i64x2.splat(<i64>h);
  const mask = v128(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  // Lanes 0-7 take byte 2c of the hash, lanes 8-15 byte 2c + 1: 16 positions per chunk.
  const c0 = i8x16.eq(v128.and(i8x16.swizzle(v, v128(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)), mask), mask);
  const c1 = i8x16.eq(v128.and(i8x16.swizzle(v, v128(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)), mask), mask);
  const c2 = i8x16.eq(v128.and(i8x16.swizzle(v, v128(4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5)), mask), mask);
  const c3 = i8x16.eq(v128.and(i8x16.swizzle(v, v128(6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7)), mask), mask);
  // eq gives -1 where the bit is set: subtracting adds one.
  v128.store(state, i8x16.sub(v128.load(state), c0));
  v128.store(state, i8x16.sub(v128.load(state, 16), c1), 16);
  v128.store(state, i8x16.sub(v128.load(state, 32), c2), 32);
  v128.store(state, i8x16.sub(v128.load(state, 48), c3), 48);
  const pending = load<u32>(state, 320) + 1;
  store<u32>(state, pending, 320);
  store<u32>(state, load<u32>(state, 324) + 1, 324);
  if (pending == 255) flush(state);
}

/** The fingerprint from the votes so far (0 when no feature was voted). */
export function voteFinish(state: usize): u64 {
  flush(state);
  const features = <u64>load<u32>(state, 324);
  let fp: u64 = 0;
  for (let b: u32 = 0; b < 64; b++) {
    if (<u64>load<u32>(state + 64 + (<usize>b << 2)) * 2 > features) fp |= <u64>1 << b;
  }
  return fp;
}

// Token stream -> shingles. `seen` counts tokens of this document; `out` = 0 votes, else the
// shingle hashes are written there (for callers that weight features themselves).
// @ts-ignore: decorator
@inline function feedToken(state: usize, t: u64, seen: u32, w: u32, out: usize): u32 {
  store<u64>(state + RING + (<usize>(seen % w) << 3), t);
  seen++;
  if (seen >= w) {
    let h = SHINGLE_SEED;
    for (let j: u32 = 0; j < w; j++) h = mix64(h ^ load<u64>(state + RING + (<usize>((seen - w + j) % w) << 3)));
    emit(state, h, out);
  }
  return seen;
}

// @ts-ignore: decorator
@inline function emit(state: usize, h: u64, out: usize): void {
  if (out == 0) {
    vote(state, h);
  } else {
    const n = load<u32>(state, 324);
    store<u64>(out + (<usize>n << 3), h);
    store<u32>(state, n + 1, 324);
  }
}

// A document shorter than w tokens is one feature of all its tokens.
// @ts-ignore: decorator
@inline function finishShort(state: usize, seen: u32, w: u32, out: usize): void {
  if (seen == 0 || seen >= w) return;
  let h = SHINGLE_SEED;
  for (let j: u32 = 0; j < seen; j++) h = mix64(h ^ load<u64>(state + RING + (<usize>j << 3)));
  emit(state, h, out);
}

// Punctuation, symbols and spaces above U+007F end a token; everything else is a word character.
// @ts-ignore: decorator
@inline function isSeparator(cp: u32): bool {
  if (cp < 0x100) return cp < 0xC0 && cp != 0xAA && cp != 0xB5 && cp != 0xBA || cp == 0xD7 || cp == 0xF7;
  if (cp >= 0x2000 && cp <= 0x2BFF) return true; // general punctuation .. arrows, math, box, shapes, dingbats
  if (cp >= 0x3000 && cp <= 0x303F) return true; // CJK symbols and punctuation
  if (cp >= 0xFE30 && cp <= 0xFE4F) return true; // CJK compatibility forms
  if (cp >= 0xFF00 && cp <= 0xFF0F) return true; // fullwidth punctuation (if not NFKC-mapped)
  if (cp >= 0x1F000 && cp <= 0x1FAFF) return true; // emoji, pictographs
  return cp == 0xFEFF;
}

/** Tokenizer flag: "_" is a word character (as in \w and Unicode word boundaries: snake_case is one word). */
export const JOIN_UNDERSCORE: u32 = 1;
/** Tokenizer flag: upper-case Latin-1, Latin Extended-A, Greek and Cyrillic letters are lowered in place. */
export const FOLD_CASE: u32 = 2;

// Tokenizes `len` bytes of UTF-8 at `text` (lowering A-Z in place) and feeds the tokens. `flags`
// (0 for SimHash, whose fingerprints are pinned) adds the rules above.
export function tokenize(text: usize, len: usize, w: u32, state: usize, out: usize, flags: u32): void {
  const end = text + len;
  const underscore: u32 = (flags & JOIN_UNDERSCORE) != 0 ? 0x5F : 0x30; // "0" is a word character anyway
  const fold = (flags & FOLD_CASE) != 0;
  let p = text;
  let seen: u32 = 0;
  while (p < end) {
    // Skip separators.
    let start = p;
    while (p < end) {
      const c = <u32>load<u8>(p);
      if (c < 0x80) {
        if ((c - 0x30 < 10) || ((c | 0x20) - 0x61 < 26) || c == underscore) break;
        p++;
      } else {
        const n = utf8Length(c);
        if (!isSeparator(decode(p, n, end))) break;
        p += n;
      }
    }
    start = p;
    // A run of word characters.
    while (p < end) {
      const c = <u32>load<u8>(p);
      if (c < 0x80) {
        if (c - 0x41 < 26) store<u8>(p, <u8>(c | 0x20));
        else if (!((c - 0x30 < 10) || (c - 0x61 < 26) || c == underscore)) break;
        p++;
      } else {
        const n = utf8Length(c);
        const cp = decode(p, n, end);
        if (isSeparator(cp)) break;
        if (fold) {
          if (n == 2) {
            const lower = foldCase(cp);
            if (lower != cp) {
              store<u8>(p, <u8>(0xC0 | (lower >> 6)));
              store<u8>(p, <u8>(0x80 | (lower & 0x3F)), 1);
            }
          } else if (isUnspaced(cp)) store<u32>(state, 1, UNSPACED_FLAG);
        }
        p += n;
      }
    }
    if (p > start) seen = feedToken(state, xxh64(start, p - start, 0), seen, w, out);
  }
  finishShort(state, seen, w, out);
}

/** Offset in the tokenizer state of a u32 set to 1 (with FOLD_CASE) when a text has a letter of a script written without spaces. */
export const UNSPACED_FLAG: usize = 328;

// Han, Hiragana, Katakana, Thai, Lao, Myanmar and Khmer: the scripts the platform's word
// segmentation must cut (see src/simhash/text.ts UNSPACED_SCRIPTS).
/** True for a letter of a script written without spaces (exact-text.ts hashes such texts as they are). */
// @ts-ignore: decorator
@inline export function isUnspaced(cp: u32): bool {
  if (cp < 0x0E00) return false;
  if (cp <= 0x0EFF) return true; // Thai, Lao
  if (cp >= 0x1000 && cp <= 0x109F) return true; // Myanmar
  if (cp >= 0x1780 && cp <= 0x17FF) return true; // Khmer
  if (cp >= 0x3040 && cp <= 0x30FF) return true; // Hiragana, Katakana
  if (cp >= 0x31F0 && cp <= 0x31FF) return true;
  if (cp >= 0x3400 && cp <= 0x9FFF) return true; // Han
  if (cp >= 0xF900 && cp <= 0xFAFF) return true;
  if (cp >= 0xFF66 && cp <= 0xFF9D) return true; // halfwidth Katakana
  return cp >= 0x20000 && cp <= 0x3FFFF; // Han extensions
}

// The simple lower-case mapping of the two-byte letters that change case within two bytes
// (Unicode's UnicodeData.txt for these blocks); anything else is returned as it is.
// @ts-ignore: decorator
@inline function foldCase(cp: u32): u32 {
  if (cp < 0x100) return cp >= 0xC0 && cp <= 0xDE && cp != 0xD7 ? cp + 0x20 : cp;
  if (cp < 0x180) {
    // Latin Extended-A: pairs (upper even, lower odd) except 0x139-0x148 and 0x179-0x17E (upper odd).
    if (cp == 0x130 || cp == 0x131 || cp == 0x138 || cp == 0x149 || cp == 0x17F) return cp;
    if (cp == 0x178) return 0xFF;
    if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) return (cp & 1) != 0 ? cp + 1 : cp;
    return (cp & 1) == 0 ? cp + 1 : cp;
  }
  if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) return cp + 0x20; // Greek capitals
  if (cp == 0x3C2) return 0x3C3; // final sigma folds to sigma, as Unicode case folding does
  if (cp == 0x386) return 0x3AC;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 0x25;
  if (cp == 0x38C) return 0x3CC;
  if (cp == 0x38E || cp == 0x38F) return cp + 0x3F;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20; // Cyrillic capitals
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  if (cp >= 0x460 && cp <= 0x4FF && (cp < 0x482 || cp > 0x489)) {
    // Cyrillic supplementary letters: pairs (upper even, lower odd), except 0x4C0-0x4CE (upper odd) and 0x4CF.
    if (cp == 0x4C0) return 0x4CF;
    if (cp >= 0x4C1 && cp <= 0x4CE) return (cp & 1) != 0 ? cp + 1 : cp;
    if (cp == 0x4CF) return cp;
    return (cp & 1) == 0 ? cp + 1 : cp;
  }
  return cp;
}

// @ts-ignore: decorator
@inline function utf8Length(lead: u32): usize {
  return lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
}

// Decodes one sequence (input is well-formed: it comes from TextEncoder).
// @ts-ignore: decorator
@inline function decode(p: usize, n: usize, end: usize): u32 {
  if (p + n > end) return 0xFFFD;
  const c = <u32>load<u8>(p);
  if (n == 2) return ((c & 0x1F) << 6) | (<u32>load<u8>(p, 1) & 0x3F);
  if (n == 3) return ((c & 0x0F) << 12) | ((<u32>load<u8>(p, 1) & 0x3F) << 6) | (<u32>load<u8>(p, 2) & 0x3F);
  if (n == 4) return ((c & 0x07) << 18) | ((<u32>load<u8>(p, 1) & 0x3F) << 12) | ((<u32>load<u8>(p, 2) & 0x3F) << 6) | (<u32>load<u8>(p, 3) & 0x3F);
  return 0xFFFD;
}

/** SimHash of one text of `len` UTF-8 bytes at `text` with w-token shingles (w <= 16). */
export function simhashText(text: usize, len: usize, w: u32, state: usize): u64 {
  voteReset(state);
  tokenize(text, len, min<u32>(max<u32>(w, 1), MAX_SHINGLE), state, 0, 0);
  return voteFinish(state);
}

/** SimHash of `count` texts given as spans of one buffer; fingerprint i to out (u64). */
export function simhashDocs(text: usize, spans: usize, count: u32, w: u32, state: usize, out: usize): void {
  for (let i: u32 = 0; i < count; i++) {
    const s = load<u32>(spans + (<usize>i << 3));
    const e = load<u32>(spans + (<usize>i << 3), 4);
    store<u64>(out + (<usize>i << 3), simhashText(text + s, e - s, w, state));
  }
}

function tokensFeed(keys: usize, spans: usize, count: u32, w: u32, state: usize, out: usize): void {
  let seen: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    const s = load<u32>(spans + (<usize>i << 3));
    const e = load<u32>(spans + (<usize>i << 3), 4);
    seen = feedToken(state, xxh64(keys + s, e - s, 0), seen, w, out);
  }
  finishShort(state, seen, w, out);
}

/** Writes the shingle hashes of a text to `out` (u64 each) and returns how many. */
export function shingleText(text: usize, len: usize, w: u32, state: usize, out: usize): u32 {
  voteReset(state);
  tokenize(text, len, min<u32>(max<u32>(w, 1), MAX_SHINGLE), state, out, 0);
  return load<u32>(state, 324);
}

/** Writes the shingle hashes of a pre-segmented document to `out` and returns how many. */
export function shingleTokens(keys: usize, spans: usize, count: u32, w: u32, state: usize, out: usize): u32 {
  voteReset(state);
  tokensFeed(keys, spans, count, min<u32>(max<u32>(w, 1), MAX_SHINGLE), state, out);
  return load<u32>(state, 324);
}

/** SimHash of `count` weighted features: hashes (u64) and weights (f64); bit b is 1 when the weights voting 1 outweigh those voting 0. */
export function simhashWeighted(hashes: usize, weights: usize, count: u32, sums: usize): u64 {
  memory.fill(sums, 0, 512);
  for (let i: u32 = 0; i < count; i++) {
    const h = load<u64>(hashes + (<usize>i << 3));
    const wt = load<f64>(weights + (<usize>i << 3));
    for (let b: u32 = 0; b < 64; b++) {
      const at = sums + (<usize>b << 3);
      store<f64>(at, load<f64>(at) + (((h >> b) & 1) != 0 ? wt : -wt));
    }
  }
  let fp: u64 = 0;
  for (let b: u32 = 0; b < 64; b++) if (load<f64>(sums + (<usize>b << 3)) > 0) fp |= <u64>1 << b;
  return fp;
}

/** Hamming distance of two fingerprints. */
export function hamming(a: u64, b: u64): u32 {
  return <u32>popcnt<u64>(a ^ b);
}

/**
 * SimHash with one vote per distinct shingle (set weighting: a shingle repeated on a page, as
 * navigation is, counts once). `work` holds shingleCapacity(len) u64.
 */
export function simhashDistinctText(text: usize, len: usize, w: u32, state: usize, work: usize): u64 {
  voteReset(state);
  tokenize(text, len, min<u32>(max<u32>(w, 1), MAX_SHINGLE), state, work, 0);
  const n = load<u32>(state, 324);
  sortValues<u64>(work, <usize>n);
  voteReset(state);
  for (let i: u32 = 0; i < n; i++) {
    const h = load<u64>(work + (<usize>i << 3));
    if (i == 0 || h != load<u64>(work + (<usize>(i - 1) << 3))) vote(state, h);
  }
  return voteFinish(state);
}

/** simhashDistinctText of `count` texts given as spans of one buffer; fingerprint i to out (u64). */
export function simhashDistinctDocs(text: usize, spans: usize, count: u32, w: u32, state: usize, work: usize, out: usize): void {
  for (let i: u32 = 0; i < count; i++) {
    const s = load<u32>(spans + (<usize>i << 3));
    const e = load<u32>(spans + (<usize>i << 3), 4);
    store<u64>(out + (<usize>i << 3), simhashDistinctText(text + s, e - s, w, state, work));
  }
}
