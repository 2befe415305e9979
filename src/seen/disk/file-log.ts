// The disk seen-set's batches in one file: a 16-byte header (magic "CSFL", version 1, the
// fingerprint scheme, an epoch that changes when the set is cleared or compacted, and the number
// of fingerprints the last compaction wrote first, 0 when none; the layout of the browser's OPFS
// file, whose last 4 bytes are 0) and then checksummed records (fingerprint-batches.ts), appended
// once per batch with one write and one fdatasync. Read and written only under the set's lock.
// Closed by a process that was given the memory for it, the file is compacted when it has grown
// enough (log-compaction.ts): rewritten in table order and renamed into place. The other
// processes notice the new file (another inode at the path) at their next batch and read it whole;
// the old one is cut to nothing, so a build older than compaction, which cannot notice, stops
// with an error instead of writing where no one reads.
import {
  closeSync,
  constants,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { FormatError } from "../../errors.js";
import { storeWriteError } from "./store-directory.js";
import { readAt, writeAt } from "../../files/file-range.js";
import { processGone } from "../../files/process-gone.js";
import type { BatchLog, LogRead, LogWrite } from "../batch-log.js";
import type { Arena } from "../../wasm/arena.js";
import { SortedPart } from "./sorted-part.js";
import { type Compacted, compactionDue, installCompaction, recordBytes, writeCompaction } from "./log-compaction.js";

/** The fingerprints a file may hold. */
type Digest = "xxh128" | "md5";

/** Bytes of the file's header: records follow it. */
export const LOG_HEADER = 16;
const HEADER = LOG_HEADER;
/** Bytes read at a time: four whole records of the largest size (1 MiB and 16 bytes), since a record cut at a piece's end is read again; a larger piece is more fresh memory to touch, each page a fault. */
const PIECE = 4 * ((1 << 20) + 16);
const MAGIC = 0x4c465343; // "CSFL"
const VERSION = 1;
/** Fingerprint schemes: 1 = XXH3-128 (as the OPFS file), 2 = MD5 (imported from an LMDB store). */
const SCHEMES: Record<number, Digest> = { 1: "xxh128", 2: "md5" };

/** A compaction written aside as of a snapshot of the file (its size `from`, the file's inode and epoch then), waiting for installAside(). */
export interface PendingCompaction {
  readonly compacted: Compacted;
  readonly from: number;
  readonly inode: { readonly dev: number; readonly ino: number };
  readonly epoch: number;
  /** Bytes of the file up to which the records after the snapshot are already copied on (a merge's thread catches up; default `from`). */
  readonly copiedTo?: number;
}

/** A background merge's view of the file (FileLog.snapshot): its first `from` bytes, verified records that stay as they are while the file keeps its inode and epoch. */
export interface MergeSnapshot {
  readonly path: string;
  readonly from: number;
  readonly inode: { readonly dev: number; readonly ino: number };
  readonly epoch: number;
  readonly durable: boolean;
}

/**
 * Writes the compaction of a snapshot's bytes aside without the lock (a background merge's
 * thread; `onRecord` sees each record's fingerprints as written): those bytes change only when
 * the file is cleared or replaced, which installMerge() finds (the epoch, the inode, the size)
 * and then discards what was written. Undefined when the path names another file already.
 */
export function writeSnapshotAside(
  snapshot: MergeSnapshot,
  arena: Arena,
  aside: string,
  onRecord?: (fingerprints: Uint8Array) => void,
  room?: number,
): Compacted | undefined {
  const fd = openSnapshot(snapshot);
  if (fd === undefined) return undefined;
  try {
    return writeAside(snapshot.path, fd, snapshot.from, snapshot.epoch, snapshot.durable, arena, aside, onRecord, room);
  } finally {
    closeSync(fd);
  }
}

/** The snapshot's file opened for reading, or undefined (closed again) when the path names another file now. */
function openSnapshot(snapshot: MergeSnapshot): number | undefined {
  const fd = openSync(snapshot.path, "r");
  const { dev, ino } = fstatSync(fd);
  if (dev === snapshot.inode.dev && ino === snapshot.inode.ino) return fd;
  closeSync(fd);
  return undefined;
}

/**
 * Copies the bytes [from, to) of the file `path` open as `fd` to `out` at `at`, a piece at a time.
 * The caller knows them to be whole records that stay as they are (read under the lock, or told
 * whole by the set's process: catchUpAside); a short read means the file was cut meanwhile.
 */
export function copyRecords(path: string, fd: number, out: number, from: number, to: number, at: number): void {
  const chunk = new Uint8Array(Math.min(Math.max(to - from, 0), 1 << 22));
  for (let pos = from; pos < to; ) {
    const piece = chunk.subarray(0, Math.min(chunk.length, to - pos));
    if (readAt(fd, piece, pos) < piece.length) throw new Error(`${path} ended at ${pos}, before ${to}`);
    writeAt(out, piece, at + (pos - from));
    pos += piece.length;
  }
}

/**
 * A merge's thread catching up: copies onto the compaction it wrote of `snapshot` the records
 * appended since, up to the latest of the bounds `safe()` gives (what the set's process had read
 * and written when it last held the lock: whole records, as the snapshot's bytes), until it gives
 * no more; flushed when durable. Returns the byte of the old file up to which they are copied, so
 * the install under the lock copies only what came after. Undefined when the path names another
 * file now (the install will discard the merge).
 */
export function catchUpAside(snapshot: MergeSnapshot, compacted: Compacted, safe: () => number): number | undefined {
  const fd = openSnapshot(snapshot);
  if (fd === undefined) return undefined;
  try {
    const out = openSync(compacted.aside, "r+");
    try {
      let copied = snapshot.from;
      for (let to = safe(); to > copied; to = safe()) {
        copyRecords(snapshot.path, fd, out, copied, to, compacted.size + (copied - snapshot.from));
        copied = to;
      }
      if (snapshot.durable) fdatasyncSync(out);
      return copied;
    } finally {
      closeSync(out);
    }
  } finally {
    closeSync(fd);
  }
}

/** The compaction of the first `size` bytes of the file `path` open as `fd` (its epoch `was`), written aside under a new epoch. */
function writeAside(
  path: string,
  fd: number,
  size: number,
  was: number,
  durable: boolean,
  arena: Arena,
  aside: string,
  onRecord?: (fingerprints: Uint8Array) => void,
  room?: number,
): Compacted {
  const { scheme } = checkHeader(path, readHeader(fd));
  const epoch = newEpoch(was);
  return writeCompaction(
    path,
    fd,
    size,
    HEADER,
    (count) => header(scheme, epoch, Math.min(count, 0xffffffff)),
    durable,
    arena,
    aside,
    onRecord,
    room,
  );
}

/** The epoch in the header of the log (or a compaction aside) at `path`: it changes at every compaction and clear. */
export function epochOf(path: string): number {
  const fd = openSync(path, "r");
  try {
    return checkHeader(path, readHeader(fd)).epoch;
  } finally {
    closeSync(fd);
  }
}

/** The name of a file written beside `path` before it is renamed into place. */
export function asideName(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
}

/**
 * Removes files written beside `path` (asideName, and a compaction's partition files named after
 * it) and never renamed: their process was killed first. A file of a process still running is
 * spared: a background merge writes it without the lock. Called under the set's lock.
 */
export function removeAsideFiles(path: string): void {
  const prefix = `${basename(path)}.`;
  for (const name of readdirSync(dirname(path))) {
    const aside = /^(\d+)\.[0-9a-f]{8}(\.[0-9a-f]{2})?\.tmp$/.exec(
      name.startsWith(prefix) ? name.slice(prefix.length) : "",
    );
    if (aside !== null && processGone(Number(aside[1]))) rmSync(join(dirname(path), name), { force: true });
  }
}

/** Creates the file with a header for `digest` (and `records`), written aside and renamed into place: a crash leaves no file or a whole one. Called under the set's lock, when the file is missing. */
export function createLogFile(path: string, digest: Digest, records?: Iterable<Uint8Array>): void {
  const aside = asideName(path);
  const fd = openSync(aside, "w", 0o644);
  try {
    writeAt(fd, header(schemeOf(digest), newEpoch(0), 0), 0);
    let at = HEADER;
    for (const record of records ?? []) {
      writeAt(fd, record, at);
      at += record.length;
    }
    fdatasyncSync(fd);
    closeSync(fd);
    renameSync(aside, path);
    syncDirectory(dirname(path));
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
    throw error;
  } finally {
    rmSync(aside, { force: true });
  }
}

/** The fingerprint scheme in the file's header, checked; a typed error naming the file when it is no seen-set file. */
export function readScheme(path: string): Digest {
  const fd = openSync(path, "r");
  try {
    return checkHeader(path, readHeader(fd)).digest;
  } finally {
    closeSync(fd);
  }
}

/** The batches of one disk seen-set in the file `path` (created by createLogFile). */
export class FileLog implements BatchLog {
  /** The file this process holds open: another one at the path is a compaction's. */
  private inode: { dev: number; ino: number } | undefined;
  readonly storage = "disk";
  readonly name: string;
  readonly atomicWrites = false;
  private fd: number | undefined;
  /** The epoch and end of the file as this process last read or wrote it (0, 0: never). */
  private epoch = 0;
  private offset = 0;
  /** Where the bytes of the last read began. */
  private readFrom = 0;
  /** The buffer pieces are read into, reused: fresh memory is costly to touch (page faults), and a read's records are used before the next read. */
  private buffer: Uint8Array | undefined;
  /** The last read was given back whole (a record or torn tail longer than a piece): the next one reads to the end. */
  private whole = false;
  /** Bytes of the file when this process first read it (or the file that replaced it): the growth it found, which its close() may compact (never its own). */
  private found = 0;

  /** `told` hears why a compaction at close failed, and where a cut tail was kept. */
  constructor(
    /** The file. */
    readonly path: string,
    private readonly durable: boolean,
    private readonly told?: (message: string) => void,
  ) {
    this.name = `the disk seen-set ${path}`;
  }

  async read(): Promise<LogRead> {
    this.followReplacement();
    const fd = this.open();
    const { epoch, sorted } = checkHeader(this.path, readHeader(fd));
    const size = fstatSync(fd).size;
    checkSortedPart(this.path, sorted, size);
    // Another epoch (cleared), or a file shorter than what was read (replaced): read it whole.
    const from = epoch === this.epoch && this.offset >= HEADER && this.offset <= size ? this.offset : HEADER;
    const reset = from !== this.offset || epoch !== this.epoch;
    const length = this.whole ? size - from : Math.min(size - from, PIECE);
    this.whole = false;
    if (this.buffer === undefined || this.buffer.length < length)
      this.buffer = new Uint8Array(Math.max(length, Math.min(PIECE, 1 << 20)));
    const records = this.buffer.subarray(0, length);
    const got = readAt(fd, records, from);
    if (got < records.length)
      throw new FormatError(`${this.path} ended at ${from + got} bytes while ${size} were expected`, "ERR_TRUNCATED");
    this.epoch = epoch;
    // The first read only: a later one whole (dedup --store past its budget reads its store again) finds this process's own writes.
    if (reset && this.found === 0) this.found = size;
    this.readFrom = from;
    this.offset = from + length;
    return { reset, records, more: from + length < size };
  }

  unread(bytes: number): void {
    if (bytes === this.offset - this.readFrom) this.whole = true;
    this.offset -= bytes;
  }

  async write(change: LogWrite): Promise<void> {
    const fd = this.open();
    let size = this.offset;
    try {
      let changed = false;
      if (change.keep !== undefined && this.readFrom + change.keep < size) {
        const cut = this.readFrom + change.keep;
        // A sorted part is written aside and renamed in, never torn: damage there is not a partial write.
        const { sorted } = checkHeader(this.path, readHeader(fd));
        if (sorted !== 0xffffffff && cut < HEADER + recordBytes(sorted))
          throw new FormatError(
            `${this.path} is damaged inside its sorted part (at byte ${cut}; the part is written whole and renamed in, so this is no partly written batch)`,
            "ERR_STORE_CORRUPT",
          );
        this.keepAside(fd, cut, size);
        size = cut;
        ftruncateSync(fd, size);
        changed = true;
      }
      if (change.clear === true) {
        this.epoch = newEpoch(this.epoch);
        ftruncateSync(fd, HEADER);
        writeAt(fd, header(checkHeader(this.path, readHeader(fd)).scheme, this.epoch, 0), 0);
        size = HEADER;
        changed = true;
      }
      if (change.append !== undefined && change.append.length > 0) {
        try {
          writeAt(fd, change.append, size);
          if (this.durable) fdatasyncSync(fd);
        } catch (error) {
          // Nothing of a failed batch may stay behind to be read as keys later.
          ftruncateSync(fd, size);
          throw error;
        }
        size += change.append.length;
      } else if (changed && this.durable) {
        fdatasyncSync(fd);
      }
      this.offset = size;
    } catch (error) {
      // What this process knows of the file is unsure now: the next read takes it whole.
      this.epoch = 0;
      this.offset = 0;
      throw storeWriteError(this.path, dirname(this.path), error);
    }
  }

  /**
   * The bytes a cut takes off the end, [from, to), kept in `PATH.cut-N` (flushed) before they go:
   * a damaged last batch may be acknowledged keys, which a person can then look at or restore.
   */
  private keepAside(fd: number, from: number, to: number): void {
    const bytes = new Uint8Array(to - from);
    readAt(fd, bytes, from);
    let n = 1;
    while (statSync(`${this.path}.cut-${n}`, { throwIfNoEntry: false }) !== undefined) n++;
    const aside = `${this.path}.cut-${n}`;
    const out = openSync(aside, "wx", 0o644);
    try {
      writeAt(out, bytes, 0);
      if (this.durable) fdatasyncSync(out);
    } finally {
      closeSync(out);
    }
    this.told?.(`the ${bytes.length} bytes cut off the end of ${this.path} (from byte ${from}) were kept in ${aside}`);
  }

  /**
   * The file's sorted part (its last compaction's output), to look keys up in without reading it
   * whole, with the next read() set to begin just after it; undefined, and nothing changed, when
   * the file has none. Called under the set's lock, as read() is.
   */
  sortedPart(): SortedPart | undefined {
    this.followReplacement();
    const fd = this.open();
    const { epoch, sorted } = checkHeader(this.path, readHeader(fd));
    // A count the header could not hold is not the count.
    if (sorted === 0 || sorted === 0xffffffff) return undefined;
    const size = fstatSync(fd).size;
    checkSortedPart(this.path, sorted, size);
    // A descriptor of its own: this one is closed when another process renames a compaction in.
    const own = openSync(this.path, "r");
    let part: SortedPart;
    try {
      const { dev, ino } = fstatSync(own);
      if (dev !== this.inode?.dev || ino !== this.inode?.ino)
        throw new FormatError(`${this.path} was replaced while its lock was held`, "ERR_STORE_CORRUPT");
      part = SortedPart.read(own, this.path, HEADER, sorted, size);
    } catch (error) {
      closeSync(own);
      throw error;
    }
    this.epoch = epoch;
    this.offset = part.end;
    this.readFrom = part.end;
    this.whole = false;
    if (this.found === 0) this.found = size;
    return part;
  }

  /** The file's epoch as this process last read it (its sorted part's, after sortedPart()). */
  get epochRead(): number {
    return this.epoch;
  }

  /** Bytes of the file as this process last read or wrote it: where the next append goes. */
  get end(): number {
    return this.offset;
  }

  /**
   * Appends records without a flush, after a read (dedup --store resolving what waited past its
   * memory budget, a batch too large for memory): flush() makes them durable, cutTo() takes them
   * back. On a failed write the piece is cut off and the error is the store's.
   */
  appendUnsynced(records: Uint8Array): void {
    const fd = this.open();
    try {
      writeAt(fd, records, this.offset);
    } catch (error) {
      try {
        ftruncateSync(fd, this.offset);
      } catch {
        // The file is unsure: abort() makes the next read take it whole.
      }
      throw storeWriteError(this.path, dirname(this.path), error);
    }
    this.offset += records.length;
  }

  /** Flushes what was appended (fdatasync; nothing when not durable). */
  flush(): void {
    if (!this.durable) return;
    try {
      fdatasyncSync(this.open());
    } catch (error) {
      throw storeWriteError(this.path, dirname(this.path), error);
    }
  }

  /** flush() on Node's thread pool, so the next batch can be worked meanwhile; the error is the store's. */
  flushAsync(): Promise<void> {
    if (!this.durable) return Promise.resolve();
    const fd = this.open();
    return new Promise((resolve, reject) =>
      fdatasync(fd, (error) => (error ? reject(storeWriteError(this.path, dirname(this.path), error)) : resolve())),
    );
  }

  /** Cuts the file back to `size` bytes (appends that were never acknowledged), durably. */
  cutTo(size: number): void {
    const fd = this.open();
    ftruncateSync(fd, size);
    if (this.durable) fdatasyncSync(fd);
    this.offset = size;
  }

  async abort(): Promise<void> {
    this.epoch = 0;
    this.offset = 0;
  }

  async close(): Promise<void> {
    return this.closeWith();
  }

  /**
   * @internal Compacts the file in `spare` (memory its caller is done with) when it has grown
   * enough, under the set's lock, then closes it. A compaction that fails (a full disk) leaves the
   * file as it was, whole and read the same way: it is told, not thrown, since every batch was
   * already acknowledged.
   */
  async closeWith(spare?: Arena): Promise<void> {
    try {
      if (spare !== undefined) this.compactIfDue(spare);
    } catch (error) {
      this.told?.(`compacting ${this.path} failed, and it was left as it was: ${(error as Error).message}`);
    } finally {
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
    }
  }

  /**
   * Rewrites the file when what came after its last compaction, as this process found the file
   * when it read it whole, outgrew that (log-compaction.ts): so the run that writes the bulk of a
   * store is not slowed by its compaction, the next one is. The new file is flushed and renamed
   * into place, and the name made durable, before the old file is cut to nothing. Called under
   * the set's lock.
   */
  private compactIfDue(arena: Arena): void {
    this.followReplacement();
    const fd = this.open();
    const size = fstatSync(fd).size;
    const { sorted } = checkHeader(this.path, readHeader(fd));
    if (compactionDue(Math.min(this.found, size), HEADER + recordBytes(sorted), HEADER)) this.compact(arena);
  }

  /** Fingerprints in the file, and those after its sorted part, as it is now (about: a forgotten one counts, a torn tail too). Called under the set's lock. */
  keyCounts(): { stored: number; unsorted: number } {
    this.followReplacement();
    const fd = this.open();
    const { sorted } = checkHeader(this.path, readHeader(fd));
    const size = fstatSync(fd).size;
    return {
      stored: Math.max(0, Math.floor((size - HEADER) / 16)),
      unsorted: Math.max(0, Math.floor((size - HEADER - recordBytes(sorted)) / 16)),
    };
  }

  /** Whether the file was cleared or another put in its place since this process last read it. Called under the set's lock. */
  stale(): boolean {
    if (this.fd === undefined || this.inode === undefined) return true;
    const now = statSync(this.path, { throwIfNoEntry: false });
    if (now === undefined || now.ino !== this.inode.ino || now.dev !== this.inode.dev) return true;
    return checkHeader(this.path, readHeader(this.fd)).epoch !== this.epoch;
  }

  /**
   * Rewrites the file in `arena` (memory its caller is done with, or a new instance): flushed and
   * renamed into place, and the name made durable, before the old file is cut to nothing. What
   * this process read of it is forgotten: the next read takes the new file whole. Called under the
   * set's lock.
   */
  compact(arena: Arena): void {
    const pending = this.compactAside(arena);
    if (!this.installAside(pending, false)) throw new Error(`${this.path} was replaced while it was compacted`);
  }

  /**
   * Writes the compaction of the file as it is now (its size the snapshot) aside, without
   * installing it: records appended later are copied onto it by installAside(), so a merge can
   * write the bulk while batches go on. Called under the set's lock.
   */
  compactAside(arena: Arena): PendingCompaction {
    this.followReplacement();
    const fd = this.open();
    const size = fstatSync(fd).size;
    const { epoch: was } = checkHeader(this.path, readHeader(fd));
    try {
      const compacted = writeAside(this.path, fd, size, this.epoch, this.durable, arena, asideName(this.path));
      return { compacted, from: size, inode: this.inode!, epoch: was };
    } catch (error) {
      throw storeWriteError(this.path, dirname(this.path), error);
    }
  }

  /**
   * What this process has read and written of the file, every byte a verified record, for a
   * background merge to compact without the lock (writeSnapshotAside). Called under the set's
   * lock, once the file was read and found the same (stale() false).
   */
  snapshot(): MergeSnapshot {
    const fd = this.open();
    if (this.inode === undefined || this.epoch === 0 || this.offset < HEADER)
      throw new Error(`${this.path} was not read before its merge`);
    checkHeader(this.path, readHeader(fd));
    return { path: this.path, from: this.offset, inode: this.inode, epoch: this.epoch, durable: this.durable };
  }

  /**
   * Installs what a background merge wrote of `snapshot` (installAside: the records appended since
   * and not yet copied by its thread, from `copiedTo` on, are copied on) and takes the new file as read as far as the old one was: the records of the
   * copied tail this process had read are not read again (its table holds them), the rest are.
   * Returns the new file's sorted part; undefined, the merge discarded and nothing changed, when
   * the file was replaced or cleared since the snapshot. Called under the set's lock.
   */
  installMerge(snapshot: MergeSnapshot, compacted: Compacted, copiedTo = snapshot.from): SortedPart | undefined {
    const read = this.offset;
    const pending = { compacted, from: snapshot.from, inode: snapshot.inode, epoch: snapshot.epoch, copiedTo };
    if (read < snapshot.from || this.fd === undefined) {
      rmSync(compacted.aside, { force: true });
      return undefined;
    }
    if (!this.installAside(pending)) return undefined;
    const part = this.sortedPart();
    if (part === undefined || part.end !== compacted.size) {
      part?.close();
      throw new FormatError(`${this.path}: the merge installed is not the one written`, "ERR_STORE_CORRUPT");
    }
    this.offset = part.end + (read - snapshot.from);
    this.readFrom = this.offset;
    return part;
  }

  /**
   * Installs a compaction compactAside() wrote: the records appended since its snapshot are
   * copied onto it and flushed, then it is renamed into place and the name made durable, and the
   * old file cut to nothing. When another process replaced the file meanwhile, the compaction is
   * stale: it is removed and false returned, the file left as it is. A failure (a full disk)
   * removes it and leaves the file as it was. Called under the set's lock.
   */
  installAside(pending: PendingCompaction, check = true): boolean {
    const { compacted, from } = pending;
    const copied = pending.copiedTo ?? from;
    // compact() installs at once: no one can have replaced the file in between (the lock is held).
    if (check && this.replacedSince(pending)) {
      rmSync(compacted.aside, { force: true });
      return false;
    }
    const fd = this.open();
    try {
      const size = fstatSync(fd).size;
      if (size < copied) throw new Error(`${this.path} is ${size} bytes, shorter than the ${copied} its merge copied`);
      if (size > copied) {
        // "r+": an aside another process's open removed (removeAsides) must fail here, not become a headerless file.
        const out = openSync(compacted.aside, "r+");
        try {
          copyRecords(this.path, fd, out, copied, size, compacted.size + (copied - from));
          if (this.durable) fdatasyncSync(out);
        } finally {
          closeSync(out);
        }
      }
      installCompaction(compacted, this.path);
      if (this.durable) syncDirectory(dirname(this.path));
      ftruncateSync(fd, 0);
      return true;
    } catch (error) {
      rmSync(compacted.aside, { force: true });
      throw storeWriteError(this.path, dirname(this.path), error);
    }
  }

  /** Whether the path names another file than the snapshot's, or the file was cleared (its epoch changed) or cut below it since. */
  private replacedSince(pending: PendingCompaction): boolean {
    const now = statSync(this.path, { throwIfNoEntry: false });
    if (now === undefined || now.ino !== pending.inode.ino || now.dev !== pending.inode.dev) return true;
    // Cut below the snapshot: what the compaction holds is not all still in the file.
    if (now.size < pending.from) return true;
    return checkHeader(this.path, readHeader(this.open())).epoch !== pending.epoch;
  }

  /** When the path names another file than the one held (another process compacted it), the held one is let go: the next read takes the new one whole. */
  private followReplacement(): void {
    if (this.fd === undefined || this.inode === undefined) return;
    const now = statSync(this.path, { throwIfNoEntry: false });
    if (now !== undefined && now.ino === this.inode.ino && now.dev === this.inode.dev) return;
    closeSync(this.fd);
    this.fd = undefined;
    this.epoch = 0;
    this.offset = 0;
    this.whole = false;
    this.found = 0;
  }

  private open(): number {
    if (this.fd === undefined) {
      this.fd = openSync(this.path, constants.O_RDWR);
      const { dev, ino } = fstatSync(this.fd);
      this.inode = { dev, ino };
    }
    return this.fd;
  }
}

function schemeOf(digest: Digest): number {
  return Number(Object.keys(SCHEMES).find((k) => SCHEMES[Number(k)] === digest));
}

function header(scheme: number, epoch: number, sorted: number): Uint8Array {
  const head = new Uint8Array(HEADER);
  const view = new DataView(head.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, VERSION, true);
  view.setUint16(6, scheme, true);
  view.setUint32(8, epoch, true);
  view.setUint32(12, sorted, true);
  return head;
}

function readHeader(fd: number): Uint8Array {
  const head = new Uint8Array(HEADER);
  return head.subarray(0, readAt(fd, head, 0));
}

function checkHeader(
  path: string,
  head: Uint8Array,
): { scheme: number; digest: Digest; epoch: number; sorted: number } {
  if (head.length < HEADER)
    throw new FormatError(
      `${path} is cut short: ${head.length} bytes, less than its 16-byte header; move it away or use another --store directory`,
      "ERR_STORE_CORRUPT",
    );
  const view = new DataView(head.buffer, head.byteOffset, HEADER);
  if (view.getUint32(0, true) !== MAGIC)
    throw new FormatError(
      `${path} is not a crawlsieve seen-set file (bad magic); move it away or use another --store directory`,
      "ERR_STORE_CORRUPT",
    );
  const version = view.getUint16(4, true);
  if (version !== VERSION)
    throw new FormatError(
      `${path} has format version ${version}; this build reads ${VERSION}`,
      "ERR_UNSUPPORTED_VERSION",
    );
  const scheme = view.getUint16(6, true);
  const digest = SCHEMES[scheme];
  if (digest === undefined)
    throw new FormatError(
      `${path} uses fingerprint scheme ${scheme}; this build knows 1 (XXH3-128) and 2 (MD5)`,
      "ERR_STORE_CORRUPT",
    );
  return { scheme, digest, epoch: view.getUint32(8, true), sorted: view.getUint32(12, true) };
}

/** A file shorter than the sorted part its header declares was cut (a sorted part is never torn): corrupt on every path. */
function checkSortedPart(path: string, sorted: number, size: number): void {
  if (sorted === 0 || sorted === 0xffffffff) return;
  const end = HEADER + recordBytes(sorted);
  if (size < end)
    throw new FormatError(
      `${path} is ${size} bytes, shorter than the sorted part of ${sorted} fingerprints its header declares (${end} bytes): it was cut; restore it or move it away`,
      "ERR_STORE_CORRUPT",
    );
}

function newEpoch(old: number): number {
  let next = old;
  while (next === old || next === 0) next = randomBytes(4).readUInt32LE(0);
  return next;
}

/** Makes a new file's name durable: its directory entry is flushed too. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
