// The in-memory seen-set of the line pipeline: 128-bit fingerprints in 64-byte buckets of four,
// so a look-up reads one cache line (a probe run rarely spills into the next, adjacent line).
// The table is P partitions (the top bits of the fingerprint's high word) of C buckets each
// (home bucket = multiply-high of the low word), linear probing inside a partition. Keys are
// never removed, so the first empty slot of a probe run ends a look-up and takes an insert.
// An all-zero key marks an empty slot; the one fingerprint that is all zero is stored as 1
// (a 2^-128 merge, far below the collision rate of the fingerprint itself).
// Growth is in place, partition by partition from the last, through a scratch of one partition,
// so its peak is the new table plus 1/P of the old one (no second full table ever exists).

import { mulhi64 } from "./reduce";
import { splitBlockOf, splitBlockSet } from "./split-block";

const BUCKET: usize = 64;

// @ts-ignore: decorator
@inline export function partitionOf(hi: u64, logParts: u32): u32 {
  return logParts == 0 ? 0 : <u32>(hi >> (64 - <u64>logParts));
}

// @ts-ignore: decorator
@inline export function homeBucket(table: usize, part: u32, buckets: u32, lo: u64): usize {
  return table + (<usize>part * <usize>buckets + <usize>mulhi64(lo, <u64>buckets)) * BUCKET;
}

/**
 * Finds (lo, hi) in its partition (base .. base + buckets * 64) from `bucket`, inserting it at the
 * first empty slot when absent. Returns 1 when the key was inserted (new), 0 when present.
 * The caller guarantees the partition has an empty slot.
 */
// @ts-ignore: decorator
@inline export function findOrInsert(base: usize, end: usize, bucket: usize, lo: u64, hi: u64): u32 {
  let p = bucket;
  while (true) {
    for (let s: usize = 0; s < BUCKET; s += 16) {
      const a = load<u64>(p + s);
      const b = load<u64>(p + s, 8);
      if (a == lo && b == hi) return 0;
      if ((a | b) == 0) {
        store<u64>(p + s, lo);
        store<u64>(p + s, hi, 8);
        return 1;
      }
    }
    p += BUCKET;
    if (p == end) p = base;
  }
}

/** 1 when (lo, hi) is in its partition; the key must not be all zero. */
// @ts-ignore: decorator
@inline export function contains(base: usize, end: usize, bucket: usize, lo: u64, hi: u64): u32 {
  let p = bucket;
  while (true) {
    for (let s: usize = 0; s < BUCKET; s += 16) {
      const a = load<u64>(p + s);
      const b = load<u64>(p + s, 8);
      if (a == lo && b == hi) return 1;
      if ((a | b) == 0) return 0;
    }
    p += BUCKET;
    if (p == end) p = base;
  }
}

/**
 * Grows every partition from `oldBuckets` to `newBuckets` buckets in place (memory must already
 * reach table + parts * newBuckets * 64, plus oldBuckets * 64 of scratch at `scratch`, which may
 * lie after the new table). counts[p] (u32) stays valid: keys keep their partition.
 */
export function bucketsGrow(table: usize, logParts: u32, oldBuckets: u32, newBuckets: u32, scratch: usize): void {
  const parts: u32 = 1 << logParts;
  const oldBytes = <usize>oldBuckets * BUCKET;
  const newBytes = <usize>newBuckets * BUCKET;
  // From the last partition down: new partition p starts at or after old partition p's start
  // and ends before any later new partition, so nothing unread is overwritten.
  for (let p = <i32>parts - 1; p >= 0; p--) {
    const from = table + <usize>p * oldBytes;
    const to = table + <usize>p * newBytes;
    memory.copy(scratch, from, oldBytes);
    memory.fill(to, 0, newBytes);
    const end = to + newBytes;
    for (let s: usize = 0; s < oldBytes; s += 16) {
      const lo = load<u64>(scratch + s);
      const hi = load<u64>(scratch + s, 8);
      if ((lo | hi) == 0) continue;
      findOrInsert(to, end, to + <usize>mulhi64(lo, <u64>newBuckets) * BUCKET, lo, hi);
    }
  }
}

/**
 * Sets every fingerprint of the table (`bytes` long) in the split-block filter at `bits` as the
 * hash pair (low word, high word): approximate line dedup's exact first phase handing over to its
 * first filter stage, so that phase leaves no stage behind to probe.
 */
export function bucketsToBlocked(table: usize, bytes: usize, bits: usize, blocksF: f64): void {
  const blocks = <u64>blocksF;
  for (let s: usize = 0; s < bytes; s += 16) {
    const lo = load<u64>(table + s);
    const hi = load<u64>(table + s, 8);
    if ((lo | hi) != 0) splitBlockSet(splitBlockOf(bits, blocks, lo), hi);
  }
}

/**
 * Keeps in partition `part` only the keys whose high word has (hi & mask) == 0, rehashed in place
 * through `scratch` (one partition's bytes); the others are written to scratch[0, 16 m), 16 bytes
 * each, and m is returned. counts[part] (u32) is set to the keys kept. Splits one table into
 * 2^k by the low bits of the high word when the seen-set spreads over several memories.
 */
export function bucketsKeep(table: usize, buckets: u32, part: u32, counts: usize, scratch: usize, mask: u64): u32 {
  const bytes = <usize>buckets * BUCKET;
  const from = table + <usize>part * bytes;
  const end = from + bytes;
  memory.copy(scratch, from, bytes);
  memory.fill(from, 0, bytes);
  let moved: u32 = 0;
  let kept: u32 = 0;
  for (let s: usize = 0; s < bytes; s += 16) {
    const lo = load<u64>(scratch + s);
    const hi = load<u64>(scratch + s, 8);
    if ((lo | hi) == 0) continue;
    if ((hi & mask) == 0) {
      findOrInsert(from, end, from + <usize>mulhi64(lo, <u64>buckets) * BUCKET, lo, hi);
      kept++;
    } else {
      // Moved keys are packed at the front of the scratch: the write never passes the read.
      const to = scratch + (<usize>moved << 4);
      store<u64>(to, lo);
      store<u64>(to, hi, 8);
      moved++;
    }
  }
  store<u32>(counts + (<usize>part << 2), kept);
  return moved;
}
