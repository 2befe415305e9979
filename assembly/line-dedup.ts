// The byte pipeline of line dedup: one call per chunk of input finds the lines (SIMD newline
// scan, scalar fallback), fingerprints them, tests-and-sets each in the seen-set and copies the
// kept lines, coalesced into runs, to an output region the caller writes with one write.
// Line semantics (the CLI's, byte for byte): a line ends at "\n"; its key leaves out the "\n" and
// one "\r" before it; a final line without "\n" (only when the caller says the input ended) is a
// line too, printed with a "\n" added. All state lives in a context block laid out below.

import { md5, md5Init, md5Update, md5Final, MD5_STATE_BYTES } from "./md5";
import { md5Lanes, MD5_LANES_SCRATCH_BYTES } from "./md5-lanes";
import { xxh128, xxh128StreamInit, xxh128StreamBlocks, xxh128StreamFinal, XXH128_BLOCK_BYTES } from "./xxh3";
import { nh128 } from "./nh-hash";
import { splitBlockOf, splitBlockHas, splitBlockSet } from "./split-block";
import { mulhi64 } from "./reduce";
import { partitionOf, findOrInsertIn, containsIn, COMPACT_SLOT } from "./fingerprint-buckets";

// Context block (offsets in bytes). Exported, with the block's size and the stage record's layout,
// so src/lines/line-engine.ts reads them from the module instead of writing them a second time.
export const LINE_MODE: u32 = 0; // u32: 0 exact table, 1 approximate: the table until the first blocked Bloom stage, then the stages
export const LINE_HASH: u32 = 4; // u32 (exact): 0 MD5, 1 XXH3-128
export const LINE_OUT: u32 = 8; // u32: output region
export const LINE_OUT_LEN: u32 = 12; // u32: bytes in the output region (the caller resets it after writing)
export const LINE_SCRATCH: u32 = 16; // u32: scratch of LINE_SCRATCH_BYTES
export const LINE_SCALAR: u32 = 20; // u32: 1 = scalar newline scan
export const LINE_STATUS: u32 = 24; // u32: 0 = input worked through, 1 = stopped: the seen-set must grow, 2 = stopped: LINE_FRESH is full
export const LINE_LINES: u32 = 32; // u64
export const LINE_UNIQUE: u32 = 40; // u64
export const LINE_TABLE: u32 = 48; // u32: exact table
export const LINE_LOG_PARTS: u32 = 52; // u32
export const LINE_BUCKETS: u32 = 56; // u32: buckets per partition
export const LINE_LIMIT: u32 = 60; // u32: most keys one partition may hold
export const LINE_COUNTS: u32 = 64; // u32: u32 key count per partition
export const LINE_STAGES: u32 = 68; // u32: blocked stages in use
export const LINE_STAGE_PTR: u32 = 72; // u32: stage records of LINE_STAGE_BYTES
export const LINE_FRESH: u32 = 76; // u32: exact: where the fingerprints of new lines go, 16 bytes each (0: not kept)
export const LINE_FRESH_CAP: u32 = 80; // u32: fingerprints LINE_FRESH has room for
export const LINE_FRESH_LEN: u32 = 84; // u32: fingerprints in LINE_FRESH
export const LINE_SLOT: u32 = 88; // u32: the exact table's slot bytes: 16 wide, 12 compact (fingerprint-buckets.ts)
/** Bytes of the context block. */
export const LINE_CTX_BYTES: u32 = 128;
// Stage record: bits u32, 4 bytes unused, blocks f64, keys set f64, capacity f64. A stage is a
// split-block filter (split-block.ts): sixteen bits a key, so the record holds no k.
export const LINE_STAGE_BITS: u32 = 0;
export const LINE_STAGE_BLOCKS: u32 = 8;
export const LINE_STAGE_KEYS: u32 = 16;
export const LINE_STAGE_CAPACITY: u32 = 24;
/** Bytes of one stage record. */
export const LINE_STAGE_BYTES: u32 = 32;

const GROUP: u32 = 32;
const NL: u8 = 0x0a;
const CR: u8 = 0x0d;
// Scratch: MD5 scratch (MD5_LANES_SCRATCH_BYTES) | digests GROUP * 16 | line records GROUP * 16.
// A record: line start, key end, line end, and the cache line its look-up will read.
const DIGESTS: usize = (<usize>MD5_LANES_SCRATCH_BYTES + 15) & ~15;
const RECORDS: usize = DIGESTS + <usize>GROUP * 16;
const RECORD: usize = 16;
/** Bytes of the scratch region the context's LINE_SCRATCH names. */
export const LINE_SCRATCH_BYTES: u32 = <u32>(RECORDS + <usize>GROUP * RECORD);

