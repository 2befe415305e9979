// Standard Bloom filter over a bit array of m bits (bit i = byte i >> 3, bit i & 7, LSB first).
// Positions by double hashing in 64 bits, then mapped to [0, m): g_i = reduce(h1 + i*h2 mod 2^64, m)
// with reduce(x, m) = floor(x * m / 2^64). Reducing h1 and h2 to [0, m) first would leave only
// m^2 distinct position sets, and for small filters with low fpRate the chance that two keys share
// all k positions (about n / m^2) then exceeds the target FP rate; 64-bit steps avoid that.
// Batch kernels take precomputed hash pairs (see hashPairs) so one hashing pass can serve several
// filters (scalable stages, partitions) and the random memory accesses are issued back to back.
// m crosses the boundary as f64 (exact below 2^53) so no BigInt is made per call.

import { mulhi64 } from "./reduce";
import { xxh64, secondHash } from "./xxh64";

// @ts-ignore: decorator
@inline function testPair(bits: usize, m: u64, k: u32, h1: u64, h2: u64): u32 {
  let all: u32 = 1;
  for (let j: u32 = 0; j < k; j++) {
    const a = mulhi64(h1, m);
    all &= (<u32>load<u8>(bits + <usize>(a >> 3)) >> <u32>(a & 7)) & 1;
    h1 += h2;
  }
  return all;
}

// @ts-ignore: decorator
@inline function setPair(bits: usize, m: u64, k: u32, h1: u64, h2: u64): u32 {
  let fresh: u32 = 0;
  for (let j: u32 = 0; j < k; j++) {
    const a = mulhi64(h1, m);
    const p = bits + <usize>(a >> 3);
    const mask = <u32>1 << <u32>(a & 7);
    const byte = <u32>load<u8>(p);
    fresh |= (byte & mask) ^ mask;
    store<u8>(p, byte | mask);
    h1 += h2;
  }
  return fresh != 0 ? 1 : 0;
}

// A batch is worked in groups: every position of a group's keys is computed once (into one of
// two position buffers) and its byte read with no dependence between the reads, so the CPU
// overlaps their cache and TLB misses (wasm has no prefetch instruction); then the group is
// tested or set from the stored positions on warm lines. The next group is gathered before the
// current one is applied, so its misses are under way while this group's bits are worked. At
// 1e7 keys this is what separates memory latency from memory throughput.
const GROUP: u32 = 16;
/** Most hash functions a filter may use (MAX_HASHES in src/bloom/geometry.ts). */
const MAX_K: u32 = 64;
const BUFFER_BYTES: usize = <usize>(GROUP * MAX_K * 8);
// Two groups' bit positions, GROUP * k each (static data: kernels allocate nothing).
const POSITIONS: usize = memory.data(<i32>(2 * GROUP * MAX_K * 8), 16);
let touched: u32 = 0;

/** reduce(h, m) = floor(h * m / 2^64); for m <= 2^32 (filters up to 512 MiB) in two multiplies, not four. */
// @ts-ignore: decorator
@inline function reduce(h: u64, m: u64, small: bool): u64 {
  return small ? ((h >> 32) * m + (((h & 0xFFFFFFFF) * m) >> 32)) >> 32 : mulhi64(h, m);
}

// @ts-ignore: decorator
@inline function gatherGroup(bits: usize, m: u64, small: bool, k: u32, hashes: usize, from: u32, to: u32, p: usize): void {
  let sum: u32 = 0;
  for (let i = from; i < to; i++) {
    const h = hashes + (<usize>i << 4);
    let h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    for (let j: u32 = 0; j < k; j++) {
      const a = reduce(h1, m, small);
      store<u64>(p, a);
      sum += <u32>load<u8>(bits + <usize>(a >> 3));
      p += 8;
      h1 += h2;
    }
  }
  // Kept observable so the optimiser cannot drop the reads.
  touched ^= sum;
}

/** Writes 1 at out[i] when all k bits of hash pair i are set, else 0. */
export function bloomTest(bits: usize, mF: f64, k: u32, hashes: usize, count: u32, out: usize): void {
  const m = <u64>mF;
  if (k > MAX_K) {
    // More positions than POSITIONS holds (no filter the library sizes has this): key by key.
    for (let i: u32 = 0; i < count; i++) {
      const h = hashes + (<usize>i << 4);
      store<u8>(out + i, <u8>testPair(bits, m, k, load<u64>(h), load<u64>(h, 8)));
    }
    return;
  }
  const small = m <= 0x100000000;
  let buffer: usize = 0;
  if (count > 0) gatherGroup(bits, m, small, k, hashes, 0, min<u32>(GROUP, count), POSITIONS);
  for (let g: u32 = 0; g < count; g += GROUP) {
    const end = min<u32>(g + GROUP, count);
    if (end < count) gatherGroup(bits, m, small, k, hashes, end, min<u32>(end + GROUP, count), POSITIONS + (buffer ^ BUFFER_BYTES));
    let p = POSITIONS + buffer;
    for (let i = g; i < end; i++) {
      // No branch and no early exit: every key's k reads are independent of the others'.
      let all: u32 = 1;
      for (let j: u32 = 0; j < k; j++) {
        const a = load<u64>(p);
        all &= (<u32>load<u8>(bits + <usize>(a >> 3)) >> <u32>(a & 7)) & 1;
        p += 8;
      }
      store<u8>(out + i, <u8>all);
    }
    buffer ^= BUFFER_BYTES;
  }
}

