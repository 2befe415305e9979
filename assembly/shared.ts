// Entry of the shared-memory module (build/crawlsieve-shared.wasm): Bloom test and set over a
// memory that several threads import at once. A filter here is split into shards chosen by hash
// exactly as a partitioned BloomFilter chooses partitions, with the same positions inside a
// shard, so its bits equal a BloomFilter's with that many partitions.
// Bits only ever go from 0 to 1, so a plain read that sees a bit set is final; only a bit seen
// clear is set with an atomic OR, whose returned old word says whether this thread set it. No
// set is lost when two threads write the same word at once.

import { mulhi64 } from "./reduce";

// @ts-ignore: decorator
@inline function shardOf(h1: u64, h2: u64, shards: u64): u64 {
  return (<u64>(<u32>h1 ^ <u32>(h2 >> 32)) * shards) >> 32;
}

// Groups as in bloom.ts: every position of a group's keys is read first, with no dependence
// between the reads, so their cache misses overlap; then the group is set or tested on warm lines.
const GROUP: u32 = 16;
let touched: u32 = 0;

// @ts-ignore: decorator
@inline function touchGroup(bits: usize, shards: u64, shardBytes: usize, m: u64, k: u32, hashes: usize, from: u32, to: u32): void {
  let sum: u32 = 0;
  for (let i = from; i < to; i++) {
    const h = hashes + (<usize>i << 4);
    let h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    const base = bits + <usize>shardOf(h1, h2, shards) * shardBytes;
    for (let j: u32 = 0; j < k; j++) {
      sum += <u32>load<u8>(base + <usize>(mulhi64(h1, m) >> 3));
      h1 += h2;
    }
  }
  // Kept observable so the optimiser cannot drop the reads.
  touched ^= sum;
}

/**
 * Sets the k bits of each of `count` hash pairs at `hashes` in the shard the pair routes to;
 * out[i] = 1 when this call set at least one of key i's bits. Returns how many were new.
 */
export function sharedSet(bits: usize, shards: u32, shardBytes: usize, mF: f64, k: u32, hashes: usize, count: u32, out: usize): u32 {
  const m = <u64>mF;
  let added: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    if (i % GROUP == 0) touchGroup(bits, shards, shardBytes, m, k, hashes, i, min<u32>(i + GROUP, count));
    const h = hashes + (<usize>i << 4);
    let h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    const base = bits + <usize>shardOf(h1, h2, shards) * shardBytes;
    let fresh: u32 = 0;
    for (let j: u32 = 0; j < k; j++) {
      const a = mulhi64(h1, m);
      const word = base + (<usize>(a >> 5) << 2);
      const mask = <u32>1 << <u32>(a & 31);
      if ((load<u32>(word) & mask) == 0) fresh |= (atomic.or<u32>(word, mask) & mask) ^ mask;
      h1 += h2;
    }
    const isNew = fresh != 0 ? 1 : 0;
    store<u8>(out + i, <u8>isNew);
    added += isNew;
  }
  return added;
}

/** out[i] = 1 when all k bits of hash pair i are set in its shard. */
export function sharedTest(bits: usize, shards: u32, shardBytes: usize, mF: f64, k: u32, hashes: usize, count: u32, out: usize): void {
  const m = <u64>mF;
  for (let i: u32 = 0; i < count; i++) {
    if (i % GROUP == 0) touchGroup(bits, shards, shardBytes, m, k, hashes, i, min<u32>(i + GROUP, count));
    const h = hashes + (<usize>i << 4);
    let h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    const base = bits + <usize>shardOf(h1, h2, shards) * shardBytes;
    let all: u32 = 1;
    for (let j: u32 = 0; j < k && all != 0; j++) {
      const a = mulhi64(h1, m);
      all = (load<u32>(base + (<usize>(a >> 5) << 2)) >> <u32>(a & 31)) & 1;
      h1 += h2;
    }
    store<u8>(out + i, <u8>all);
  }
}

/** Set bits among `bytes` bytes at `bits` (a multiple of 8), as f64. */
export function sharedPopcount(bits: usize, bytes: usize): f64 {
  let n: u64 = 0;
  for (let end = bits + bytes; bits < end; bits += 8) n += popcnt<u64>(load<u64>(bits));
  return <f64>n;
}

/** First byte after the module's static data. */
export function sharedHeapBase(): usize {
  return __heap_base;
}
