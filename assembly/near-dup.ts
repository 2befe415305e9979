// The permuted-table index of Manku, Jain and Das Sarma (WWW 2007). Each table holds every
// fingerprint permuted so that its chosen blocks lead; a query permuted the same way only needs
// the entries whose leading bits equal its own, since with at most k differing bits some table's
// leading blocks all match. Tables here are bucketed by their top d bits (d <= the leading bits)
// with a directory of 2^d + 1 offsets, so a query scans whole buckets: a superset of the exact
// leading-bits match, never a subset.
//
// A table descriptor (TABLE_BYTES at `desc`): u32 entries (permuted u64), u32 directory, u32 d,
// u32 piece count, then up to MAX_PIECES (offset, width) u32 pairs, filled from the top bit down
// (the ND_* offsets below, exported so the wrapper writes each field where these kernels read it).
// Only table 0 has ids (u32, aligned with its entries): a match found in any table is mapped back
// to its fingerprint and looked up in table 0, so each fingerprint costs 8 bytes per table + 4.
//
// Each bucket is sorted (table 0's by entry, then input order), so equal fingerprints lie together:
// a query takes one fingerprint once however many copies a bucket holds, emits it from the first
// table whose bucket holds it (the earlier tables' buckets are checked by bits, not by scanning what
// was emitted), and finds its copies in table 0 by binary search. A query costs its buckets' length
// plus its answer, whatever the copies (it was cubic in the copies when every copy was looked up).

import { sortKeyed, sortValues } from "./sort";

/** Bytes of one table descriptor; the wrapper lays descriptors out from this global (src/near-dup/simhash-index.ts). */
export const ND_TABLE_BYTES: u32 = 128;
const TABLE_BYTES: usize = <usize>ND_TABLE_BYTES;
/** Descriptor: offset of the u32 address of the table's entries. */
export const ND_ENTRIES: u32 = 0;
/** Descriptor: offset of the u32 address of the table's directory. */
export const ND_DIR: u32 = 4;
/** Descriptor: offset of the u32 directory bits d. */
export const ND_BITS: u32 = 8;
/** Descriptor: offset of the u32 piece count. */
export const ND_PIECE_COUNT: u32 = 12;
/** Descriptor: offset of the first (offset, width) u32 pair; pair i lies 8 i bytes further. */
export const ND_PIECES: u32 = 16;

// @ts-ignore: decorator
@inline function permute(desc: usize, fp: u64): u64 {
  const pieces = load<u32>(desc, ND_PIECE_COUNT);
  let out: u64 = 0;
  let pos: u32 = 64;
  for (let i: u32 = 0; i < pieces; i++) {
    const offset = <u64>load<u32>(desc + <usize>ND_PIECES + (<usize>i << 3));
    const width = load<u32>(desc + <usize>ND_PIECES + 4 + (<usize>i << 3));
    const mask: u64 = width == 64 ? ~(<u64>0) : (<u64>1 << width) - 1;
    pos -= width;
    out |= ((fp >> offset) & mask) << pos;
  }
  return out;
}

// @ts-ignore: decorator
@inline function unpermute(desc: usize, x: u64): u64 {
  const pieces = load<u32>(desc, ND_PIECE_COUNT);
  let fp: u64 = 0;
  let pos: u32 = 64;
  for (let i: u32 = 0; i < pieces; i++) {
    const offset = <u64>load<u32>(desc + <usize>ND_PIECES + (<usize>i << 3));
    const width = load<u32>(desc + <usize>ND_PIECES + 4 + (<usize>i << 3));
    const mask: u64 = width == 64 ? ~(<u64>0) : (<u64>1 << width) - 1;
    pos -= width;
    fp |= ((x >> pos) & mask) << offset;
  }
  return fp;
}

/** Bytes of one match record: u32 query, id and table position (the ND_MATCH_* offsets). */
export const ND_MATCH_BYTES: u32 = 12;
/** Match record: offset of the u32 index of the query in its batch (0: it comes first). */
export const ND_MATCH_QUERY: u32 = 0;
/** Match record: offset of the u32 id of the stored fingerprint. */
export const ND_MATCH_ID: u32 = 4;
/** Match record: offset of the u32 position in table 0 (n + j for pending entry j). */
export const ND_MATCH_POSITION: u32 = 8;

// One match record and its distance.
// @ts-ignore: decorator
@inline function writeMatch(out: usize, dists: usize, at: u32, q: u32, id: u32, position: u32, dist: u32): void {
  const o = out + <usize>at * ND_MATCH_BYTES;
  store<u32>(o, q, ND_MATCH_QUERY);
  store<u32>(o, id, ND_MATCH_ID);
  store<u32>(o, position, ND_MATCH_POSITION);
  store<u8>(dists + at, <u8>dist);
}

