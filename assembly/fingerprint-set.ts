// A set of 128-bit fingerprints over the bucketed table of fingerprint-buckets.ts (P partitions
// of 64-byte buckets, linear probing inside a partition, wide or compact slots), with batch add,
// test and remove. A removal shifts the rest of its probe run back (no tombstones), so a look-up
// still ends at the first empty slot and the table never fills with dead entries. Digests are 16 bytes each
// (lo u64, hi u64); a key kept all zero is stored with lo = 1 (fingerprint-buckets.ts).

import { partitionOf, findOrInsert, contains, slotBytes, slotsPerBucket, COMPACT_SLOT } from "./fingerprint-buckets";
import { mulhi64 } from "./reduce";

const BUCKET: usize = 64;
/** Digests whose home buckets are read ahead together, so their cache misses overlap (as lineDedup does). */
const GROUP: u32 = 16;

let touched: u32 = 0;

/** Reads the home bucket of digests [from, to) with nothing depending on another: their misses overlap. */
// @ts-ignore: decorator
@inline function touch(table: usize, logParts: u32, buckets: u32, digests: usize, from: u32, to: u32): void {
  const partBytes = <usize>buckets * BUCKET;
  let sum: u32 = 0;
  for (let i = from; i < to; i++) {
    const d = digests + (<usize>i << 4);
    sum += load<u32>(table + <usize>partitionOf(load<u64>(d, 8), logParts) * partBytes + <usize>mulhi64(load<u64>(d), <u64>buckets) * BUCKET);
  }
  touched ^= sum;
}

function addManyOf<H>(table: usize, logParts: u32, buckets: u32, counts: usize, limit: u32, digests: usize, n: u32, out: usize): u32 {
  const partBytes = <usize>buckets * BUCKET;
  for (let g: u32 = 0; g < n; g += GROUP) {
    const e = min(n, g + GROUP);
    touch(table, logParts, buckets, digests, g, e);
    for (let i = g; i < e; i++) {
      const d = digests + (<usize>i << 4);
      const lo = load<u64>(d);
      const hi = load<u64>(d, 8);
      const part = partitionOf(hi, logParts);
      const base = table + <usize>part * partBytes;
      const end = base + partBytes;
      const home = base + <usize>mulhi64(lo, <u64>buckets) * BUCKET;
      const countAt = counts + (<usize>part << 2);
      const count = load<u32>(countAt);
      if (count >= limit) {
        if (contains<H>(base, end, home, lo, hi) == 0) return i;
        store<u8>(out + i, 0);
        continue;
      }
      const fresh = findOrInsert<H>(base, end, home, lo, hi);
      store<u32>(countAt, count + fresh);
      store<u8>(out + i, <u8>fresh);
    }
  }
  return n;
}

/**
 * Adds digests[0, n) in order: out[i] = 1 when digest i was new. A partition already holding
 * `limit` keys takes no new one: the batch stops there and the count done is returned (the
 * caller grows the table and calls again from that digest); n when all were done.
 * `slot`: 16 wide, 12 compact (fingerprint-buckets.ts).
 */
export function setAddMany(table: usize, logParts: u32, buckets: u32, counts: usize, limit: u32, digests: usize, n: u32, out: usize, slot: u32): u32 {
  if (slot == COMPACT_SLOT) return addManyOf<u32>(table, logParts, buckets, counts, limit, digests, n, out);
  return addManyOf<u64>(table, logParts, buckets, counts, limit, digests, n, out);
}

function hasManyOf<H>(table: usize, logParts: u32, buckets: u32, digests: usize, n: u32, out: usize): void {
  const partBytes = <usize>buckets * BUCKET;
  for (let g: u32 = 0; g < n; g += GROUP) {
    const e = min(n, g + GROUP);
    touch(table, logParts, buckets, digests, g, e);
    for (let i = g; i < e; i++) {
      const d = digests + (<usize>i << 4);
      const lo = load<u64>(d);
      const hi = load<u64>(d, 8);
      const base = table + <usize>partitionOf(hi, logParts) * partBytes;
      const home = base + <usize>mulhi64(lo, <u64>buckets) * BUCKET;
      store<u8>(out + i, <u8>contains<H>(base, base + partBytes, home, lo, hi));
    }
  }
}

