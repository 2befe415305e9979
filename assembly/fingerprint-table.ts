// The exact store under the Deduplicator: an open-addressing table (linear probing, any
// capacity, home slot by multiply-high) of 128-bit fingerprints with u32 reference counts;
// 20 bytes a slot, count 0 = empty.
// Together with a counting filter over the same fingerprints it implements IMP-CB: a fingerprint
// with a zero counter is certainly new and skips the table look-up; only "maybe" goes to the table.
// Counters count fingerprints (once, not per reference). Counter i's exact value is always the
// number of stored fingerprints whose positions hit i, except that it stops at 2^b - 1; removing
// a fingerprint that touches a saturated counter recounts those counters from the table, so a
// removal can never leave a false negative behind.

import { mulhi64 } from "./reduce";
import { counterAddress, readCounter, writeCounter } from "./counters";

/** Bytes of one table slot; the wrapper sizes the table from this global (src/exact/imp-cb.ts). */
export const TABLE_SLOT_BYTES: u32 = 20;
const SLOT: usize = <usize>TABLE_SLOT_BYTES;

// The stats block the check and remove kernels keep (u64 each), exported so the wrapper reads
// each count where these kernels write it.
/** Stats: offset of the u64 count of table look-ups made. */
export const DEDUP_LOOKUPS: u32 = 0;
/** Stats: offset of the u64 count of look-ups a zero counter avoided. */
export const DEDUP_AVOIDED: u32 = 8;
/** Stats: offset of the u64 count of entries in the table. */
export const DEDUP_ENTRIES: u32 = 16;
/** Stats: offset of the u64 count of look-ups that found nothing. */
export const DEDUP_LOOKUPS_NEW: u32 = 24;
/** Bytes of the stats block. */
export const DEDUP_STATS_BYTES: u32 = 32;

// @ts-ignore: decorator
@inline function home(key: usize, capacity: u32): u32 {
  return <u32>(((load<u64>(key, 8) >> 32) * <u64>capacity) >> 32);
}

// @ts-ignore: decorator
@inline function nextSlot(i: u32, capacity: u32): u32 {
  return i + 1 == capacity ? 0 : i + 1;
}

/** Slot index holding the 16-byte key at `key`, or -1. */
function find(table: usize, capacity: u32, key: usize): i32 {
  const lo = load<u64>(key);
  const hi = load<u64>(key, 8);
  let i = home(key, capacity);
  while (true) {
    const slot = table + <usize>i * SLOT;
    if (load<u32>(slot, 16) == 0) return -1;
    if (load<u64>(slot) == lo && load<u64>(slot, 8) == hi) return <i32>i;
    i = nextSlot(i, capacity);
  }
}

/** Puts a key known to be absent with `count` into the first free slot of its probe run. */
function insert(table: usize, capacity: u32, key: usize, count: u32): void {
  let i = home(key, capacity);
  while (load<u32>(table + <usize>i * SLOT, 16) != 0) i = nextSlot(i, capacity);
  const slot = table + <usize>i * SLOT;
  store<u64>(slot, load<u64>(key));
  store<u64>(slot, load<u64>(key, 8), 8);
  store<u32>(slot, count, 16);
}

/** Empties slot i, shifting later members of its probe run back so every key stays reachable. */
function erase(table: usize, capacity: u32, i: u32): void {
  let j = i;
  while (true) {
    j = nextSlot(j, capacity);
    const from = table + <usize>j * SLOT;
    if (load<u32>(from, 16) == 0) break;
    const k = home(from, capacity);
    // Slot j may move to the hole at i unless its home lies cyclically in (i, j].
    const stays = i <= j ? i < k && k <= j : i < k || k <= j;
    if (stays) continue;
    memory.copy(table + <usize>i * SLOT, from, SLOT);
    i = j;
  }
  store<u32>(table + <usize>i * SLOT, 0, 16);
}

// Reads the counters and home slots of a group of keys before the group is worked, with no
// dependence between the reads, so their cache and TLB misses overlap (see bloom.ts).
const GROUP: u32 = 16;
let touched: u32 = 0;

