// The in-memory seen-set of the line pipeline and of FingerprintSet: 128-bit fingerprints in
// 64-byte buckets, so a look-up reads one cache line (a probe run rarely spills into the next,
// adjacent line). The table is P partitions (the top bits of the fingerprint's high word) of C
// buckets each (home bucket = multiply-high of the low word), linear probing inside a partition.
// The first empty slot of a probe run ends a look-up and takes an insert.
// Two slot layouts, chosen per table by the type H a slot keeps of the high word:
// - wide (H = u64): 16 bytes, 4 a bucket, the whole fingerprint;
// - compact (H = u32): 12 bytes, 5 a bucket (4 bytes left over), the low word and the high word's
//   low 32 bits; the partition implies its top bits, so a key compares 102 bits with 64
//   partitions. The exact line table is compact: 12.8 bytes a slot instead of 16.
// An empty slot is all zero; a key that would be stored all zero is stored with low word 1 (a
// 2^-96 merge, below the collision rate of the bits compared). Its home bucket is the same.
// Growth is in place, partition by partition from the last, through a scratch of one partition,
// so its peak is the new table plus 1/P of the old one (no second full table ever exists).

import { mulhi64 } from "./reduce";
import { splitBlockOf, splitBlockSet } from "./split-block";

const BUCKET: usize = 64;
/** Slot bytes of the compact layout; the wide one's are 16. */
export const COMPACT_SLOT: u32 = 12;

/** Bytes of a slot keeping the high word as H. */
// @ts-ignore: decorator
@inline export function slotBytes<H>(): usize {
  return 8 + sizeof<H>();
}

/** Slots of a bucket: 4 wide, 5 compact. */
// @ts-ignore: decorator
@inline export function slotsPerBucket<H>(): usize {
  return BUCKET / slotBytes<H>();
}

// @ts-ignore: decorator
@inline export function partitionOf(hi: u64, logParts: u32): u32 {
  return logParts == 0 ? 0 : <u32>(hi >> (64 - <u64>logParts));
}

/** The low word as a slot keeps it: 1 where the key as kept would be all zero (an empty slot). */
// @ts-ignore: decorator
@inline export function keptLo<H>(lo: u64, hi: u64): u64 {
  return (lo | <u64><H>hi) == 0 ? 1 : lo;
}

/**
 * Finds (lo, hi) in its partition (base .. base + buckets * 64) from `bucket`, inserting it at the
 * first empty slot when absent. Returns 1 when the key was inserted (new), 0 when present.
 * The caller guarantees the partition has an empty slot.
 */
// @ts-ignore: decorator
@inline export function findOrInsert<H>(base: usize, end: usize, bucket: usize, lo: u64, hi: u64): u32 {
  const a0 = keptLo<H>(lo, hi);
  const b0 = <H>hi;
  let p = bucket;
  while (true) {
    for (let s: usize = 0; s < slotsPerBucket<H>() * slotBytes<H>(); s += slotBytes<H>()) {
      const a = load<u64>(p + s);
      const b = load<H>(p + s, 8);
      if (a == a0 && b == b0) return 0;
      if ((a | <u64>b) == 0) {
        store<u64>(p + s, a0);
        store<H>(p + s, b0, 8);
        return 1;
      }
    }
    p += BUCKET;
    if (p == end) p = base;
  }
}

/** 1 when (lo, hi) is in its partition. */
// @ts-ignore: decorator
@inline export function contains<H>(base: usize, end: usize, bucket: usize, lo: u64, hi: u64): u32 {
  const a0 = keptLo<H>(lo, hi);
  const b0 = <H>hi;
  let p = bucket;
  while (true) {
    for (let s: usize = 0; s < slotsPerBucket<H>() * slotBytes<H>(); s += slotBytes<H>()) {
      const a = load<u64>(p + s);
      const b = load<H>(p + s, 8);
      if (a == a0 && b == b0) return 1;
      if ((a | <u64>b) == 0) return 0;
    }
    p += BUCKET;
    if (p == end) p = base;
  }
}

/** findOrInsert in a table of compact slots (`compact`) or wide ones: for a kernel whose table's layout is known only at run time. */
// @ts-ignore: decorator
@inline export function findOrInsertIn(compact: bool, base: usize, end: usize, bucket: usize, lo: u64, hi: u64): u32 {
  return compact ? findOrInsert<u32>(base, end, bucket, lo, hi) : findOrInsert<u64>(base, end, bucket, lo, hi);
}

/** contains in a table of compact slots (`compact`) or wide ones. */
// @ts-ignore: decorator
@inline export function containsIn(compact: bool, base: usize, end: usize, bucket: usize, lo: u64, hi: u64): u32 {
  return compact ? contains<u32>(base, end, bucket, lo, hi) : contains<u64>(base, end, bucket, lo, hi);
}

function growOf<H>(table: usize, logParts: u32, oldBuckets: u32, newBuckets: u32, scratch: usize): void {
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
    for (let q: usize = 0; q < oldBytes; q += BUCKET) {
      for (let s: usize = q; s < q + slotsPerBucket<H>() * slotBytes<H>(); s += slotBytes<H>()) {
        const lo = load<u64>(scratch + s);
        const hi = load<H>(scratch + s, 8);
        if ((lo | <u64>hi) == 0) continue;
        findOrInsert<H>(to, end, to + <usize>mulhi64(lo, <u64>newBuckets) * BUCKET, lo, <u64>hi);
      }
    }
  }
}

/**
 * Grows every partition from `oldBuckets` to `newBuckets` buckets in place (memory must already
 * reach table + parts * newBuckets * 64, plus oldBuckets * 64 of scratch at `scratch`, which may
 * lie after the new table). counts[p] (u32) stays valid: keys keep their partition.
 * `slot`: 16 wide, 12 compact.
 */
export function bucketsGrow(table: usize, logParts: u32, oldBuckets: u32, newBuckets: u32, scratch: usize, slot: u32): void {
  if (slot == COMPACT_SLOT) growOf<u32>(table, logParts, oldBuckets, newBuckets, scratch);
  else growOf<u64>(table, logParts, oldBuckets, newBuckets, scratch);
}

/**
 * Sets every fingerprint of the wide table (`bytes` long) in the split-block filter at `bits` as
 * the hash pair (low word, high word): approximate line dedup's exact first phase handing over to
 * its first filter stage, so that phase leaves no stage behind to probe.
 */
export function bucketsToBlocked(table: usize, bytes: usize, bits: usize, blocksF: f64): void {
  const blocks = <u64>blocksF;
  for (let s: usize = 0; s < bytes; s += 16) {
    const lo = load<u64>(table + s);
    const hi = load<u64>(table + s, 8);
    if ((lo | hi) != 0) splitBlockSet(splitBlockOf(bits, blocks, lo), hi);
  }
}
