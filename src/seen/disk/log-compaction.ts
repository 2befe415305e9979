// Compaction of a disk seen-set's file (file-log.ts): rewritten, under the set's lock, with each
// live fingerprint once, in the bucket tables' order (partition, then low word:
// assembly/fingerprint-compact.ts), so the next load fills its table bucket after bucket instead
// of at random, a key is found by reading one record (sorted-part.ts), and forgotten fingerprints
// take no room. A compaction works the partitions in groups that fit its memory, each group a pass
// over the file, or, for a set past its memory budget, from partition files written in one pass;
// the new file is written aside, flushed and renamed into place, so a crash leaves the old file or
// the new one, each whole. The partition files (every fingerprint of the file) stay until the last
// group is read while the new file grows beside them and the old one: 1.6-2x the store's size in
// free disk, where the passes need only the new file's.
import { closeSync, fdatasyncSync, fstatSync, openSync, renameSync, rmSync } from "node:fs";
import { FormatError } from "../../errors.js";
import { readAt, writeAt } from "../../files/file-range.js";
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

/** Most passes over the file a compaction makes before it writes partition files instead (tests set 0: CRAWLSIEVE_TEST_COMPACT_PASSES). */
const passesInMemory = (): number => Number(process.env.CRAWLSIEVE_TEST_COMPACT_PASSES ?? 4);

/** Bytes a pass of a compaction in `arena` may use: the memory of the table its caller is done with, less a piece to read into (at least 32 MiB, at most 1 GiB). */
export function compactionRoom(arena: Arena): number {
  return Math.min(Math.max(arena.k.memory.buffer.byteLength - arena.base - PIECE, MIN_PASS_BYTES), MAX_PASS_BYTES);
}

/**
 * True when a file found at `found` bytes, whose first `sortedBytes` (header included) are the
 * last compaction's output, should be compacted: what came after outgrew that when it was found,
 * and by 64 MiB (doubling keeps the rewriting to a few times each fingerprint, however the set
 * grows).
 */