/**
 * Sets the k bits of every hash pair i whose skip[i] is 0 (skip = 0: no skip list) and writes
 * 1 at out[i] when at least one of them was 0 before (the key was new); returns how many were new.
 * Keys are set in order, so of two equal keys in one batch the first is the new one.
 */
export function bloomSet(bits: usize, mF: f64, k: u32, hashes: usize, count: u32, skip: usize, out: usize): u32 {
  const m = <u64>mF;
  let added: u32 = 0;
  if (k > MAX_K) {
    for (let i: u32 = 0; i < count; i++) {
      const h = hashes + (<usize>i << 4);
      const isNew = skip == 0 || load<u8>(skip + i) == 0 ? setPair(bits, m, k, load<u64>(h), load<u64>(h, 8)) : 0;
      store<u8>(out + i, <u8>isNew);
      added += isNew;
    }
    return added;
  }
  const small = m <= 0x100000000;
  let buffer: usize = 0;
  if (count > 0) gatherGroup(bits, m, small, k, hashes, 0, min<u32>(GROUP, count), POSITIONS);
  for (let g: u32 = 0; g < count; g += GROUP) {
    const end = min<u32>(g + GROUP, count);
    // Gathering only reads: the next group's positions do not depend on this group's writes.
    if (end < count) gatherGroup(bits, m, small, k, hashes, end, min<u32>(end + GROUP, count), POSITIONS + (buffer ^ BUFFER_BYTES));
    let p = POSITIONS + buffer;
    for (let i = g; i < end; i++) {
      let fresh: u32 = 0;
      if (skip == 0 || load<u8>(skip + i) == 0) {
        for (let j: u32 = 0; j < k; j++) {
          const a = load<u64>(p + (<usize>j << 3));
          const q = bits + <usize>(a >> 3);
          const mask = <u32>1 << <u32>(a & 7);
          const byte = <u32>load<u8>(q);
          fresh |= (byte & mask) ^ mask;
          store<u8>(q, byte | mask);
        }
      }
      p += <usize>k << 3;
      const isNew: u32 = fresh != 0 ? 1 : 0;
      store<u8>(out + i, <u8>isNew);
      added += isNew;
    }
    buffer ^= BUFFER_BYTES;
  }
  return added;
}

/** 1 when all k bits of the key of `len` bytes at `key` are set: one call for a single key. */
export function bloomHasKey(bits: usize, mF: f64, k: u32, key: usize, len: usize): u32 {
  const h1 = xxh64(key, len, 0);
  return testPair(bits, <u64>mF, k, h1, secondHash(h1));
}

/** Sets the k bits of one key; 1 when the key was new. */
export function bloomAddKey(bits: usize, mF: f64, k: u32, key: usize, len: usize): u32 {
  const h1 = xxh64(key, len, 0);
  return setPair(bits, <u64>mF, k, h1, secondHash(h1));
}

/** Number of set bits among `bytes` bytes at `bits` (bytes a multiple of 8), as f64. */
export function popcountBytes(bits: usize, bytes: usize): f64 {
  let n: u64 = 0;
  const end = bits + bytes;
  while (bits < end) {
    n += popcnt<u64>(load<u64>(bits));
    bits += 8;
  }
  return <f64>n;
}

// @ts-ignore: decorator
@inline function bitAt(bits: usize, i: u64): u64 {
  return <u64>((<u32>load<u8>(bits + <usize>(i >> 3)) >> <u32>(i & 7)) & 1);
}

/** Set bits among positions [from, to) of the bit array at `bits`, for vectors that start or end inside a byte (bit i is bit i & 7 of byte i >> 3). */
export function popcountRange(bits: usize, fromF: f64, toF: f64): f64 {
  const to = <u64>toF;
  let i = <u64>fromF;
  let n: u64 = 0;
  // Single bits up to a word boundary and after the last whole word; whole words between.
  while (i < to && (i & 63) != 0) {
    n += bitAt(bits, i);
    i++;
  }
  while (i + 64 <= to) {
    n += popcnt<u64>(load<u64>(bits + <usize>(i >> 3)));
    i += 64;
  }
  while (i < to) {
    n += bitAt(bits, i);
    i++;
  }
  return <f64>n;
}

/**
 * For stores outside WASM memory (Redis): writes, per hash pair, the partition it routes to
 * (as PartitionedBits routes) and its k bit positions inside that partition, as k + 1 u32.
 */
export function bloomPositions(mF: f64, partitions: u32, k: u32, hashes: usize, count: u32, out: usize): void {
  const m = <u64>mF;
  for (let i: u32 = 0; i < count; i++) {
    const h = hashes + (<usize>i << 4);
    let h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    const o = out + <usize>i * (<usize>(k + 1) << 2);
    store<u32>(o, <u32>((<u64>(<u32>h1 ^ <u32>(h2 >> 32)) * <u64>partitions) >> 32));
    for (let j: u32 = 0; j < k; j++) {
      store<u32>(o + (<usize>(j + 1) << 2), <u32>mulhi64(h1, m));
      h1 += h2;
    }
  }
}
