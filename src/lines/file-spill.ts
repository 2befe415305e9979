// Line dedup past its memory budget, on disk (Node only). Design: once the exact table is full it
// is kept as it is, so a line found there is a repeat; every line not found is appended to one log
// file in input order (its bytes, "\n"-terminated) and gets a spill index (its rank in the log),
// and a record (128-bit fingerprint, spill index) goes to one of 256 partition files chosen by
// fingerprint bits. At the end each partition is read back in append order into emptied tables
// (split-path.ts): the first record of a fingerprint is its first occurrence, so its index is kept
// (an ascending list a partition). Output merges the 256 kept lists with the log by spill index: a window of
// indexes at a time becomes a bitmap, and the log is read once, in order, through it. Memory
// stays the table plus fixed buffers (partition write buffers, one read buffer each for the kept
// lists, a bitmap window) whatever the input's size; disk holds about the spilled bytes plus 24
// bytes a spilled line. Files live in a folder made under `dir` and removed by close(), and by
// removeTempFolders() (temp-folders.ts; the command line calls it at exit and on SIGINT/SIGTERM).
import { closeSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAt } from "../files/file-range.js";
import { makeTempFolder, removeTempFolder } from "../files/temp-folders.js";
import { CrawlsieveError } from "../errors.js";
import type { LineSpill, LineSpillFactory } from "./line-spill.js";

const PARTITIONS = 256;
/** Write buffer of a partition file: a 4096th of the budget (a write call per 170 to 11,000 records), within these bounds. */
const MIN_PART_BUFFER = 4 << 10;
const MAX_PART_BUFFER = 256 << 10;
const LOG_BUFFER = 256 << 10;
/** Read buffer of a kept list at the end (one per partition, and one for its fingerprints when it has them). */
const READ_BUFFER = 8 << 10;
/** Spill indexes a bitmap window covers: 2^20 bits, 128 KiB (tests set fewer, a multiple of 8: CRAWLSIEVE_TEST_SPILL_WINDOW). */
const WINDOW = Number(process.env.CRAWLSIEVE_TEST_SPILL_WINDOW ?? 1 << 20);
const NL = 0x0a;

/** A buffered append-only file. */
class Appender {
  private readonly buffer: Buffer;
  private used = 0;
  private fd: number;

  constructor(
    readonly path: string,
    size: number,
    private readonly fail: (error: unknown) => never,
  ) {
    this.buffer = Buffer.allocUnsafe(size);
    try {
      this.fd = openSync(path, "w");
    } catch (error) {
      fail(error);
    }
  }

