// The split path of line dedup, for a seen-set that no longer lives in the engine's own memory
// alone (several memories, or a full table with lines spilled to disk): the one-call pipeline of
// line-dedup.ts cut into steps with a batch in memory between them, so the wrapper can ask other
// instances about the fingerprints. lineScan finds and fingerprints a batch of lines; groupBy
// sorts fixed-size records by some bits of one of their words (fingerprints by table, spill
// records by file); scatterFlags puts per-group answers back in line order; lineEmit copies the
// kept lines out, and the lines whose fate is decided only at the end (spilled) to a spill region
// with one record each. Line semantics are line-dedup.ts's, byte for byte.

import { md5Lanes } from "./md5-lanes";
import { xxh128 } from "./xxh3";
import { LINE_HASH, LINE_SCRATCH, LINE_OUT, LINE_OUT_LEN, LINE_LINES, LINE_UNIQUE, LINE_FRESH, LINE_FRESH_LEN, newlines } from "./line-dedup";

const NL: u8 = 0x0a;
const CR: u8 = 0x0d;
/** A scanned line's record: start, key end, line end (all addresses), 1 when it had no "\n". */
export const SPLIT_LINE_BYTES: u32 = 16;
/** A spill record: the 16-byte fingerprint, then the line's spill index as an f64. */
export const SPILL_RECORD_BYTES: u32 = 24;
/** Offset of a spill record's f64 spill index. */
export const SPILL_RECORD_INDEX: u32 = 16;
const LANES: u32 = 32;

/**
 * Finds up to `max` lines of buf[0, len) (with `final` = 1 a last line without "\n" too), writing a
 * record each to `records` and its 16-byte fingerprint (the context's hash; an all-zero one
 * stored with lo = 1, as the table needs) to `digests`; with `digests` 0 no fingerprint (a keyed
 * dedup fingerprints each line's key instead: line-keys.ts). Returns the count, and stores at
 * `endAt` (u32) the bytes consumed: the end of the last line found, less buf.
 */
export function lineScan(ctx: usize, buf: usize, len: u32, final: u32, max: u32, records: usize, digests: usize, endAt: usize): u32 {
  const end = buf + <usize>len;
  const xxh = load<u32>(ctx, LINE_HASH) == 1;
  const hashed = digests != 0;
  let n: u32 = 0;
  let q = buf;
  let base = buf;
  let mask = newlines(base, end);
  while (n < max && q < end) {
    while (mask == 0 && base + 64 < end) {
      base += 64;
      mask = newlines(base, end);
    }
    const nl = mask != 0 ? base + <usize>ctz(mask) : end;
    mask &= mask - 1;
    let lineEnd = nl + 1;
    let open: u32 = 0;
    if (nl == end) {
      if (final == 0) break;
      lineEnd = end;
      open = 1;
    }
    const keyEnd = nl > q && load<u8>(nl - 1) == CR ? nl - 1 : nl;
    const r = records + <usize>n * <usize>SPLIT_LINE_BYTES;
    store<u32>(r, <u32>q);
    store<u32>(r, <u32>keyEnd, 4);
    store<u32>(r, <u32>lineEnd, 8);
    store<u32>(r, open, 12);
    if (xxh && hashed) xxh128(q, keyEnd - q, digests + (<usize>n << 4));
    n++;
    q = lineEnd;
  }
  store<u32>(endAt, <u32>(q - buf));
  if (!hashed) return n;
  if (!xxh) {
    const scratch = <usize>load<u32>(ctx, LINE_SCRATCH);
    for (let i: u32 = 0; i < n; i += LANES) md5Lanes(scratch, 0, records + <usize>i * <usize>SPLIT_LINE_BYTES, SPLIT_LINE_BYTES, min(LANES, n - i), digests + (<usize>i << 4));
  }
  for (let i: u32 = 0; i < n; i++) {
    const d = digests + (<usize>i << 4);
    if ((load<u64>(d) | load<u64>(d, 8)) == 0) store<u64>(d, 1);
  }
  return n;
}

