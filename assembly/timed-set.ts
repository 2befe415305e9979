// The exact windowed seen-set's table: the bucketed table of fingerprint-buckets.ts (P partitions
// of 64-byte buckets, linear probing inside a partition) with timed slots of 16 bytes, 4 a bucket:
// the low word (8 bytes), the high word's low 32 bits and the key's time in whole seconds (u32),
// so a key compares 102 bits with 64 partitions (the compact layout's) and carries its time in the
// bytes the wide layout spends on the rest of the high word. Read as a wide slot (low word, then
// one u64), a timed slot is a wide one, so growth (bucketsGrow with slot 16) and the shift-back of
// a removal are the wide table's own.
// A key i is held at time now when its slot's time t >= cutoff(i) (the caller folds the key's TTL
// and any forget of its host into that one number); a key not held is recorded with time
// max(now, cutoff(i)).

import { mulhi64 } from "./reduce";
import { partitionOf } from "./fingerprint-buckets";
import { shiftBack } from "./fingerprint-set";

const BUCKET: usize = 64;
const SLOT: usize = 16;
const PER_BUCKET: usize = 4;

/** The low word as a slot keeps it (never all zero with the high word's low half: empty slots are). */
// @ts-ignore: decorator
@inline function keptLo(lo: u64, hi: u64): u64 {
  return (lo | (hi & 0xffffffff)) == 0 ? 1 : lo;
}

/** The cutoff of key i: cutoffs[i] (u32) when `cutoffs` is set, else the batch's one `cutoff`. */
// @ts-ignore: decorator
@inline function cutoffOf(cutoffs: usize, cutoff: u32, i: u32): u32 {
  return cutoffs == 0 ? cutoff : load<u32>(cutoffs + (<usize>i << 2));
}

/**
 * The slot holding (lo, hi) in its partition, or the first empty slot of its probe run with the
 * top bit of the result set (address | 1: slot addresses are 16-aligned). The table always keeps
 * an empty slot in a partition (the caller's load limit).
 */
// @ts-ignore: decorator
@inline function probe(base: usize, end: usize, lo: u64, hi: u64, buckets: u32): usize {
  const a0 = keptLo(lo, hi);
  const b0 = <u32>hi;
  let p = base + <usize>mulhi64(lo, <u64>buckets) * BUCKET;
  while (true) {
    for (let s: usize = 0; s < PER_BUCKET * SLOT; s += SLOT) {
      const a = load<u64>(p + s);
      const b = load<u32>(p + s, 8);
      if (a == a0 && b == b0) return p + s;
      if ((a | <u64>b) == 0) return (p + s) | 1;
    }
    p += BUCKET;
    if (p == end) p = base;
  }
}

/**
 * Records digests[0, n) at time `now` in order: out[i] = 1 when key i was absent, 2 when it was
 * there with its time below its cutoff (due again), and its time becomes max(now, cutoff); a held key answers 0 and,
 * with `refresh`, its time becomes max(t, now). A partition already holding `limit` keys takes no
 * new one: the batch stops there and the count done is returned (the caller grows the table and
 * calls again from that digest); n when all were done.
 */
export function timedAddMany(table: usize, logParts: u32, buckets: u32, counts: usize, limit: u32, digests: usize, n: u32, out: usize, now: u32, cutoffs: usize, cutoff: u32, refresh: u32): u32 {
  const partBytes = <usize>buckets * BUCKET;
  for (let i: u32 = 0; i < n; i++) {
    const d = digests + (<usize>i << 4);
    const lo = load<u64>(d);
    const hi = load<u64>(d, 8);
    const part = partitionOf(hi, logParts);
    const base = table + <usize>part * partBytes;
    const at = probe(base, base + partBytes, lo, hi, buckets);
    const c = cutoffOf(cutoffs, cutoff, i);
    if ((at & 1) == 0) {
      const t = load<u32>(at, 12);
      if (t >= c) {
        if (refresh != 0 && now > t) store<u32>(at, now, 12);
        store<u8>(out + i, 0);
      } else {
        // 2: held before and due again (its TTL passed, or its host was forgotten), told apart for --stats.
        store<u32>(at, max(now, c), 12);
        store<u8>(out + i, 2);
      }
      continue;
    }
    const countAt = counts + (<usize>part << 2);
    const count = load<u32>(countAt);
    if (count >= limit) return i;
    const slot = at & ~(<usize>1);
    store<u64>(slot, keptLo(lo, hi));
    store<u32>(slot, <u32>hi, 8);
    store<u32>(slot, max(now, c), 12);
    store<u32>(countAt, count + 1);
    store<u8>(out + i, 1);
  }
  return n;
}

