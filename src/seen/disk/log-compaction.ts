// Compaction of a disk seen-set's file (file-log.ts): rewritten, under the set's lock, with each
// live fingerprint once, in the bucket tables' order (partition, then low word:
// assembly/fingerprint-compact.ts), so the next load fills its table bucket after bucket instead
// of at random, and forgotten fingerprints take no room. A compaction works the partitions in
// groups that fit its memory, each group a pass over the file; the new file is written aside,
// flushed and renamed into place, so a crash leaves the old file or the new one, each whole.
import { closeSync, fdatasyncSync, fstatSync, openSync, renameSync, rmSync } from "node:fs";
import { FormatError } from "../../errors.js";
import { readAt, writeAt } from "../../lines/file-range.js";
import type { Arena } from "../../wasm/arena.js";
import { array, type ArrayRegion } from "../../wasm/array-region.js";
import { LOG_PARTS, PARTS } from "../../wasm/bucket-layout.js";
import { decodeRecords, encodeRecords, RECORD_FINGERPRINTS } from "../fingerprint-batches.js";

/** Bytes read at a time. */
const PIECE = 4 << 20;
/** Least memory a pass is given, whatever the table left: only a small set (a test's) has less. */
const MIN_PASS_BYTES = 32 << 20;
/** Bytes of memory a fingerprint of a pass takes: itself, its sorted copy and about one count. */
const ENTRY_BYTES = 16 + 16 + 4;
/** Most memory one pass takes, whatever it is given: one WebAssembly memory holds a pass. */
const MAX_PASS_BYTES = 1 << 30;
/** A file grown by less than this since its last compaction is left as it is (tests set less: CRAWLSIEVE_TEST_COMPACT_FROM). */
const compactFromBytes = (): number => Number(process.env.CRAWLSIEVE_TEST_COMPACT_FROM ?? 64 << 20);

/** Bytes a pass of a compaction in `arena` may use: the memory of the table its caller is done with, less a piece to read into (at least 32 MiB, at most 1 GiB). */
export function compactionRoom(arena: Arena): number {
  return Math.min(Math.max(arena.k.memory.buffer.byteLength - arena.base - PIECE, MIN_PASS_BYTES), MAX_PASS_BYTES);
}

/**
 * True when a file found at `found` bytes (now `size`), whose first `sortedBytes` (header
 * included) are the last compaction's output, should be compacted within `memory` bytes
 * (compactionRoom): what came after outgrew that when it was found, and by 64 MiB (doubling keeps
 * the rewriting to a few times each fingerprint, however the set grows), and four passes over the
 * file as it is now do it. A table that held
 * the whole set leaves room for that (about 2.3 passes); one frozen at a memory budget does not,
 * and its order would not be used, since no one with that budget loads the set whole.
 */
export function compactionDue(found: number, size: number, sortedBytes: number, header: number, memory: number): boolean {
  const tail = found - sortedBytes;
  return tail >= compactFromBytes() && tail > 0 && tail >= sortedBytes - header && ((size - header) / 16) * ENTRY_BYTES <= 4 * memory;
}

/** Bytes of the records holding `count` fingerprints as a compaction writes them (full records, the last one short). */
export function recordBytes(count: number): number {
  return 16 * count + 16 * Math.ceil(count / RECORD_FINGERPRINTS);
}

/** What a compaction wrote. */
export interface Compacted {
  /** The new file's path (aside, to be renamed into place by the caller). */
  readonly aside: string;
  /** Live fingerprints written. */
  readonly fingerprints: number;
  /** The new file's size. */
  readonly size: number;
}

/**
 * Writes the compaction of the file `path` open as `fd` (`size` bytes; its verified records from
 * byte `header` on) to the new file `aside`, starting with `head(fingerprints)`, flushed when
 * `durable`; in the memory of `arena` (an instance its owner is done with: its contents are
 * overwritten), grown only when one partition needs more than it has. A torn last record is left
 * out: it was never acknowledged. The caller renames the file into place.
 */