  write(bytes: Uint8Array): void {
    if (this.used + bytes.length > this.buffer.length) {
      this.flush();
      if (bytes.length > this.buffer.length) return this.raw(bytes);
    }
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  flush(): void {
    if (this.used > 0) this.raw(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  close(): void {
    if (this.fd < 0) return;
    this.flush();
    closeSync(this.fd);
    this.fd = -1;
  }

  private raw(bytes: Uint8Array): void {
    try {
      writeAt(this.fd, bytes);
    } catch (error) {
      this.fail(error);
    }
  }
}

/** Reads a file front to back in chunks. */
function* chunks(path: string, size: number, fail: (error: unknown) => never): Generator<Uint8Array> {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    fail(error);
  }
  const buffer = Buffer.allocUnsafe(size);
  try {
    for (;;) {
      let n = 0;
      while (n < size) {
        const got = readSync(fd, buffer, n, size - n, null);
        if (got === 0) break;
        n += got;
      }
      if (n === 0) return;
      yield buffer.subarray(0, n);
      if (n < size) return;
    }
  } finally {
    closeSync(fd);
  }
}

/** Spilled lines in files under a temporary folder of `dir`. */
export class FileSpill implements LineSpill {
  readonly partitions = PARTITIONS;
  readonly bufferBytes: number;
  private readonly partBuffer: number;
  private folder: string | undefined;
  private log: Appender | undefined;
  private parts: Appender[] = [];
  private readonly kept: string[] = [];
  private readonly keptFingerprints: (string | undefined)[] = [];
  /** The kept list being written, and its fingerprints' (when keep() is given them). */
  private keeping: Appender | undefined;
  private keepingFingerprints: Appender | undefined;
  private total = 0;
  private readonly counts = new Float64Array(PARTITIONS);

  constructor(
    private readonly dir: string,
    private readonly recordBytes: number,
    memory = Infinity,
  ) {
    this.partBuffer = Math.max(MIN_PART_BUFFER, Math.min(MAX_PART_BUFFER, 2 ** Math.floor(Math.log2(memory / 4096))));
    // Writing (partition buffers, the log's) and reading back (kept lists, log, bitmap, output) never overlap.
    this.bufferBytes = Math.max(
      PARTITIONS * this.partBuffer + LOG_BUFFER,
      2 * PARTITIONS * READ_BUFFER + 2 * LOG_BUFFER + 2 * (WINDOW / 8),
    );
  }

  append(lines: Uint8Array, records: Uint8Array, starts: Uint32Array): void {
    const log = this.log ?? this.open();
    log.write(lines);
    const size = this.recordBytes;
    for (let p = 0; p < PARTITIONS; p++) {
      if (starts[p + 1] === starts[p]) continue;
      this.parts[p].write(records.subarray(starts[p] * size, starts[p + 1] * size));
      this.counts[p] += starts[p + 1] - starts[p];
    }
    this.total += starts[PARTITIONS];
  }

  count(p: number): number {
    return this.counts[p];
  }

  *records(p: number, max: number, again = false): Iterable<Uint8Array> {
    if (this.folder === undefined) return;
    const part = this.parts[p];
    part.close();
    yield* chunks(part.path, max * this.recordBytes, this.fail);
    // Read once: its disk space is given back before the next partition's kept list grows.
    if (!again) rmSync(part.path, { force: true });
  }

  keep(p: number, indexes: Float64Array, restart: boolean, fingerprints?: Uint8Array): void {
    if (this.folder === undefined) return;
    if (restart || this.keeping?.path !== join(this.folder, `k${p}`)) {
      this.keeping?.close();
      this.keepingFingerprints?.close();
      this.keeping = new Appender(join(this.folder, `k${p}`), MIN_PART_BUFFER, this.fail);
      this.keepingFingerprints =
        fingerprints === undefined ? undefined : new Appender(join(this.folder, `f${p}`), MIN_PART_BUFFER, this.fail);
      this.kept[p] = this.keeping.path;
      this.keptFingerprints[p] = this.keepingFingerprints?.path;
    }
    this.keeping.write(new Uint8Array(indexes.buffer, indexes.byteOffset, indexes.byteLength));
    if (fingerprints !== undefined) this.keepingFingerprints?.write(fingerprints);
  }

  *output(before?: (fingerprints: readonly Uint8Array[]) => void): Iterable<Uint8Array> {
    if (this.folder === undefined || this.log === undefined) return;
    this.log.close();
    this.keeping?.close();
    this.keepingFingerprints?.close();
    // Every partition, those that kept nothing or had no records too (holes of `kept`, which map() would keep as holes).
    const readers = Array.from({ length: PARTITIONS }, (_, p) =>
      indexReader(this.kept[p], before === undefined ? undefined : this.keptFingerprints[p], this.fail),
    );
    const bits = new Uint8Array(WINDOW / 8);
    // A new output buffer after each one handed out: a chunk stays valid for as long as it is held.
    let out = new Uint8Array(LOG_BUFFER);
    let used = 0;
    let index = 0;
    let windowEnd = 0;
    const fill = () => {
      bits.fill(0);
      const from = windowEnd;
      windowEnd += WINDOW;
      const fingerprints: Uint8Array[] = [];
      for (const reader of readers) reader.mark(bits, from, windowEnd, fingerprints);
      // In pieces: a window's fingerprints (up to 16 MiB) are not copied again into one array.
      if (before !== undefined && fingerprints.length > 0) before(fingerprints);
    };
    fill();
    const kept = (i: number): boolean => {
      if (i === windowEnd) fill();
      const w = i - (windowEnd - WINDOW);
      return ((bits[w >>> 3] >>> (w & 7)) & 1) === 1;
    };
    // Whether the line being read is kept is known at its first byte, so a kept line is copied
    // out piece by piece as it is read: a line of any length costs no more than the buffers, and
    // each byte is looked at once (a line gathered whole across reads would be copied again on
    // every read).
    let keep = kept(0);
    for (const chunk of chunks(join(this.folder, "log"), LOG_BUFFER, this.fail)) {
      for (let start = 0; start < chunk.length; ) {
        const nl = chunk.indexOf(NL, start);
        const end = nl === -1 ? chunk.length : nl + 1;
        if (keep) {
          // A piece is at most a read, so it fits an empty output buffer.
          if (used + end - start > out.length) {
            if (used > 0) yield out.subarray(0, used);
            out = new Uint8Array(LOG_BUFFER);
            used = 0;
          }
          out.set(chunk.subarray(start, end), used);
          used += end - start;
        }
        if (nl === -1) break;
        index++;
        keep = kept(index);
        start = end;
      }
    }
    if (used > 0) yield out.subarray(0, used);
  }

  close(): void {
    if (this.folder === undefined) return;
    for (const part of this.parts) {
      try {
        part.close();
      } catch {
        // a full disk: the folder goes anyway
      }
    }
    for (const file of [this.log, this.keeping, this.keepingFingerprints]) {
      try {
        file?.close();
      } catch {
        // a full disk: the folder goes anyway
      }
    }
    removeTempFolder(this.folder);
  }

  /** Lines spilled so far. */
  get lines(): number {
    return this.total;
  }

  private open(): Appender {
    let folder: string;
    try {
      folder = makeTempFolder(this.dir, "crawlsieve-spill-");
    } catch (error) {
      return this.fail(error);
    }
    this.folder = folder;
    this.log = new Appender(join(folder, "log"), LOG_BUFFER, this.fail);
    for (let p = 0; p < PARTITIONS; p++)
      this.parts.push(new Appender(join(folder, `p${p}`), this.partBuffer, this.fail));
    return this.log;
  }

  /** A file error as one line for the command line: where, and the system's reason. */
  private readonly fail = (error: unknown): never => {
    throw new CrawlsieveError(
      "ERR_SPILL",
      `cannot spill lines to disk in ${this.dir} (${diskReason(error)}); the memory budget (--memory) was reached, so give a writable --tmp with room, or more --memory`,
    );
  };
}

/** A file error of a temporary folder in words, with its code: "no space left on the device, ENOSPC". */
export function diskReason(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  const reason =
    e.code === "ENOSPC"
      ? "no space left on the device"
      : e.code === "EACCES" || e.code === "EROFS" || e.code === "EPERM"
        ? "not writable"
        : e.code === "ENOTDIR" || e.code === "ENOENT"
          ? "not a folder"
          : (e.message ?? String(error));
  return `${reason}${e.code !== undefined ? `, ${e.code}` : ""}`;
}

/**
 * Reads a kept list (ascending f64 spill indexes) window by window, and with `fingerprintsPath`
 * the list's fingerprints beside it (16 bytes an index), handing those of each window over.
 */
function indexReader(
  path: string | undefined,
  fingerprintsPath: string | undefined,
  fail: (error: unknown) => never,
): { mark(bits: Uint8Array, from: number, to: number, fingerprints: Uint8Array[]): void } {
  if (path === undefined) return { mark() {} };
  const source = chunks(path, READ_BUFFER, fail)[Symbol.iterator]();
  const prints =
    fingerprintsPath === undefined ? undefined : chunks(fingerprintsPath, 2 * READ_BUFFER, fail)[Symbol.iterator]();
  let values = new Float64Array(0);
  let at = 0;
  let done = false;
  // The fingerprints of the chunk of indexes being read: 2 * READ_BUFFER bytes hold as many as READ_BUFFER of indexes.
  let chunkPrints: Uint8Array = new Uint8Array(0);
  return {
    mark(bits, from, to, fingerprints) {
      // Where this window's indexes began in the chunk being read: their fingerprints are handed over when it ends.
      let first = at;
      const hand = () => {
        // A copy (Buffer's slice() would be a view of the read buffer, which the next read overwrites).
        if (prints !== undefined && at > first)
          fingerprints.push(new Uint8Array(chunkPrints.subarray(16 * first, 16 * at)));
      };
      for (;;) {
        if (at === values.length) {
          hand();
          if (done) return;
          const next = source.next();
          if (next.done === true) {
            done = true;
            return;
          }
          // Chunks are multiples of 8 bytes (8 KiB reads of a file of f64s); copied to be aligned.
          values = new Float64Array(new Uint8Array(next.value).buffer);
          at = 0;
          first = 0;
          if (prints !== undefined) {
            const got = prints.next();
            chunkPrints = got.done === true ? new Uint8Array(0) : got.value;
            if (chunkPrints.length !== 16 * values.length)
              throw new CrawlsieveError("ERR_SPILL", `the kept fingerprints beside ${path} do not match its indexes`);
          }
          continue;
        }
        const v = values[at];
        if (v >= to) {
          hand();
          return;
        }
        const w = v - from;
        bits[w >>> 3] |= 1 << (w & 7);
        at++;
      }
    },
  };
}

/** A spill factory for LineDeduplicator's `spill` option: files in a new folder under `dir` (default os.tmpdir()), removed when the deduplicator ends or is disposed. */
export function fileSpill(dir: string = tmpdir()): LineSpillFactory {
  return (recordBytes, memory) => new FileSpill(dir, recordBytes, memory);
}
