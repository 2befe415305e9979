// What a `dedup --store` run has recorded as seen and not yet printed, in a file of its own beside
// the store's log, so that kill -9 between the two loses no line: a line's fingerprint reaches the
// log before the line is printed (a printed line stays seen), and it is in this file from before
// it reaches the log until its line was written out. The run holds an exclusive lock on the file
// for its life (the kernel lets it go when the process dies), so another run tells a dead run's
// file from a live one's without a pid or a clock. A run that finds a dead run's file forgets its
// fingerprints in the log (records of forgotten keys, store-gate.ts): those lines are new again,
// and the next run that meets them prints them: at least once, never lost, repeated only where
// the dead run printed a line and died before it could say so.
//
// Layout: a 32-byte header (magic "CSUP", version 1, the byte where the batches still unprinted
// begin and where they end) and the batches as the log's records (fingerprint-batches.ts). The
// header's end moves after a batch is written and its start once the batch's lines are out; when
// nothing waits the file is cut back to its header, and when dead bytes outweigh live ones the
// live ones are moved to the front, so the file stays about the size of what is in flight.
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
  unlinkSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { CrawlsieveError } from "../../errors.js";
import { readAt, writeAt } from "../../files/file-range.js";
import { decodeRecords, encodeRecords } from "../fingerprint-batches.js";
import { storeWriteError } from "./store-directory.js";
import { nativeLocks } from "./file-lock.js";

const MAGIC = 0x50555343; // "CSUP"
const VERSION = 1;
const HEADER = 32;
/** The file of one run: `unprinted.PID.HEX` (the pid only helps a person; the lock says who is alive). */
const NAME = /^unprinted\.\d+\.[0-9a-f]{8}$/;
/** The name it is made under, before it is locked and renamed. */
const MAKING = /^\.unprinted\.\d+\.[0-9a-f]{8}\.new$/;

/** A live run's file of fingerprints recorded in the log and not yet printed. */
export class UnprintedFile {
  // Positions are logical: the bytes ever written, counting from the header, so a mark taken
  // before the file was emptied or its live bytes moved to the front still means the same batches.
  // The file holds logical position p at byte p - moved.
  private start = HEADER;
  private end = HEADER;
  private moved = 0;
  /** Where the batches end whose lines are all handed to the output by its next flush (mark()). */
  private handed = HEADER;
  private closed = false;

  private constructor(
    private readonly fd: number,
    readonly path: string,
    private readonly durable: boolean,
    /** The store as its errors name it (a full disk is the store's). */
    private readonly where: string,
    private readonly dir: string,
  ) {}

  /** Creates this run's file in the store directory `dir` (named `where` in errors), locked for the life of the process; the caller holds the store's lock, as deadRuns()'s callers do. */
  static create(dir: string, durable: boolean, where: string): UnprintedFile {
    const name = `unprinted.${process.pid}.${randomBytes(4).toString("hex")}`;
    const path = join(dir, name);
    // Made and locked under a name no run takes for a run's, then renamed, under the store's lock
    // (the caller's), as deadRuns() runs: another run never finds it unlocked, and so dead.
    const making = join(dir, `.${name}.new`);
    let fd: number;
    try {
      fd = openSync(making, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o644);
    } catch (error) {
      throw storeWriteError(where, dir, error);
    }
    try {
      if (!nativeLocks().tryLock(fd))
        throw new CrawlsieveError("ERR_STORE", `${making} was locked by another process as soon as it was made`);
      const file = new UnprintedFile(fd, path, durable, where, dir);
      file.writeHeader();
      renameSync(making, path);
      return file;
    } catch (error) {
      closeSync(fd);
      rmSync(making, { force: true });
      throw storeWriteError(where, dir, error);
    }
  }

  /**
   * Records a batch of packed fingerprints before they are appended to the log; under the store's
   * lock. `whole`: all of the batch's lines reach the output before its next flush (a chunk's);
   * else only some may (a window of lines that waited, given back a piece at a time), and the
   * batch counts as handed over once a later batch is recorded.
   */
  record(fingerprints: Uint8Array, whole: boolean): void {
    if (fingerprints.length === 0) return;
    const records = encodeRecords(fingerprints);
    try {
      writeAt(this.fd, records, this.end - this.moved);
      this.handed = whole ? this.end + records.length : this.end;
      this.end += records.length;
      this.writeHeader();
    } catch (error) {
      throw storeWriteError(this.where, this.dir, error);
    }
  }

  /** Makes what was recorded durable (fdatasync on the thread pool; nothing when not durable), beside the log's own flush. */
  flushAsync(): Promise<void> {
    if (!this.durable) return Promise.resolve();
    return new Promise((resolve, reject) =>
      fdatasync(this.fd, (error) => (error ? reject(storeWriteError(this.where, this.dir, error)) : resolve())),
    );
  }

  /** flushAsync() at once, for a caller that prints right after. */
  flush(): void {
    if (!this.durable) return;
    try {
      fdatasyncSync(this.fd);
    } catch (error) {
      throw storeWriteError(this.where, this.dir, error);
    }
  }

  /** A mark to hand to printed() once the output handed over so far is written: the batches whose lines are all in it. */
  mark(): number {
    return this.handed;
  }

