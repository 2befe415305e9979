// Split-block Bloom filter (as Apache Parquet's, here with 512-bit blocks): h1 picks one 64-byte
// block, and a key sets exactly one bit in each of the block's sixteen 32-bit words, bit
// (half * salt_w) >> 27 of word w, where half is h2's low 32 bits for words 0-7 and its high 32
// bits for words 8-15. The sixteen masks are built in four v128s and a test is four loads, four
// and-nots and one any_true, where a free placement of k bits costs k dependent loads. At equal
// memory this answers like a blocked filter with k = 16 (each word holds a key's bit with
// probability 1 - (31/32)^j after j keys in the block); src/sizing/bloom.ts sizes it. The line
// pipeline's approximate filter uses it: that filter is never saved, so it owes no file format.

import { mulhi64 } from "./reduce";

// Eight odd multipliers from Parquet's split-block filter; words 8-15 reuse them on the other half.
const SALT_A = i32x4(0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d);
const SALT_B = i32x4(0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31);

// 2^x in each 32-bit lane, x in 0..31, from two byte shuffles (wasm has no per-lane shift): each
// byte j of a lane takes x - 8j, and a table lookup turns 0..7 into 1 << (x - 8j) and anything else
// (an index of 8 or more, or a negative one read as 0xe9 or more) into 0. The float route (x into an
// f32's exponent, then an unsigned truncation) costs about thirteen x64 instructions a vector for
// the saturating conversion alone; this costs five.
const BYTE_OFFSETS = i8x16(0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24);
const BYTE_BITS = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0);

// @ts-ignore: decorator
@inline function pow2(x: v128): v128 {
  const spread = v128.shuffle<u8>(x, x, 0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
  return i8x16.swizzle(BYTE_BITS, i8x16.sub(spread, BYTE_OFFSETS));
}

// @ts-ignore: decorator
@inline function mask(half: v128, salt: v128): v128 {
  return pow2(i32x4.shr_u(i32x4.mul(half, salt), 27));
}

/** The 64-byte block of `bits` (of `blocks` blocks) that h1 picks. */
// @ts-ignore: decorator
@inline export function splitBlockOf(bits: usize, blocks: u64, h1: u64): usize {
  return bits + (<usize>mulhi64(h1, blocks) << 6);
}

/** 1 when all sixteen bits h2 picks are set in the block at `block`. */
// @ts-ignore: decorator
@inline export function splitBlockHas(block: usize, h2: u64): u32 {
  const lo = i32x4.splat(<i32>h2);
  const hi = i32x4.splat(<i32>(h2 >> 32));
  const missing = v128.or(
    v128.or(v128.andnot(mask(lo, SALT_A), v128.load(block)), v128.andnot(mask(lo, SALT_B), v128.load(block, 16))),
    v128.or(v128.andnot(mask(hi, SALT_A), v128.load(block, 32)), v128.andnot(mask(hi, SALT_B), v128.load(block, 48))),
  );
  return v128.any_true(missing) ? 0 : 1;
}

/** Sets the sixteen bits h2 picks in the block at `block`; 1 when one was clear (the key was new). */
// @ts-ignore: decorator
@inline export function splitBlockSet(block: usize, h2: u64): u32 {
  const lo = i32x4.splat(<i32>h2);
  const hi = i32x4.splat(<i32>(h2 >> 32));
  const m0 = mask(lo, SALT_A);
  const m1 = mask(lo, SALT_B);
  const m2 = mask(hi, SALT_A);
  const m3 = mask(hi, SALT_B);
  const w0 = v128.load(block);
  const w1 = v128.load(block, 16);
  const w2 = v128.load(block, 32);
  const w3 = v128.load(block, 48);
  v128.store(block, v128.or(w0, m0));
  v128.store(block, v128.or(w1, m1), 16);
  v128.store(block, v128.or(w2, m2), 32);
  v128.store(block, v128.or(w3, m3), 48);
  const missing = v128.or(v128.or(v128.andnot(m0, w0), v128.andnot(m1, w1)), v128.or(v128.andnot(m2, w2), v128.andnot(m3, w3)));
  return v128.any_true(missing) ? 1 : 0;
}

/**
 * Sets n 128-bit fingerprints, `stride` bytes apart from `src`, in the split-block filter at `bits`
 * (of blocksF blocks), each as the hash pair (low word, high word): the spilled lines a store's
 * keys are sieved against (src/lines/key-sieve.ts).
 */
export function splitBlockAddFingerprints(bits: usize, blocksF: f64, src: usize, n: u32, stride: u32): void {
  const blocks = <u64>blocksF;
  for (let i: u32 = 0; i < n; i++) {
    const at = src + <usize>i * stride;
    splitBlockSet(splitBlockOf(bits, blocks, load<u64>(at)), load<u64>(at, 8));
  }
}

/** flags[i] = 1 when fingerprint i of n (16 bytes each from `src`) is surely not in the filter, 0 when it may be. */
export function splitBlockMissFingerprints(bits: usize, blocksF: f64, src: usize, n: u32, flags: usize): void {
  const blocks = <u64>blocksF;
  for (let i: u32 = 0; i < n; i++) {
    const at = src + (<usize>i << 4);
    store<u8>(flags + <usize>i, splitBlockHas(splitBlockOf(bits, blocks, load<u64>(at)), load<u64>(at, 8)) ^ 1);
  }
}
