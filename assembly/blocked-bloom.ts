// Cache-line-blocked Bloom filter: the top bits of h1 pick one 512-bit block and all k bits of a
// key fall inside it, each an independent 9-bit field: seven from h2 (least significant first),
// then seven from mix64(h2), and so on. Independent fields matter here: any progression inside
// 512 bits leaves only about 2^18 patterns, and keys sharing a block and a pattern are false
// positives of each other, which at low FP rates costs several times the target.
// One cache miss per key instead of k, at the price of a higher FP rate at equal memory,
// which the sizing code compensates for.

import { mulhi64 } from "./reduce";
import { xxh64, secondHash, mix64 } from "./xxh64";

// @ts-ignore: decorator
@inline export function testPair(bits: usize, blocks: u64, k: u32, h1: u64, h2: u64): u32 {
  return testBlock(bits + (<usize>mulhi64(h1, blocks) << 6), k, h2);
}

// @ts-ignore: decorator
@inline export function setPair(bits: usize, blocks: u64, k: u32, h1: u64, h2: u64): u32 {
  return setBlock(bits + (<usize>mulhi64(h1, blocks) << 6), k, h2);
}

/** 1 when all k in-block bits that h2 picks are set in the 64-byte block at `block`. */
// @ts-ignore: decorator
@inline export function testBlock(block: usize, k: u32, h2: u64): u32 {
  let word = h2;
  let fields = h2;
  let all: u32 = 1;
  for (let j: u32 = 0; j < k; j++) {
    if (j != 0 && j % 7 == 0) fields = word = mix64(word);
    const a = <u32>fields & 511;
    fields >>= 9;
    all &= (<u32>load<u8>(block + (a >> 3)) >> (a & 7)) & 1;
  }
  return all;
}

/** testBlock that stops at the first clear bit: a key that is absent (most keys a stage is asked about) costs about two probes, not k. */
// @ts-ignore: decorator
@inline export function hasBlock(block: usize, k: u32, h2: u64): u32 {
  let word = h2;
  let fields = h2;
  for (let j: u32 = 0; j < k; j++) {
    if (j != 0 && j % 7 == 0) fields = word = mix64(word);
    const a = <u32>fields & 511;
    fields >>= 9;
    if (((<u32>load<u8>(block + (a >> 3)) >> (a & 7)) & 1) == 0) return 0;
  }
  return 1;
}

/** Sets the k in-block bits that h2 picks in the block at `block`; 1 when one was clear (the key was new). */
// @ts-ignore: decorator
@inline export function setBlock(block: usize, k: u32, h2: u64): u32 {
  let word = h2;
  let fields = h2;
  let fresh: u32 = 0;
  for (let j: u32 = 0; j < k; j++) {
    if (j != 0 && j % 7 == 0) fields = word = mix64(word);
    const a = <u32>fields & 511;
    fields >>= 9;
    const p = block + (a >> 3);
    const mask = <u32>1 << (a & 7);
    const byte = <u32>load<u8>(p);
    fresh |= (byte & mask) ^ mask;
    store<u8>(p, byte | mask);
  }
  return fresh != 0 ? 1 : 0;
}

// Batches are worked in groups whose blocks are read first, independently, so their misses
// overlap; each group's blocks are read while the group before it is worked (see bloom.ts).
const GROUP: u32 = 16;
let touched: u32 = 0;

// @ts-ignore: decorator
@inline function touchGroup(bits: usize, blocks: u64, hashes: usize, from: u32, to: u32): void {
  let sum: u32 = 0;
  for (let i = from; i < to; i++) sum += <u32>load<u8>(bits + (<usize>mulhi64(load<u64>(hashes + (<usize>i << 4)), blocks) << 6));
  // Kept observable so the optimiser cannot drop the reads.
  touched ^= sum;
}

/** Writes 1 at out[i] when all k in-block bits of hash pair i are set, else 0. */
export function blockedTest(bits: usize, blocksF: f64, k: u32, hashes: usize, count: u32, out: usize): void {
  const blocks = <u64>blocksF;
  touchGroup(bits, blocks, hashes, 0, min<u32>(GROUP, count));
  for (let g: u32 = 0; g < count; g += GROUP) {
    const end = min<u32>(g + GROUP, count);
    // The next group's blocks are read before this group is worked, so their misses overlap it.
    touchGroup(bits, blocks, hashes, end, min<u32>(end + GROUP, count));
    for (let i = g; i < end; i++) {
      const h = hashes + (<usize>i << 4);
      store<u8>(out + i, <u8>testPair(bits, blocks, k, load<u64>(h), load<u64>(h, 8)));
    }
  }
}

/** Sets the in-block bits of every hash pair i whose skip[i] is 0; out[i] = 1 when new; returns the count new. */
export function blockedSet(bits: usize, blocksF: f64, k: u32, hashes: usize, count: u32, skip: usize, out: usize): u32 {
  const blocks = <u64>blocksF;
  let added: u32 = 0;
  touchGroup(bits, blocks, hashes, 0, min<u32>(GROUP, count));
  for (let g: u32 = 0; g < count; g += GROUP) {
    const end = min<u32>(g + GROUP, count);
    // Reading only: the next group's blocks do not depend on this group's writes.
    touchGroup(bits, blocks, hashes, end, min<u32>(end + GROUP, count));
    for (let i = g; i < end; i++) {
      let isNew: u32 = 0;
      if (skip == 0 || load<u8>(skip + i) == 0) {
        const h = hashes + (<usize>i << 4);
        isNew = setPair(bits, blocks, k, load<u64>(h), load<u64>(h, 8));
      }
      store<u8>(out + i, <u8>isNew);
      added += isNew;
    }
  }
  return added;
}

/** 1 when all in-block bits of one key are set. */
export function blockedHasKey(bits: usize, blocksF: f64, k: u32, key: usize, len: usize): u32 {
  const h1 = xxh64(key, len, 0);
  return testPair(bits, <u64>blocksF, k, h1, secondHash(h1));
}

/** Sets the in-block bits of one key; 1 when the key was new. */
export function blockedAddKey(bits: usize, blocksF: f64, k: u32, key: usize, len: usize): u32 {
  const h1 = xxh64(key, len, 0);
  return setPair(bits, <u64>blocksF, k, h1, secondHash(h1));
}

/**
 * For stores outside WASM memory (Redis): writes, per hash pair, the partition it routes to (as
 * PartitionedBits routes), its block in that partition, and the k bit offsets inside the block
 * (0..511, as testPair reads them), as k + 2 u32.
 */
export function blockedPositions(blocksF: f64, partitions: u32, k: u32, hashes: usize, count: u32, out: usize): void {
  const blocks = <u64>blocksF;
  for (let i: u32 = 0; i < count; i++) {
    const h = hashes + (<usize>i << 4);
    const h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    const o = out + <usize>i * (<usize>(k + 2) << 2);
    store<u32>(o, <u32>((<u64>(<u32>h1 ^ <u32>(h2 >> 32)) * <u64>partitions) >> 32));
    store<u32>(o + 4, <u32>mulhi64(h1, blocks));
    let word = h2;
    let fields = h2;
    for (let j: u32 = 0; j < k; j++) {
      if (j != 0 && j % 7 == 0) fields = word = mix64(word);
      store<u32>(o + (<usize>(j + 2) << 2), <u32>fields & 511);
      fields >>= 9;
    }
  }
}