export function writeCompaction(path: string, fd: number, size: number, header: number, head: (fingerprints: number) => Uint8Array, durable: boolean, arena: Arena, aside: string): Compacted {
  const k = arena.k;
  const budget = compactionRoom(arena);
  const counts = new Uint32Array(PARTS);
  {
    const r = arena.place({ counts: array(4, PARTS), piece: array(1, PIECE) });
    // The instance's memory holds what its last owner left there.
    r.counts.fill(arena.u8);
    eachBatch(arena, r.piece, fd, size, header, path, (at, n) => k.fpPartitionCounts(at, n, LOG_PARTS, r.counts.ptr));
    counts.set(r.counts.view(arena.u8, Uint32Array));
  }
  const out = openSync(aside, "w", 0o644);
  try {
    // The header's count is known at the end: its place is kept, then written.
    let at = head(0).length;
    let written = 0;
    const pending = new Uint8Array(16 * RECORD_FINGERPRINTS);
    let held = 0;
    const scratch = new Uint8Array(16 * RECORD_FINGERPRINTS + 16);
    const emit = (fingerprints: Uint8Array): void => {
      for (let i = 0; i < fingerprints.length; ) {
        const take = Math.min(fingerprints.length - i, pending.length - held);
        pending.set(fingerprints.subarray(i, i + take), held);
        held += take;
        i += take;
        if (held === pending.length) flush();
      }
    };
    const flush = (): void => {
      if (held === 0) return;
      const records = encodeRecords(pending.subarray(0, held), false, scratch);
      writeAt(out, records, at);
      at += records.length;
      written += held / 16;
      held = 0;
    };
    for (let from = 0; from < PARTS; ) {
      // A group of partitions that fits the memory (at least one partition, whatever it needs).
      let to = from + 1;
      let entries = counts[from];
      while (to < PARTS && (entries + counts[to]) * ENTRY_BYTES <= budget) entries += counts[to++];
      const largest = Math.max(...counts.subarray(from, to));
      const r = arena.place({ cursors: array(4, PARTS), piece: array(1, PIECE), tail: array(16, entries), scratch: 16 * largest + 4 * countBuckets(largest) });
      const cursors = r.cursors.view(arena.u8, Uint32Array);
      for (let p = from, sum = 0; p < to; p++) {
        cursors[p - from] = sum;
        sum += counts[p];
      }
      eachBatch(arena, r.piece, fd, size, header, path, (at, n, forget) => k.fpScatter(at, n, LOG_PARTS, from, to, r.cursors.ptr, r.tail.ptr, forget ? 1 : 0));
      for (let p = from, start = 0; p < to; start += counts[p], p++) {
        // The output takes the tail's place: the kernel sorts the tail into the scratch first.
        const n = k.fpCompactPartition(p, LOG_PARTS, r.tail.at(start), counts[p], r.scratch, r.tail.at(start));
        emit(r.tail.bytes(arena.u8, start, n));
      }
      from = to;
    }
    flush();
    writeAt(out, head(written), 0);
    if (durable) fdatasyncSync(out);
    const compacted = { aside, fingerprints: written, size: fstatSync(out).size };
    closeSync(out);
    return compacted;
  } catch (error) {
    try {
      closeSync(out);
    } catch {
      // Already closed.
    }
    rmSync(aside, { force: true });
    throw error;
  }
}

/** Renames the compaction's file into place. */
export function installCompaction(compacted: Compacted, path: string): void {
  try {
    renameSync(compacted.aside, path);
  } finally {
    rmSync(compacted.aside, { force: true });
  }
}

/** Count buckets of the kernel's sort of n fingerprints: the least power of two at or above n. */
function countBuckets(n: number): number {
  let b = 1;
  while (b < 32 && 2 ** b < n) b++;
  return 2 ** b;
}

/**
 * Visits every verified batch of the file from byte `from` to `size`, in order, read a piece at a
 * time into the arena's region `piece` (PIECE bytes): the visitor gets where its fingerprints lie
 * there and how many. A torn last record ends the visit.
 */
function eachBatch(arena: Arena, piece: ArrayRegion, fd: number, size: number, from: number, where: string, visit: (at: number, n: number, forget: boolean) => void): void {
  for (let at = from; at < size; ) {
    const into = piece.bytes(arena.u8, 0, Math.min(PIECE, size - at));
    const got = readAt(fd, into, at);
    if (got < into.length) throw new FormatError(`${where} ended at ${at + got} bytes while ${size} were expected`, "ERR_TRUNCATED");
    const more = at + into.length < size;
    const decoded = decodeRecords(into, where, more);
    for (const batch of decoded.batches) visit(piece.at(batch.fingerprints.byteOffset - into.byteOffset), batch.fingerprints.length / 16, batch.forget);
    if (!more) return;
    if (decoded.goodBytes === 0) throw new FormatError(`${where}: a record at byte ${at} is larger than a piece`, "ERR_FORMAT");
    at += decoded.goodBytes;
  }
}