function touchGroup(counters: usize, m: u64, k: u32, bits: u32, table: usize, capacity: u32, digests: usize, from: u32, to: u32): void {
  let sum: u32 = 0;
  for (let i = from; i < to; i++) {
    const key = digests + (<usize>i << 4);
    const h2 = load<u64>(key, 8) | 1;
    let h1 = load<u64>(key);
    for (let j: u32 = 0; j < k; j++) {
      sum += <u32>load<u8>(counterAddress(counters, mulhi64(h1, m), bits));
      h1 += h2;
    }
    sum += load<u32>(table + <usize>home(key, capacity) * SLOT, 16);
  }
  touched ^= sum;
}

/** Re-inserts every entry of the old table into an empty new one. */
export function tableRehash(oldTable: usize, oldCapacity: u32, newTable: usize, newCapacity: u32): void {
  memory.fill(newTable, 0, <usize>newCapacity * SLOT);
  for (let i: u32 = 0; i < oldCapacity; i++) {
    const slot = oldTable + <usize>i * SLOT;
    const count = load<u32>(slot, 16);
    if (count != 0) insert(newTable, newCapacity, slot, count);
  }
}

/**
 * IMP-CB check of `count` fingerprints at `digests` (16 bytes each; the first 8 are h1, the last
 * 8 are h2, forced odd). For each, in order: a zero counter means new without a table look-up;
 * otherwise the table is read. New fingerprints are stored with count 1 and their counters
 * incremented once; duplicates only gain a reference. out[i] = 1 when new; refs[i] = the
 * reference count after the call. Stops before the table would pass `limit` entries and returns
 * how many it processed (the caller grows the table and calls again). stats: u64 look-ups made,
 * u64 look-ups avoided, u64 entries, u64 look-ups that found nothing (the filter's false "maybe").
 */
export function dedupCheck(
  counters: usize, mF: f64, k: u32, bits: u32,
  table: usize, capacity: u32, limit: u32,
  digests: usize, count: u32, out: usize, refs: usize, stats: usize,
): u32 {
  const m = <u64>mF;
  const max: u32 = (1 << bits) - 1;
  let entries = <u32>load<u64>(stats, DEDUP_ENTRIES);
  for (let i: u32 = 0; i < count; i++) {
    if (i % GROUP == 0) touchGroup(counters, m, k, bits, table, capacity, digests, i, min<u32>(i + GROUP, count));
    const key = digests + (<usize>i << 4);
    const h2 = load<u64>(key, 8) | 1;
    let h1 = load<u64>(key);
    let maybe = true;
    for (let j: u32 = 0; j < k; j++) {
      if (readCounter(counters, mulhi64(h1, m), bits, max) == 0) {
        maybe = false;
        break;
      }
      h1 += h2;
    }
    if (maybe) {
      store<u64>(stats, load<u64>(stats, DEDUP_LOOKUPS) + 1, DEDUP_LOOKUPS);
      const found = find(table, capacity, key);
      if (found >= 0) {
        const slot = table + <usize>found * SLOT;
        const refCount = load<u32>(slot, 16);
        const next = refCount == 0xFFFFFFFF ? refCount : refCount + 1;
        store<u32>(slot, next, 16);
        store<u8>(out + i, 0);
        store<u32>(refs + (<usize>i << 2), next);
        continue;
      }
      store<u64>(stats, load<u64>(stats, DEDUP_LOOKUPS_NEW) + 1, DEDUP_LOOKUPS_NEW);
    } else {
      store<u64>(stats, load<u64>(stats, DEDUP_AVOIDED) + 1, DEDUP_AVOIDED);
    }
    if (entries >= limit) {
      store<u64>(stats, <u64>entries, DEDUP_ENTRIES);
      if (maybe) {
        store<u64>(stats, load<u64>(stats, DEDUP_LOOKUPS) - 1, DEDUP_LOOKUPS);
        store<u64>(stats, load<u64>(stats, DEDUP_LOOKUPS_NEW) - 1, DEDUP_LOOKUPS_NEW);
      } else {
        store<u64>(stats, load<u64>(stats, DEDUP_AVOIDED) - 1, DEDUP_AVOIDED);
      }
      return i;
    }
    insert(table, capacity, key, 1);
    entries++;
    h1 = load<u64>(key);
    for (let j: u32 = 0; j < k; j++) {
      const c = mulhi64(h1, m);
      const v = readCounter(counters, c, bits, max);
      if (v < max) writeCounter(counters, c, bits, max, v + 1);
      h1 += h2;
    }
    store<u8>(out + i, 1);
    store<u32>(refs + (<usize>i << 2), 1);
  }
  store<u64>(stats, <u64>entries, DEDUP_ENTRIES);
  return count;
}