// @ts-ignore: decorator
@inline function bucketOf(x: u64, d: u32): u32 {
  return d == 0 ? 0 : <u32>(x >> (64 - <u64>d));
}

/**
 * Fills the table at `desc` from `n` fingerprints at `fps` (originals when srcDesc is 0, else
 * entries of the table at srcDesc, unpermuted on the way), copying ids from `ids` to `tableIds`
 * when tableIds is not 0: permuted, bucketed by the top d bits (a stable counting sort), each
 * bucket sorted (equal entries in input order), the directory written. `cursor` is scratch of 2^d u32.
 */
export function ndBuildTable(desc: usize, fps: usize, srcDesc: usize, ids: usize, n: u32, tableIds: usize, cursor: usize): void {
  const entries = <usize>load<u32>(desc, ND_ENTRIES);
  const dir = <usize>load<u32>(desc, ND_DIR);
  const d = load<u32>(desc, ND_BITS);
  const buckets: u32 = <u32>1 << d;
  memory.fill(dir, 0, (<usize>buckets + 1) << 2);
  for (let i: u32 = 0; i < n; i++) {
    const b = bucketOf(permute(desc, source(srcDesc, load<u64>(fps + (<usize>i << 3)))), d);
    store<u32>(dir + (<usize>(b + 1) << 2), load<u32>(dir + (<usize>(b + 1) << 2)) + 1);
  }
  for (let b: u32 = 0; b < buckets; b++) {
    const at = dir + (<usize>(b + 1) << 2);
    store<u32>(at, load<u32>(at) + load<u32>(dir + (<usize>b << 2)));
  }
  memory.copy(cursor, dir, <usize>buckets << 2);
  for (let i: u32 = 0; i < n; i++) {
    const x = permute(desc, source(srcDesc, load<u64>(fps + (<usize>i << 3))));
    const c = cursor + (<usize>bucketOf(x, d) << 2);
    const slot = load<u32>(c);
    store<u32>(c, slot + 1);
    store<u64>(entries + (<usize>slot << 3), x);
    // Table 0 holds the input position while its buckets are sorted by (entry, position), the id after.
    if (tableIds != 0) store<u32>(tableIds + (<usize>slot << 2), i);
  }
  for (let b: u32 = 0; b < buckets; b++) {
    const from = load<u32>(dir + (<usize>b << 2));
    const count = <usize>(load<u32>(dir + (<usize>(b + 1) << 2)) - from);
    if (count < 2) continue;
    if (tableIds != 0) sortKeyed(entries + (<usize>from << 3), tableIds + (<usize>from << 2), count);
    else sortValues<u64>(entries + (<usize>from << 3), count);
  }
  if (tableIds != 0) {
    for (let j: u32 = 0; j < n; j++) store<u32>(tableIds + (<usize>j << 2), load<u32>(ids + (<usize>load<u32>(tableIds + (<usize>j << 2)) << 2)));
  }
}

// @ts-ignore: decorator
@inline function source(srcDesc: usize, x: u64): u64 {
  return srcDesc == 0 ? x : unpermute(srcDesc, x);
}

/** Writes the original fingerprints of table 0's entries from..from+n (in its order) to `out`. */
export function ndOriginals(desc: usize, from: u32, n: u32, out: usize): void {
  const entries = <usize>load<u32>(desc, ND_ENTRIES) + (<usize>from << 3);
  for (let i: u32 = 0; i < n; i++) store<u64>(out + (<usize>i << 3), unpermute(desc, load<u64>(entries + (<usize>i << 3))));
}

// Whether the table at `desc` puts x and y (originals) in one bucket, so a query for one scans the other.
// @ts-ignore: decorator
@inline function sameBucket(desc: usize, x: u64, y: u64): bool {
  const d = load<u32>(desc, ND_BITS);
  return bucketOf(permute(desc, x), d) == bucketOf(permute(desc, y), d);
}

// Emits (query, id, position) and the distance for every table-0 entry equal to `fp`: the bucket is
// sorted, so they are one run found by binary search. Returns the new out count, or cap + 1 when
// out is full.
// @ts-ignore: decorator
@inline function emitMatches(desc0: usize, ids: usize, fp: u64, q: u32, out: usize, dists: usize, dist: u32, count: u32, cap: u32): u32 {
  const x = permute(desc0, fp);
  const entries = <usize>load<u32>(desc0, ND_ENTRIES);
  const dir = <usize>load<u32>(desc0, ND_DIR);
  const b = bucketOf(x, load<u32>(desc0, ND_BITS));
  let lo = load<u32>(dir + (<usize>b << 2));
  let hi = load<u32>(dir + (<usize>(b + 1) << 2));
  const end = hi;
  // The first entry not below x.
  while (lo < hi) {
    const mid = lo + ((hi - lo) >> 1);
    if (load<u64>(entries + (<usize>mid << 3)) < x) lo = mid + 1;
    else hi = mid;
  }
  for (let j = lo; j < end && load<u64>(entries + (<usize>j << 3)) == x; j++) {
    if (count >= cap) return cap + 1;
    writeMatch(out, dists, count++, q, load<u32>(ids + (<usize>j << 2)), j, dist);
  }
  return count;
}