/** out[i] = 1 when key i is held (its time at or past its cutoff), and times[i] (u32) its time, 0 when absent; `times` may be `cutoffs`. */
export function timedRead(table: usize, logParts: u32, buckets: u32, digests: usize, n: u32, out: usize, times: usize, cutoffs: usize, cutoff: u32): void {
  const partBytes = <usize>buckets * BUCKET;
  for (let i: u32 = 0; i < n; i++) {
    const d = digests + (<usize>i << 4);
    const lo = load<u64>(d);
    const hi = load<u64>(d, 8);
    const base = table + <usize>partitionOf(hi, logParts) * partBytes;
    const at = probe(base, base + partBytes, lo, hi, buckets);
    const t: u32 = (at & 1) == 0 ? load<u32>(at, 12) : 0;
    // Read before the time is written: `times` may be the region the cutoffs came in.
    const c = cutoffOf(cutoffs, cutoff, i);
    store<u32>(times + (<usize>i << 2), t);
    store<u8>(out + i, (at & 1) == 0 && t >= c ? 1 : 0);
  }
}

/** Removes digests[0, n) in order: out[i] = 1 when key i was held (at or past its cutoff). Returns the count of slots freed. */
export function timedRemoveMany(table: usize, logParts: u32, buckets: u32, counts: usize, digests: usize, n: u32, out: usize, cutoffs: usize, cutoff: u32): u32 {
  const partBytes = <usize>buckets * BUCKET;
  const slots = <usize>buckets * PER_BUCKET;
  let freed: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const d = digests + (<usize>i << 4);
    const lo = load<u64>(d);
    const hi = load<u64>(d, 8);
    const part = partitionOf(hi, logParts);
    const base = table + <usize>part * partBytes;
    const at = probe(base, base + partBytes, lo, hi, buckets);
    if ((at & 1) != 0) {
      store<u8>(out + i, 0);
      continue;
    }
    store<u8>(out + i, load<u32>(at, 12) >= cutoffOf(cutoffs, cutoff, i) ? 1 : 0);
    freed++;
    const countAt = counts + (<usize>part << 2);
    store<u32>(countAt, load<u32>(countAt) - 1);
    // The slot's number in probe order, for the wide shift-back (a timed slot reads as a wide one).
    const off = at - base;
    shiftBack<u64>(base, slots, buckets, (off / BUCKET) * PER_BUCKET + (off % BUCKET) / SLOT);
  }
  return freed;
}

/**
 * Drops every key whose time is below `cutoff` (expired for every TTL the caller may give), a
 * partition at a time through `scratch` (one partition's bytes): the partition is emptied and
 * its kept keys put back, so no probe run is left with a gap. Returns the count dropped.
 */
export function timedSweep(table: usize, logParts: u32, buckets: u32, counts: usize, cutoff: u32, scratch: usize): u32 {
  const partBytes = <usize>buckets * BUCKET;
  const parts: u32 = 1 << logParts;
  let dropped: u32 = 0;
  for (let p: u32 = 0; p < parts; p++) {
    const base = table + <usize>p * partBytes;
    const end = base + partBytes;
    memory.copy(scratch, base, partBytes);
    memory.fill(base, 0, partBytes);
    let kept: u32 = 0;
    for (let s: usize = 0; s < partBytes; s += SLOT) {
      const lo = load<u64>(scratch + s);
      const word = load<u64>(scratch + s, 8);
      if ((lo | word) == 0) continue;
      if (<u32>(word >> 32) < cutoff) {
        dropped++;
        continue;
      }
      const at = probe(base, end, lo, word, buckets) & ~(<usize>1);
      store<u64>(at, lo);
      store<u64>(at, word, 8);
      kept++;
    }
    store<u32>(counts + (<usize>p << 2), kept);
  }
  return dropped;
}