// @ts-ignore: decorator
@inline function scanScalar(p: usize, end: usize): usize {
  while (p < end && load<u8>(p) != NL) p++;
  return p;
}

/**
 * Newlines of the 64 bytes from `base` as bits (bit i: base[i] is "\n"), none at or past `end`:
 * four compares a 64-byte window, so a line of 90 bytes costs about 1.5 compares, where a scan
 * from each line's start costs one every 16 bytes. Bytes past `end` are never read.
 */
// @ts-ignore: decorator
@inline export function newlines(base: usize, end: usize): u64 {
  if (base + 64 <= end) {
    const nl = i8x16.splat(NL);
    const m0 = <u64>i8x16.bitmask(i8x16.eq(v128.load(base), nl));
    const m1 = <u64>i8x16.bitmask(i8x16.eq(v128.load(base, 16), nl));
    const m2 = <u64>i8x16.bitmask(i8x16.eq(v128.load(base, 32), nl));
    const m3 = <u64>i8x16.bitmask(i8x16.eq(v128.load(base, 48), nl));
    return m0 | (m1 << 16) | (m2 << 32) | (m3 << 48);
  }
  let mask: u64 = 0;
  for (let p = base; p < end; p++) if (load<u8>(p) == NL) mask |= (<u64>1) << <u64>(p - base);
  return mask;
}

/** The 16-byte fingerprint of one key into `out`, as the context's mode and hash say. */
// @ts-ignore: decorator
@inline export function digest(ctx: usize, scratch: usize, key: usize, len: usize, out: usize): void {
  // Approximate mode hashes with NH (nh-hash.ts): its halves are the split-block filter's pair (h1
  // picks the block, h2 the bits in it), and the same hash serves the table phase and the filter
  // that replaces it. The filter is never saved, so it need not answer like BlockedBloomFilter.
  if (load<u32>(ctx, LINE_MODE) == 1) nh128(key, len, out);
  else if (load<u32>(ctx, LINE_HASH) == 1) xxh128(key, len, out);
  else md5(scratch, key, len, out);
  // The all-zero key marks an empty slot of the table.
  if ((load<u64>(out) | load<u64>(out, 8)) == 0) store<u64>(out, 1);
}

// @ts-ignore: decorator
@inline function stageAt(ctx: usize, i: u32): usize {
  return <usize>load<u32>(ctx, LINE_STAGE_PTR) + <usize>i * <usize>LINE_STAGE_BYTES;
}

/** 1 when the fingerprint is new (now recorded), 0 when seen, 2 when recording it needs growth first. */
export function testSet(ctx: usize, d: usize): u32 {
  const lo = load<u64>(d);
  const hi = load<u64>(d, 8);
  if (load<u32>(ctx, LINE_MODE) == 1 && load<u32>(ctx, LINE_STAGES) > 0) {
    const stages = load<u32>(ctx, LINE_STAGES);
    // Newest stage first, as lineDedup probes.
    for (let i = <i32>stages - 1; i >= 0; i--) {
      const s = stageAt(ctx, <u32>i);
      if (splitBlockHas(splitBlockOf(<usize>load<u32>(s, LINE_STAGE_BITS), <u64>load<f64>(s, LINE_STAGE_BLOCKS), lo), hi) != 0) return 0;
    }
    const s = stageAt(ctx, stages - 1);
    if (load<f64>(s, LINE_STAGE_KEYS) >= load<f64>(s, LINE_STAGE_CAPACITY)) return 2;
    splitBlockSet(splitBlockOf(<usize>load<u32>(s, LINE_STAGE_BITS), <u64>load<f64>(s, LINE_STAGE_BLOCKS), lo), hi);
    store<f64>(s, load<f64>(s, LINE_STAGE_KEYS) + 1, LINE_STAGE_KEYS);
    return 1;
  }
  const part = partitionOf(hi, load<u32>(ctx, LINE_LOG_PARTS));
  const buckets = load<u32>(ctx, LINE_BUCKETS);
  const base = <usize>load<u32>(ctx, LINE_TABLE) + <usize>part * <usize>buckets * 64;
  const end = base + <usize>buckets * 64;
  const home = base + <usize>mulhi64(lo, <u64>buckets) * 64;
  const countAt = <usize>load<u32>(ctx, LINE_COUNTS) + (<usize>part << 2);
  const count = load<u32>(countAt);
  const compact = load<u32>(ctx, LINE_SLOT) == COMPACT_SLOT;
  if (count >= load<u32>(ctx, LINE_LIMIT)) return containsIn(compact, base, end, home, lo, hi) != 0 ? 0 : 2;
  const fresh = findOrInsertIn(compact, base, end, home, lo, hi);
  store<u32>(countAt, count + fresh);
  return fresh;
}