  /** The batches before `mark` (mark(); Infinity: all) are printed: they leave the file. */
  printed(mark: number): void {
    if (this.closed) return;
    const to = Math.min(mark, this.end);
    if (to <= this.start) return;
    this.start = to;
    try {
      if (this.start === this.end) {
        // Nothing waits: back to the header alone.
        this.moved = this.end - HEADER;
        this.writeHeader();
        ftruncateSync(this.fd, HEADER);
      } else if (
        this.start - this.moved - HEADER > this.end - this.start &&
        this.start - this.moved - HEADER >= 1 << 20
      ) {
        this.moveToFront();
      } else {
        this.writeHeader();
      }
    } catch {
      // The mark stays behind: those lines would be printed again after a crash, never lost.
    }
  }

  /** The fingerprints recorded and not printed (each batch's, packed), to forget when this run fails. */
  unprinted(): Uint8Array[] {
    return readBatches(this.fd, this.path, this.start - this.moved, this.end - this.moved);
  }

  /** Removes the file and lets its lock go: call once nothing in it waits, or what waits was forgotten in the log. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      // Emptied first: a run that opened it a moment before finds nothing to forget.
      this.start = this.end;
      this.writeHeader();
      unlinkSync(this.path);
    } catch {
      // A file left behind holds nothing unprinted; the next run removes it.
    } finally {
      closeSync(this.fd);
    }
  }

  /** Live batches moved to the front: written before the header points at them, so a crash in between finds the old ones whole. */
  private moveToFront(): void {
    const live = new Uint8Array(this.end - this.start);
    readAt(this.fd, live, this.start - this.moved);
    writeAt(this.fd, live, HEADER);
    this.moved = this.start - HEADER;
    this.writeHeader();
    ftruncateSync(this.fd, this.end - this.moved);
  }

  private writeHeader(): void {
    const head = new Uint8Array(HEADER);
    const view = new DataView(head.buffer);
    view.setUint32(0, MAGIC, true);
    view.setUint16(4, VERSION, true);
    view.setBigUint64(8, BigInt(this.start - this.moved), true);
    view.setBigUint64(16, BigInt(this.end - this.moved), true);
    writeAt(this.fd, head, 0);
  }
}

/** The unprinted fingerprints a dead run left: read while its file is held locked by the reader, removed by take(). */
export interface DeadRun {
  readonly path: string;
  readonly batches: Uint8Array[];
  readonly lines: number;
  /** Removes the file (once its fingerprints are forgotten in the log, durably) and lets it go. */
  take(): void;
  /** Lets the file go untouched (the forget failed: the next run tries again). */
  release(): void;
}

/**
 * The files of runs that died in store directory `dir` with lines recorded and not printed,
 * each locked by this process until take() or release(); files of live runs (locked) and
 * `own` are passed over. Called under the store's lock.
 */
export function deadRuns(dir: string, own: string | undefined): DeadRun[] {
  const found: DeadRun[] = [];
  for (const name of readdirSync(dir)) {
    if (MAKING.test(name)) removeIfDead(join(dir, name));
    if (!NAME.test(name)) continue;
    const path = join(dir, name);
    if (path === own) continue;
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR);
    } catch {
      continue; // removed by its run as it ended
    }
    let kept = false;
    try {
      if (!nativeLocks().tryLock(fd)) continue; // its run is alive
      // Removed and made anew by its ending run between the listing and the open: not this one.
      const now = statSync(path, { throwIfNoEntry: false });
      const held = fstatSync(fd);
      if (now === undefined || now.ino !== held.ino || now.dev !== held.dev) continue;
      const batches = readDead(fd, path);
      const lines = batches.reduce((sum, batch) => sum + batch.length / 16, 0);
      found.push({
        path,
        batches,
        lines,
        take: () => {
          try {
            unlinkSync(path);
          } finally {
            closeSync(fd);
          }
        },
        release: () => closeSync(fd),
      });
      kept = true;
    } finally {
      if (!kept) closeSync(fd);
    }
  }
  return found;
}

/** A file a run was killed while making (before it held anything): removed when no one holds it. */
function removeIfDead(path: string): void {
  try {
    const fd = openSync(path, constants.O_RDWR);
    try {
      if (nativeLocks().tryLock(fd)) unlinkSync(path);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Renamed or removed meanwhile.
  }
}

/** What a run says of a dead run whose lines it made new again. */
export function deadRunMessage(run: DeadRun): string {
  return `a run killed before printing them had recorded ${run.lines.toLocaleString("en-US")} lines as seen (${run.path}); they count as new again and are printed where this run meets them (some may have been printed already: at least once, never lost)`;
}

/** A dead run's live batches: a file cut short or damaged by a power loss gives what is whole of it. */
function readDead(fd: number, path: string): Uint8Array[] {
  const head = new Uint8Array(HEADER);
  if (readAt(fd, head, 0) < HEADER) return [];
  const view = new DataView(head.buffer);
  if (view.getUint32(0, true) !== MAGIC || view.getUint16(4, true) !== VERSION) {
    throw new CrawlsieveError(
      "ERR_STORE_CORRUPT",
      `${path} is not a file of unprinted lines this build reads (bad magic or version); move it away to run on (its lines may then never be printed)`,
    );
  }
  const start = Number(view.getBigUint64(8, true));
  const end = Math.min(Number(view.getBigUint64(16, true)), fstatSync(fd).size);
  return readBatches(fd, path, start, end);
}

function readBatches(fd: number, path: string, start: number, end: number): Uint8Array[] {
  if (end <= start) return [];
  const bytes = new Uint8Array(end - start);
  const got = readAt(fd, bytes, start);
  // Whole records only: what a power loss tore was never in the log either (it is written first).
  return decodeRecords(bytes.subarray(0, got), path).batches.map((batch) => batch.fingerprints.slice());
}