/**
 * Sorts `n` records of `size` bytes from `src` into `dst` by key = (u64 at `word` >> shift) & (2^bits - 1),
 * stably: group g lies at records [starts[g], starts[g + 1]) (starts: 2^bits + 1 u32), and
 * perm[j] (u32) is the index in `src` of dst record j.
 */
export function groupBy(src: usize, n: u32, size: u32, word: u32, shift: u32, bits: u32, dst: usize, perm: usize, starts: usize): void {
  const groups: u32 = 1 << bits;
  const keyMask: u64 = (<u64>1 << <u64>bits) - 1;
  memory.fill(starts, 0, (<usize>groups + 1) << 2);
  for (let i: u32 = 0; i < n; i++) {
    const g = <u32>((load<u64>(src + <usize>i * <usize>size + <usize>word) >> <u64>shift) & keyMask);
    const at = starts + ((<usize>g + 1) << 2);
    store<u32>(at, load<u32>(at) + 1);
  }
  for (let g: u32 = 1; g <= groups; g++) {
    const at = starts + (<usize>g << 2);
    store<u32>(at, load<u32>(at) + load<u32>(at - 4));
  }
  // Place each record at its group's next free index (starts[g] runs ahead, then is put back).
  for (let i: u32 = 0; i < n; i++) {
    const from = src + <usize>i * <usize>size;
    const g = <u32>((load<u64>(from + <usize>word) >> <u64>shift) & keyMask);
    const at = starts + (<usize>g << 2);
    const j = load<u32>(at);
    store<u32>(at, j + 1);
    memory.copy(dst + <usize>j * <usize>size, from, size);
    store<u32>(perm + (<usize>j << 2), i);
  }
  for (let g = <i32>groups; g > 0; g--) store<u32>(starts + (<usize>g << 2), load<u32>(starts + ((<usize>g - 1) << 2)));
  store<u32>(starts, 0);
}

/**
 * Packs the 16-byte fingerprints i < n of `src` whose flag is 0 into `dst`, their indices into
 * `places` (u32), and clears every flag (1 becomes 0: seen): the batch's fingerprints a sealed
 * table lacks, to be asked elsewhere. Returns how many.
 */
export function gatherUnflagged(src: usize, flags: usize, n: u32, dst: usize, places: usize): u32 {
  let m: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    if (load<u8>(flags + <usize>i) != 0) {
      store<u8>(flags + <usize>i, 0);
      continue;
    }
    v128.store(dst + (<usize>m << 4), v128.load(src + (<usize>i << 4)));
    store<u32>(places + (<usize>m << 2), i);
    m++;
  }
  return m;
}

/** flags[places[perm[j]]] = grouped[j] for j < n: answers of a gathered subset back at their places in the batch. */
export function scatterFlagsAt(grouped: usize, perm: usize, places: usize, n: u32, flags: usize): void {
  for (let j: u32 = 0; j < n; j++) {
    const at = load<u32>(places + (<usize>load<u32>(perm + (<usize>j << 2)) << 2));
    store<u8>(flags + <usize>at, load<u8>(grouped + <usize>j));
  }
}

/** flags[perm[j]] = grouped[j] for j < n: answers of grouped records back in their first order. */
export function scatterFlags(grouped: usize, perm: usize, n: u32, flags: usize): void {
  for (let j: u32 = 0; j < n; j++) store<u8>(flags + <usize>load<u32>(perm + (<usize>j << 2)), load<u8>(grouped + <usize>j));
}

/** lineEmit's flag of a line printed as it is and never recorded (a record without its key, kept: --missing keep). */
export const EMIT_PASS: u8 = 2;

/**
 * Acts on `n` scanned lines by their flags (0: seen before; EMIT_PASS: printed, not recorded, its
 * fingerprint all zero; else not seen). Lines before `spillFrom` (an index into the batch): a
 * new line is appended to the output region (runs coalesced; "\n" added to a last line without
 * one), a seen one dropped. From `spillFrom` on, every line not seen (new or not recorded) is
 * decided at the end: its bytes (with "\n" added if it had none) go to `spill` and a record
 * (fingerprint, spill index first + k) to `spillRecords`. Counts lines and kept lines in the
 * context; returns the lines spilled, and stores the spill region's length at `spillLenAt` (u32).
 */