/**
 * Queries `nq` fingerprints at `qs` against `tables` tables of `n` entries and `pn` pending
 * entries (fps at `pfps`, ids at `pids`, scanned in full). Writes (query, id, position: in table 0,
 * or n + j for pending entry j) u32 triples to out, and the distance of each at dists (u8). Returns
 * the number of queries answered completely (fewer than nq when out would overflow: the caller
 * grows out and continues); the triple count is left at `state`.
 */
export function ndQuery(descs: usize, tables: u32, n: u32, ids: usize, pfps: usize, pids: usize, pn: u32, qs: usize, nq: u32, k: u32, out: usize, dists: usize, cap: u32, state: usize): u32 {
  let count: u32 = 0;
  for (let q: u32 = 0; q < nq; q++) {
    const fp = load<u64>(qs + (<usize>q << 3));
    const first = count;
    for (let t: u32 = 0; t < tables && n > 0; t++) {
      const desc = descs + <usize>t * TABLE_BYTES;
      const entries = <usize>load<u32>(desc, ND_ENTRIES);
      const dir = <usize>load<u32>(desc, ND_DIR);
      const x = permute(desc, fp);
      const b = bucketOf(x, load<u32>(desc, ND_BITS));
      const start = load<u32>(dir + (<usize>b << 2));
      const end = load<u32>(dir + (<usize>(b + 1) << 2));
      for (let j = start; j < end; j++) {
        const e = load<u64>(entries + (<usize>j << 3));
        // A copy of the entry before: that fingerprint was taken (or refused) already.
        if (j > start && e == load<u64>(entries + (<usize>(j - 1) << 3))) continue;
        const dist = <u32>popcnt<u64>(e ^ x);
        if (dist > k) continue;
        const near = unpermute(desc, e);
        // Taken from the first table whose bucket holds it: an earlier one emitted it already.
        let earlier = false;
        for (let u: u32 = 0; u < t; u++) {
          if (sameBucket(descs + <usize>u * TABLE_BYTES, near, fp)) { earlier = true; break; }
        }
        if (earlier) continue;
        count = emitMatches(descs, ids, near, q, out, dists, dist, count, cap);
        if (count > cap) { store<u32>(state, first); return q; }
      }
    }
    for (let j: u32 = 0; j < pn; j++) {
      const dist = <u32>popcnt<u64>(load<u64>(pfps + (<usize>j << 3)) ^ fp);
      if (dist > k) continue;
      if (count >= cap) { store<u32>(state, first); return q; }
      writeMatch(out, dists, count++, q, load<u32>(pids + (<usize>j << 2)), n + j, dist);
    }
  }
  store<u32>(state, count);
  return nq;
}

/**
 * Exhaustive scan (for checking): every entry of table 0 (compared in its permuted form, which
 * keeps Hamming distances) and every pending entry; writes what ndQuery writes.
 */
export function ndScan(desc0: usize, n: u32, ids: usize, pfps: usize, pids: usize, pn: u32, qs: usize, nq: u32, k: u32, out: usize, dists: usize, cap: u32, state: usize): u32 {
  const entries = <usize>load<u32>(desc0, ND_ENTRIES);
  let count: u32 = 0;
  for (let q: u32 = 0; q < nq; q++) {
    const fp = load<u64>(qs + (<usize>q << 3));
    const x = permute(desc0, fp);
    const first = count;
    // Two tight loops (table 0, then pending): the scan is a baseline and should be a fast one.
    for (let j: u32 = 0; j < n; j++) {
      const dist = <u32>popcnt<u64>(load<u64>(entries + (<usize>j << 3)) ^ x);
      if (dist > k) continue;
      if (count >= cap) { store<u32>(state, first); return q; }
      writeMatch(out, dists, count++, q, load<u32>(ids + (<usize>j << 2)), j, dist);
    }
    for (let j: u32 = 0; j < pn; j++) {
      const dist = <u32>popcnt<u64>(load<u64>(pfps + (<usize>j << 3)) ^ fp);
      if (dist > k) continue;
      if (count >= cap) { store<u32>(state, first); return q; }
      writeMatch(out, dists, count++, q, load<u32>(pids + (<usize>j << 2)), n + j, dist);
    }
  }
  store<u32>(state, count);
  return nq;
}