let touched: u32 = 0;

/**
 * Works the lines of buf[0, len): every complete line, and with `final` = 1 a last line without
 * "\n". Kept lines are appended to the output region. Returns the bytes consumed (the end of the
 * last line worked); stops early with status 1 when the seen-set must grow before the next line,
 * or 2 when the fresh region (dedup --store) has no room for another group of fingerprints.
 * Lines go in groups: find them, fingerprint them and compute the cache line each look-up will
 * read, read those lines with nothing depending on one another (so their misses overlap), then
 * test-and-set in order.
 */
export function lineDedup(ctx: usize, buf: usize, len: u32, final: u32): u32 {
  const scratch = <usize>load<u32>(ctx, LINE_SCRATCH);
  const digests = scratch + DIGESTS;
  const records = scratch + RECORDS;
  const scalar = load<u32>(ctx, LINE_SCALAR) != 0;
  // Stages: 0 while approximate mode is still in its exact table phase.
  const stages = load<u32>(ctx, LINE_STAGES);
  const approx = load<u32>(ctx, LINE_MODE) == 1 && stages > 0;
  const nh = load<u32>(ctx, LINE_MODE) == 1;
  const xxh = load<u32>(ctx, LINE_HASH) == 1;
  const out = <usize>load<u32>(ctx, LINE_OUT);
  // Exact table.
  const table = <usize>load<u32>(ctx, LINE_TABLE);
  const logParts = load<u32>(ctx, LINE_LOG_PARTS);
  const buckets = load<u32>(ctx, LINE_BUCKETS);
  const partBytes = <usize>buckets * 64;
  const limit = load<u32>(ctx, LINE_LIMIT);
  const counts = <usize>load<u32>(ctx, LINE_COUNTS);
  const compact = load<u32>(ctx, LINE_SLOT) == COMPACT_SLOT;
  // Blocked stages: the last one takes new keys.
  const last = approx ? stageAt(ctx, stages - 1) : 0;
  const lastBits = approx ? <usize>load<u32>(last, LINE_STAGE_BITS) : 0;
  const lastBlocks = approx ? <u64>load<f64>(last, LINE_STAGE_BLOCKS) : 0;
  let lastKeys = approx ? load<f64>(last, LINE_STAGE_KEYS) : 0;
  const lastCapacity = approx ? load<f64>(last, LINE_STAGE_CAPACITY) : 0;
  let outLen = <usize>load<u32>(ctx, LINE_OUT_LEN);
  let lines = load<u64>(ctx, LINE_LINES);
  let unique = load<u64>(ctx, LINE_UNIQUE);
  // A persisted seen-set (dedup --store) writes the new lines' fingerprints after the call.
  const freshAt = <usize>load<u32>(ctx, LINE_FRESH);
  const freshCap = load<u32>(ctx, LINE_FRESH_CAP);
  let freshLen = load<u32>(ctx, LINE_FRESH_LEN);
  const end = buf + <usize>len;
  let p = buf;
  let runStart = buf;
  let runEnd = buf;
  let status: u32 = 0;
  let unterminated = false;
  let sum: u32 = 0;
  // The SIMD scan's window: the newlines of [base, base + 64) not yet taken, as bits.
  let base = buf;
  let mask = scalar ? 0 : newlines(base, end);
  while (status == 0) {
    // No room for a whole group's fingerprints: the caller takes them and calls again from here.
    if (freshAt != 0 && freshLen + GROUP > freshCap) {
      status = 2;
      break;
    }
    let n: u32 = 0;
    let q = p;
    while (n < GROUP && q < end) {
      let nl: usize;
      if (scalar) nl = scanScalar(q, end);
      else {
        while (mask == 0 && base + 64 < end) {
          base += 64;
          mask = newlines(base, end);
        }
        nl = mask != 0 ? base + <usize>ctz(mask) : end;
        mask &= mask - 1;
      }
      let lineEnd = nl + 1;
      if (nl == end) {
        if (final == 0) break;
        lineEnd = end;
        unterminated = true;
      }
      const keyEnd = nl > q && load<u8>(nl - 1) == CR ? nl - 1 : nl;
      const r = records + <usize>n * RECORD;
      store<u32>(r, <u32>q);
      store<u32>(r, <u32>keyEnd, 4);
      store<u32>(r, <u32>lineEnd, 8);
      n++;
      q = lineEnd;
    }
    if (n == 0) break;
    // MD5 takes the group's lines four at a time (a record's start and key end are its message).
    if (!xxh && !nh) md5Lanes(scratch, 0, records, RECORD, n, digests);
    for (let i: u32 = 0; i < n; i++) {
      const r = records + <usize>i * RECORD;
      const start = <usize>load<u32>(r);
      const key = <usize>load<u32>(r, 4) - start;
      const d = digests + (<usize>i << 4);
      let probe: usize;
      if (approx) {
        nh128(start, key, d);
        // As in the table phase, whose fingerprints this filter took over.
        if ((load<u64>(d) | load<u64>(d, 8)) == 0) store<u64>(d, 1);
        probe = splitBlockOf(lastBits, lastBlocks, load<u64>(d));
      } else {
        if (nh) nh128(start, key, d);
        else if (xxh) xxh128(start, key, d);
        // The all-zero key marks an empty slot of the table.
        if ((load<u64>(d) | load<u64>(d, 8)) == 0) store<u64>(d, 1);
        probe = table + <usize>partitionOf(load<u64>(d, 8), logParts) * partBytes + (<usize>mulhi64(load<u64>(d), <u64>buckets) << 6);
      }
      store<u32>(r, <u32>probe, 12);
    }
    // Independent reads of every line the group will probe: their cache and TLB misses overlap.
    for (let i: u32 = 0; i < n; i++) sum += load<u32>(<usize>load<u32>(records + <usize>i * RECORD, 12));
    if (approx && stages > 1) {
      for (let j: u32 = 0; j + 1 < stages; j++) {
        const s = stageAt(ctx, j);
        const bits = <usize>load<u32>(s, LINE_STAGE_BITS);
        const blocks = <u64>load<f64>(s, LINE_STAGE_BLOCKS);
        for (let i: u32 = 0; i < n; i++) sum += load<u32>(bits + (<usize>mulhi64(load<u64>(digests + (<usize>i << 4)), blocks) << 6));
      }
    }
    for (let i: u32 = 0; i < n; i++) {
      const r = records + <usize>i * RECORD;
      const d = digests + (<usize>i << 4);
      const probe = <usize>load<u32>(r, 12);
      let fresh: u32;
      if (approx) {
        const h2 = load<u64>(d, 8);
        // The newest stage first: a repeat is most often of a recent line, and stops there.
        fresh = splitBlockHas(probe, h2) ^ 1;
        for (let j: u32 = 0; fresh != 0 && j + 1 < stages; j++) {
          const s = stageAt(ctx, j);
          fresh = splitBlockHas(splitBlockOf(<usize>load<u32>(s, LINE_STAGE_BITS), <u64>load<f64>(s, LINE_STAGE_BLOCKS), load<u64>(d)), h2) ^ 1;
        }
        if (fresh != 0) {
          if (lastKeys >= lastCapacity) fresh = 2;
          else {
            splitBlockSet(probe, h2);
            lastKeys += 1;
          }
        }
      } else {
        const lo = load<u64>(d);
        const hi = load<u64>(d, 8);
        const part = partitionOf(hi, logParts);
        const base = table + <usize>part * partBytes;
        const countAt = counts + (<usize>part << 2);
        const count = load<u32>(countAt);
        if (count >= limit) {
          fresh = containsIn(compact, base, base + partBytes, probe, lo, hi) != 0 ? 0 : 2;
        } else {
          fresh = findOrInsertIn(compact, base, base + partBytes, probe, lo, hi);
          store<u32>(countAt, count + fresh);
          if (fresh != 0 && freshAt != 0) {
            v128.store(freshAt + (<usize>freshLen << 4), v128.load(d));
            freshLen++;
          }
        }
      }
      if (fresh == 2) {
        status = 1;
        unterminated = false;
        break;
      }
      const start = <usize>load<u32>(r);
      const lineEnd = <usize>load<u32>(r, 8);
      lines++;
      if (fresh != 0) {
        unique++;
        // Consecutive kept lines are copied as one run.
        if (start != runEnd) {
          memory.copy(out + outLen, runStart, runEnd - runStart);
          outLen += runEnd - runStart;
          runStart = start;
        }
        runEnd = lineEnd;
      } else if (unterminated && i + 1 == n) {
        unterminated = false;
      }
      p = lineEnd;
    }
  }
  touched ^= sum;
  memory.copy(out + outLen, runStart, runEnd - runStart);
  outLen += runEnd - runStart;
  // A kept last line without "\n" is printed with one.
  if (unterminated) store<u8>(out + outLen++, NL);
  if (approx) store<f64>(last, lastKeys, LINE_STAGE_KEYS);
  store<u32>(ctx, <u32>outLen, LINE_OUT_LEN);
  store<u64>(ctx, lines, LINE_LINES);
  store<u64>(ctx, unique, LINE_UNIQUE);
  store<u32>(ctx, status, LINE_STATUS);
  if (freshAt != 0) store<u32>(ctx, freshLen, LINE_FRESH_LEN);
  return <u32>(p - buf);
}