/** How many stored fingerprints hit counter c (with multiplicity), by scanning the table. */
function recount(mF: f64, k: u32, table: usize, capacity: u32, c: u64): u32 {
  const m = <u64>mF;
  let total: u32 = 0;
  for (let i: u32 = 0; i < capacity; i++) {
    const slot = table + <usize>i * SLOT;
    if (load<u32>(slot, 16) == 0) continue;
    let h1 = load<u64>(slot);
    const h2 = load<u64>(slot, 8) | 1;
    for (let j: u32 = 0; j < k; j++) {
      if (mulhi64(h1, m) == c) total++;
      h1 += h2;
    }
  }
  return total;
}

/**
 * Drops one reference of each fingerprint; when the last goes, the entry leaves the table and its
 * counters are decremented (or, where one is saturated, all its counters are recounted from the
 * table). out[i] = 1 when the fingerprint was present; refs[i] = references left.
 */
export function dedupRemove(
  counters: usize, mF: f64, k: u32, bits: u32,
  table: usize, capacity: u32,
  digests: usize, count: u32, out: usize, refs: usize, stats: usize,
): void {
  const m = <u64>mF;
  const max: u32 = (1 << bits) - 1;
  for (let i: u32 = 0; i < count; i++) {
    const key = digests + (<usize>i << 4);
    const found = find(table, capacity, key);
    if (found < 0) {
      store<u8>(out + i, 0);
      store<u32>(refs + (<usize>i << 2), 0);
      continue;
    }
    const slot = table + <usize>found * SLOT;
    const left = load<u32>(slot, 16) - 1;
    store<u8>(out + i, 1);
    store<u32>(refs + (<usize>i << 2), left);
    if (left != 0) {
      store<u32>(slot, left, 16);
      continue;
    }
    erase(table, capacity, <u32>found);
    store<u64>(stats, load<u64>(stats, DEDUP_ENTRIES) - 1, DEDUP_ENTRIES);
    const h2 = load<u64>(key, 8) | 1;
    let h1 = load<u64>(key);
    let saturated = false;
    for (let j: u32 = 0; j < k; j++) {
      if (readCounter(counters, mulhi64(h1, m), bits, max) == max) saturated = true;
      h1 += h2;
    }
    h1 = load<u64>(key);
    for (let j: u32 = 0; j < k; j++) {
      const c = mulhi64(h1, m);
      if (saturated) writeCounter(counters, c, bits, max, min<u32>(max, recount(mF, k, table, capacity, c)));
      else writeCounter(counters, c, bits, max, readCounter(counters, c, bits, max) - 1);
      h1 += h2;
    }
  }
}

/**
 * Reads (write = 0) or sets (write = 1) the reference counts of `count` fingerprints at `digests`:
 * reading puts each count, 0 when absent, at refs[i]; setting gives each present fingerprint the
 * count refs[i] (a fingerprint just inserted by dedupCheck, when a stored set is loaded back).
 */
export function dedupCounts(table: usize, capacity: u32, digests: usize, count: u32, refs: usize, write: u32): void {
  for (let i: u32 = 0; i < count; i++) {
    const found = find(table, capacity, digests + (<usize>i << 4));
    const at = refs + (<usize>i << 2);
    if (write != 0) {
      if (found >= 0) store<u32>(table + <usize>found * SLOT, load<u32>(at), 16);
    } else {
      store<u32>(at, found >= 0 ? load<u32>(table + <usize>found * SLOT, 16) : 0);
    }
  }
}