/** out[i] = 1 when digest i is in the set. `slot`: 16 wide, 12 compact. */
export function setHasMany(table: usize, logParts: u32, buckets: u32, digests: usize, n: u32, out: usize, slot: u32): void {
  if (slot == COMPACT_SLOT) hasManyOf<u32>(table, logParts, buckets, digests, n, out);
  else hasManyOf<u64>(table, logParts, buckets, digests, n, out);
}

/** The address of slot s of a partition (slots numbered in probe order). */
// @ts-ignore: decorator
@inline export function slotAt<H>(base: usize, s: usize): usize {
  return base + (s / slotsPerBucket<H>()) * BUCKET + (s % slotsPerBucket<H>()) * slotBytes<H>();
}

function removeManyOf<H>(table: usize, logParts: u32, buckets: u32, counts: usize, digests: usize, n: u32, out: usize): u32 {
  const partBytes = <usize>buckets * BUCKET;
  const slots = <usize>buckets * slotsPerBucket<H>();
  let removed: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const d = digests + (<usize>i << 4);
    const lo = load<u64>(d);
    const hi = load<u64>(d, 8);
    const a0 = (lo | <u64><H>hi) == 0 ? 1 : lo;
    const b0 = <H>hi;
    const part = partitionOf(hi, logParts);
    const base = table + <usize>part * partBytes;
    // Find the key's slot: from its home slot to the first empty one.
    let s = <usize>mulhi64(lo, <u64>buckets) * slotsPerBucket<H>();
    let found = false;
    while (true) {
      const p = slotAt<H>(base, s);
      const a = load<u64>(p);
      const b = load<H>(p, 8);
      if (a == a0 && b == b0) {
        found = true;
        break;
      }
      if ((a | <u64>b) == 0) break;
      s = s + 1 == slots ? 0 : s + 1;
    }
    store<u8>(out + i, found ? 1 : 0);
    if (!found) continue;
    removed++;
    const countAt = counts + (<usize>part << 2);
    store<u32>(countAt, load<u32>(countAt) - 1);
    shiftBack<H>(base, slots, buckets, s);
  }
  return removed;
}

/** Removes digests[0, n) in order: out[i] = 1 when digest i was there. Returns the count removed. `slot`: 16 wide, 12 compact. */
export function setRemoveMany(table: usize, logParts: u32, buckets: u32, counts: usize, digests: usize, n: u32, out: usize, slot: u32): u32 {
  if (slot == COMPACT_SLOT) return removeManyOf<u32>(table, logParts, buckets, counts, digests, n, out);
  return removeManyOf<u64>(table, logParts, buckets, counts, digests, n, out);
}

/**
 * Empties slot `hole` and closes the gap: each later key of the run whose probe passes the hole
 * (its home slot lies cyclically at or before the hole) moves into it, leaving a new hole.
 */
export function shiftBack<H>(base: usize, slots: usize, buckets: u32, hole: usize): void {
  let j = hole;
  while (true) {
    j = j + 1 == slots ? 0 : j + 1;
    const p = slotAt<H>(base, j);
    const a = load<u64>(p);
    const b = load<H>(p, 8);
    if ((a | <u64>b) == 0) break;
    const home = <usize>mulhi64(a, <u64>buckets) * slotsPerBucket<H>();
    // Distances along the probe order: the key may fill the hole if its home is no later than the hole.
    const fromHome = j >= home ? j - home : j + slots - home;
    const fromHole = j >= hole ? j - hole : j + slots - hole;
    if (fromHome >= fromHole) {
      const q = slotAt<H>(base, hole);
      store<u64>(q, a);
      store<H>(q, b, 8);
      hole = j;
    }
  }
  const q = slotAt<H>(base, hole);
  store<u64>(q, 0);
  store<H>(q, 0, 8);
}