/** The fingerprint of one key as the context's mode says, into 16 bytes at `out`. */
export function lineDigest(ctx: usize, key: usize, len: usize, out: usize): void {
  digest(ctx, <usize>load<u32>(ctx, LINE_SCRATCH), key, len, out);
}

// A key too long for one memory is fingerprinted in pieces: lineStreamInit, lineStreamUpdate
// with whole blocks, lineStreamFinal with the rest. The result is lineDigest's for the same key:
// over 256 bytes both modes fingerprint with XXH3-128 (nh-hash.ts), or with MD5 when asked.

/** Bytes of the streaming state lineStream* keep at `st`. */
export const LINE_STREAM_STATE_BYTES: u32 = MD5_STATE_BYTES > 64 ? MD5_STATE_BYTES : 64;

// @ts-ignore: decorator
@inline function streamsXxh(ctx: usize): bool {
  return load<u32>(ctx, LINE_MODE) == 1 || load<u32>(ctx, LINE_HASH) == 1;
}

/** Starts the fingerprint of a key longer than 1,024 bytes, as the context's mode says. */
export function lineStreamInit(ctx: usize, st: usize): void {
  if (streamsXxh(ctx)) xxh128StreamInit(st);
  else md5Init(st);
}

/** Feeds `len` bytes at `p` (a multiple of XXH128_BLOCK_BYTES, 1,024), with more of the key to come. */
export function lineStreamUpdate(ctx: usize, st: usize, p: usize, len: usize): void {
  if (streamsXxh(ctx)) xxh128StreamBlocks(st, p, len / <usize>XXH128_BLOCK_BYTES);
  else md5Update(st, p, len);
}

/**
 * Feeds the key's last `len` bytes (at least 1) at `p`, whose 64 bytes before are the key's own,
 * and writes the fingerprint of the `total` bytes (over 1,024) to `out`, as lineDigest would.
 */
export function lineStreamFinal(ctx: usize, st: usize, p: usize, len: usize, total: f64, out: usize): void {
  if (streamsXxh(ctx)) {
    xxh128StreamFinal(st, p, len, <u64>total, out);
  } else {
    md5Update(st, p, len);
    md5Final(st, out);
  }
  if ((load<u64>(out) | load<u64>(out, 8)) == 0) store<u64>(out, 1);
}

/** Tests-and-sets one 16-byte fingerprint at `d` (from lineDigest): 1 new, 0 seen, 2 must grow first. */
export function digestDedup(ctx: usize, d: usize): u32 {
  const fresh = testSet(ctx, d);
  if (fresh != 2) {
    store<u64>(ctx, load<u64>(ctx, LINE_LINES) + 1, LINE_LINES);
    store<u64>(ctx, load<u64>(ctx, LINE_UNIQUE) + <u64>fresh, LINE_UNIQUE);
  }
  return fresh;
}