export function lineEmit(ctx: usize, records: usize, digests: usize, flags: usize, n: u32, spillFrom: u32, spill: usize, spillRecords: usize, first: f64, spillLenAt: usize): u32 {
  const out = <usize>load<u32>(ctx, LINE_OUT);
  let outLen = <usize>load<u32>(ctx, LINE_OUT_LEN);
  let spillLen = <usize>load<u32>(spillLenAt);
  let unique = load<u64>(ctx, LINE_UNIQUE);
  // The caller leaves room for n fingerprints in the fresh region (dedup --store).
  const freshAt = <usize>load<u32>(ctx, LINE_FRESH);
  let freshLen = load<u32>(ctx, LINE_FRESH_LEN);
  let spilled: u32 = 0;
  let runStart: usize = 0;
  let runEnd: usize = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = records + <usize>i * <usize>SPLIT_LINE_BYTES;
    const flag = load<u8>(flags + <usize>i);
    if (flag == 0) continue;
    const start = <usize>load<u32>(r);
    const lineEnd = <usize>load<u32>(r, 8);
    const open = load<u32>(r, 12) != 0;
    // A passed line is printed, or spilled with the others past spillFrom to keep the order, never recorded.
    const pass = flag == EMIT_PASS;
    if (i < spillFrom) {
      unique++;
      if (freshAt != 0 && !pass) {
        memory.copy(freshAt + (<usize>freshLen << 4), digests + (<usize>i << 4), 16);
        freshLen++;
      }
      if (start != runEnd) {
        memory.copy(out + outLen, runStart, runEnd - runStart);
        outLen += runEnd - runStart;
        runStart = start;
      }
      runEnd = lineEnd;
      if (open) {
        memory.copy(out + outLen, runStart, runEnd - runStart);
        outLen += runEnd - runStart;
        store<u8>(out + outLen++, NL);
        runStart = runEnd;
      }
      continue;
    }
    memory.copy(spill + spillLen, start, lineEnd - start);
    spillLen += lineEnd - start;
    if (open) store<u8>(spill + spillLen++, NL);
    const rec = spillRecords + <usize>spilled * <usize>SPILL_RECORD_BYTES;
    memory.copy(rec, digests + (<usize>i << 4), 16);
    store<f64>(rec, first + <f64>spilled, SPILL_RECORD_INDEX);
    spilled++;
  }
  memory.copy(out + outLen, runStart, runEnd - runStart);
  outLen += runEnd - runStart;
  store<u32>(ctx, <u32>outLen, LINE_OUT_LEN);
  store<u64>(ctx, load<u64>(ctx, LINE_LINES) + <u64>n, LINE_LINES);
  store<u64>(ctx, unique, LINE_UNIQUE);
  store<u32>(spillLenAt, <u32>spillLen);
  if (freshAt != 0) store<u32>(ctx, freshLen, LINE_FRESH_LEN);
  return spilled;
}

/** Copies `bytes` bytes of each of `n` records from src (stride srcStride) to dst (stride dstStride). */
export function gather(src: usize, n: u32, srcStride: u32, dst: usize, dstStride: u32, bytes: u32): void {
  for (let i: u32 = 0; i < n; i++) memory.copy(dst + <usize>i * <usize>dstStride, src + <usize>i * <usize>srcStride, bytes);
}

/** The spill indexes of the `n` spill records whose flag is not 0, in order, as f64s to `out`; returns their count. */
export function spillKept(records: usize, flags: usize, n: u32, out: usize): u32 {
  let m: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    if (load<u8>(flags + <usize>i) == 0) continue;
    store<f64>(out + (<usize>m << 3), load<f64>(records + <usize>i * <usize>SPILL_RECORD_BYTES, SPILL_RECORD_INDEX));
    m++;
  }
  return m;
}