export function compactionDue(found: number, sortedBytes: number, header: number): boolean {
  const tail = found - sortedBytes;
  return tail >= compactFromBytes() && tail > 0 && tail >= sortedBytes - header;
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

/** The partitions [from, to) of a group, their entries (fpScatter's, in log order) laid out one partition after another in `tail`, and `scratch` for the largest one's sort. */
interface Group {
  readonly from: number;
  readonly to: number;
  readonly counts: Uint32Array;
  readonly tail: ArrayRegion;
  readonly scratch: number;
}

/**
 * Writes the compaction of the file `path` open as `fd` (`size` bytes; its verified records from
 * byte `header` on) to the new file `aside`, starting with `head(fingerprints)`, flushed when
 * `durable`; in the memory of `arena` (an instance its owner is done with: its contents are
 * overwritten), grown only when one partition needs more than it has. The partitions are taken in
 * groups that fit that memory: each group a pass over the file when four passes do it, else
 * from partition files written beside `aside` in one pass (a set past its memory budget), read
 * back a group at a time. A torn last record is left out: it was never acknowledged. `onRecord`
 * sees each record's fingerprints as they are written; `room` bounds the memory of a group
 * (a background merge gives less than the table left). The caller renames the file into place.
 */
export function writeCompaction(
  path: string,
  fd: number,
  size: number,
  header: number,
  head: (fingerprints: number) => Uint8Array,
  durable: boolean,
  arena: Arena,
  aside: string,
  onRecord?: (fingerprints: Uint8Array) => void,
  room = compactionRoom(arena),
): Compacted {
  const k = arena.k;
  const budget = room;
  const out = openSync(aside, "w", 0o644);
  try {
    // The header's count is known at the end: its place is kept, then written.
    const records = new SortedRecords(out, head(0).length, onRecord);
    const source = { arena, fd, size, header, where: path };
    const groups =
      ((size - header) / 16) * ENTRY_BYTES <= passesInMemory() * budget
        ? passGroups(source, budget)
        : fileGroups(source, budget, aside);
    for (const group of groups) {
      for (let p = group.from, start = 0; p < group.to; start += group.counts[p - group.from], p++) {
        const count = group.counts[p - group.from];
        // The output takes the tail's place: the kernel sorts the tail into the scratch first.
        const n = k.fpCompactPartition(p, LOG_PARTS, group.tail.at(start), count, group.scratch, group.tail.at(start));
        records.add(group.tail.bytes(arena.u8, start, n));
      }
    }
    const written = records.end();
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

/** Where a compaction reads its entries: the file open as `fd`, verified records from byte `header` to `size`. */
interface Source {
  readonly arena: Arena;
  readonly fd: number;
  readonly size: number;
  readonly header: number;
  readonly where: string;
}

/** The records of the compacted file, written full (RECORD_FINGERPRINTS each, the last one short) from byte `at` on, so each lies at a fixed place (sorted-part.ts). */
class SortedRecords {
  private readonly pending = new Uint8Array(16 * RECORD_FINGERPRINTS);
  private readonly scratch = new Uint8Array(16 * RECORD_FINGERPRINTS + 16);
  private held = 0;
  private written = 0;

  constructor(
    private readonly fd: number,
    private at: number,
    /** Sees each record's fingerprints as it is written (a background merge builds the part's filter and index from them). */
    private readonly onRecord?: (fingerprints: Uint8Array) => void,
  ) {}

  /** Adds packed fingerprints, in order. */
  add(fingerprints: Uint8Array): void {
    for (let i = 0; i < fingerprints.length; ) {
      const take = Math.min(fingerprints.length - i, this.pending.length - this.held);
      this.pending.set(fingerprints.subarray(i, i + take), this.held);
      this.held += take;
      i += take;
      if (this.held === this.pending.length) this.flush();
    }
  }

  /** Writes what is held; returns the fingerprints written in all. */
  end(): number {
    this.flush();
    return this.written;
  }

  private flush(): void {
    if (this.held === 0) return;
    const fingerprints = this.pending.subarray(0, this.held);
    const records = encodeRecords(fingerprints, false, this.scratch);
    writeAt(this.fd, records, this.at);
    this.onRecord?.(fingerprints);
    this.at += records.length;
    this.written += this.held / 16;
    this.held = 0;
  }
}

/** Groups of partitions that fit `budget` (at least one partition, whatever it needs), given each partition's count. */
function* partitionGroups(
  counts: Uint32Array,
  budget: number,
): Generator<{ from: number; to: number; entries: number; largest: number }> {
  for (let from = 0; from < PARTS; ) {
    let to = from + 1;
    let entries = counts[from];
    while (to < PARTS && (entries + counts[to]) * ENTRY_BYTES <= budget) entries += counts[to++];
    yield { from, to, entries, largest: Math.max(...counts.subarray(from, to)) };
    from = to;
  }
}

/** Bytes of fpCompactPartition's scratch for a partition of `n` entries. */
function scratchBytes(n: number): number {
  return 16 * n + 4 * countBuckets(n);
}

/** Groups read by a pass over the file each: a pass counts the partitions, then each group's pass copies its entries out. */
function* passGroups(source: Source, budget: number): Generator<Group> {
  const { arena } = source;
  const k = arena.k;
  const counts = new Uint32Array(PARTS);
  {
    const r = arena.place({ counts: array(4, PARTS), piece: array(1, PIECE) });
    // The instance's memory holds what its last owner left there.
    r.counts.fill(arena.u8);
    eachPiece(source, r.piece, (batches) => {
      for (const { at, n } of batches) k.fpPartitionCounts(at, n, LOG_PARTS, r.counts.ptr);
    });
    counts.set(r.counts.view(arena.u8, Uint32Array));
  }
  for (const group of partitionGroups(counts, budget)) {
    const r = arena.place({
      cursors: array(4, PARTS),
      piece: array(1, PIECE),
      tail: array(16, group.entries),
      scratch: scratchBytes(group.largest),
    });
    const cursors = r.cursors.view(arena.u8, Uint32Array);
    for (let p = group.from, sum = 0; p < group.to; p++) {
      cursors[p - group.from] = sum;
      sum += counts[p];
    }
    eachPiece(source, r.piece, (batches) => {
      for (const { at, n, forget } of batches)
        k.fpScatter(at, n, LOG_PARTS, group.from, group.to, r.cursors.ptr, r.tail.ptr, forget ? 1 : 0);
    });
    yield {
      from: group.from,
      to: group.to,
      counts: counts.subarray(group.from, group.to),
      tail: r.tail,
      scratch: r.scratch,
    };
  }
}

/**
 * Groups read from partition files: one pass over the file copies each piece's entries (flagged
 * as fpScatter flags them, in log order) to a file of their partition beside `aside`, and each
 * group's files are read back whole. The files are removed at the end, or when anything fails (a
 * killed process leaves them to removeAsideFiles).
 */
function* fileGroups(source: Source, budget: number, aside: string): Generator<Group> {
  const { arena } = source;
  const k = arena.k;
  const paths = partitionPaths(aside);
  const fds: number[] = [];
  try {
    for (const path of paths) fds.push(openSync(path, "w+", 0o600));
    const counts = new Uint32Array(PARTS);
    {
      const r = arena.place({
        counts: array(4, PARTS),
        cursors: array(4, PARTS),
        piece: array(1, PIECE),
        entries: array(16, PIECE / 16),
      });
      eachPiece(source, r.piece, (batches) => {
        const u8 = arena.u8;
        r.counts.fill(u8);
        for (const { at, n } of batches) k.fpPartitionCounts(at, n, LOG_PARTS, r.counts.ptr);
        const piece = r.counts.view(u8, Uint32Array);
        const cursors = r.cursors.view(u8, Uint32Array);
        for (let p = 0, sum = 0; p < PARTS; sum += piece[p], p++) cursors[p] = sum;
        // Every batch of the piece in one scatter a batch: the entries of one partition stay in log order.
        for (const { at, n, forget } of batches)
          k.fpScatter(at, n, LOG_PARTS, 0, PARTS, r.cursors.ptr, r.entries.ptr, forget ? 1 : 0);
        for (let p = 0, start = 0; p < PARTS; start += piece[p], p++) {
          if (piece[p] === 0) continue;
          writeAt(fds[p], r.entries.bytes(u8, start, piece[p]), 16 * counts[p]);
          counts[p] += piece[p];
        }
      });
    }
    for (const group of partitionGroups(counts, budget)) {
      const r = arena.place({ tail: array(16, group.entries), scratch: scratchBytes(group.largest) });
      for (let p = group.from, start = 0; p < group.to; start += counts[p], p++) {
        const into = r.tail.bytes(arena.u8, start, counts[p]);
        if (readAt(fds[p], into, 0) < into.length)
          throw new FormatError(`${paths[p]} was cut short while ${source.where} was compacted`, "ERR_TRUNCATED");
      }
      yield {
        from: group.from,
        to: group.to,
        counts: counts.subarray(group.from, group.to),
        tail: r.tail,
        scratch: r.scratch,
      };
    }
  } finally {
    for (const fd of fds) closeSync(fd);
    for (const path of paths) rmSync(path, { force: true });
  }
}

/** The partition files of a compaction written to `aside` (fileGroups). */
function partitionPaths(aside: string): string[] {
  return Array.from(
    { length: PARTS },
    (_, p) => `${aside.slice(0, -".tmp".length)}.${p.toString(16).padStart(2, "0")}.tmp`,
  );
}

/** Removes what a compaction to `aside` wrote, its partition files too (a background merge stopped before it ended). */
export function removeCompactionFiles(aside: string): void {
  for (const path of [aside, ...partitionPaths(aside)]) rmSync(path, { force: true });
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

/** A batch of a piece read into memory: where its fingerprints lie, how many, and whether it forgets them. */
interface PieceBatch {
  readonly at: number;
  readonly n: number;
  readonly forget: boolean;
}

/**
 * Visits the verified batches of the source's file, in order, a piece at a time read into the
 * arena's region `piece` (PIECE bytes). A torn last record ends the visit.
 */
function eachPiece(source: Source, piece: ArrayRegion, visit: (batches: PieceBatch[]) => void): void {
  const { arena, fd, size, header, where } = source;
  for (let at = header; at < size; ) {
    const into = piece.bytes(arena.u8, 0, Math.min(PIECE, size - at));
    const got = readAt(fd, into, at);
    if (got < into.length)
      throw new FormatError(`${where} ended at ${at + got} bytes while ${size} were expected`, "ERR_TRUNCATED");
    const more = at + into.length < size;
    const decoded = decodeRecords(into, where, more);
    if (decoded.batches.some((batch) => batch.kind === "timed" || batch.kind === "tombstones"))
      throw new FormatError(`${where} holds the records of a windowed store`, "ERR_FORMAT");
    visit(
      decoded.batches.map((batch) => ({
        at: piece.at(batch.fingerprints.byteOffset - into.byteOffset),
        n: batch.fingerprints.length / 16,
        forget: batch.forget,
      })),
    );
    if (!more) return;
    if (decoded.goodBytes === 0)
      throw new FormatError(`${where}: a record at byte ${at} is larger than a piece`, "ERR_FORMAT");
    at += decoded.goodBytes;
  }
}
