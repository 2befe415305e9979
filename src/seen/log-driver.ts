// The one driver of a persisted seen-set's log (a file on disk, an OPFS file, IndexedDB), used by
// the library's seen-sets (persisted-seen-set.ts) and by `dedup --store` (disk/store-gate.ts):
// every decision runs under the set's lock, on a table first brought up to date with what the log
// gained (everything the first time, other writers' batches after), and what it decided is written
// before the lock goes, a torn tail cut off first. Any failure ends the read (abort), so the next
// decision reads the log whole again and nothing of a failed batch counts as written. A catch-up
// reads what the log gained in the pieces the log gives, checks its records and applies them in order.
import { FormatError } from "../errors.js";
import type { BatchLog } from "./batch-log.js";
import { concatRecords, decodeRecords, decodeTombstones, TIMED_ENTRY } from "./fingerprint-batches.js";

/** A table that follows a log: it takes the log's added and forgotten fingerprints, packed 16 bytes each. */
export interface LogFollower {
  /** Empties the table: the log was cleared or replaced, and is read again whole. */
  clear(): void | Promise<void>;
  add(fingerprints: Uint8Array): void | Promise<void>;
  remove(fingerprints: Uint8Array): void | Promise<void>;
  /** A windowed table: takes timed keys (fingerprint and time, TIMED_ENTRY bytes each). A log holding them is refused by a table without it. */
  timed?(entries: Uint8Array): void;
  /** A windowed table: takes hosts and prefixes forgotten ([pattern, second] pairs). */
  tombstones?(list: [string, number][]): void;
}

/** What a catch-up found. */
export interface CaughtUp {
  /** Bytes of the last read to keep: set when the log ended in a torn record, to be cut off by the next write. */
  readonly keep?: number;
  /** Fingerprints added or forgotten after what this process had read before (0 when the log was read whole again). */
  readonly changed: number;
  /** True when the table was emptied and the log read whole. */
  readonly reset: boolean;
}

/**
 * Applies what `log` gained since its last read to `table`; call it under the set's lock, before
 * deciding anything. A torn tail (a write stopped part way, never acknowledged) is told to
 * `onRecover` and left to be cut off; in a log that never tears a write it is corruption.
 */
async function catchUp(log: BatchLog, table: LogFollower, onRecover?: (message: string) => void): Promise<CaughtUp> {
  let reset = false;
  let changed = 0;
  // In pieces where the log gives them: a record cut at a piece's end is read again with the next.
  for (let first = true; ; first = false) {
    const read = await log.read();
    if (read.reset && first) {
      reset = true;
      await table.clear();
    }
    const piece = read.more === true;
    const decoded = decodeRecords(read.records, log.name, piece);
    for (const batch of decoded.batches) {
      if (batch.kind === "timed" || batch.kind === "tombstones") {
        if (table.timed === undefined || table.tombstones === undefined)
          throw new FormatError(`${log.name} holds the records of a windowed store, not of this one`, "ERR_FORMAT");
        if (batch.kind === "timed") table.timed(batch.fingerprints);
        else table.tombstones(decodeTombstones(batch.fingerprints, log.name));
        changed += batch.kind === "timed" ? batch.fingerprints.length / TIMED_ENTRY : 1;
        continue;
      }
      if (batch.forget) await table.remove(batch.fingerprints);
      else await table.add(batch.fingerprints);
      changed += batch.fingerprints.length / 16;
    }
    if (piece) {
      log.unread!(read.records.length - decoded.goodBytes);
      continue;
    }
    if (decoded.torn && log.atomicWrites)
      throw new FormatError(`a record of ${log.name} is cut short`, "ERR_TRUNCATED");
    if (!decoded.torn) return { changed: reset ? 0 : changed, reset };
    const keep = decoded.goodBytes;
    onRecover?.(
      `${log.name} ended in a partly written batch (${read.records.length - keep} bytes from a write that stopped before it was acknowledged, or a damaged last batch); it was cut off, and its keys count as new again`,
    );
    return { keep, changed: reset ? 0 : changed, reset };
  }
}

/** Runs `body` holding the set's lock (across processes or contexts, and within this one). */
export type LockRunner = <T>(body: () => Promise<T>) => Promise<T>;

/** What a decision writes, in this order after the torn tail's cut: forget every record, then append these records. */
export interface LogChange {
  readonly clear?: boolean;
  readonly append?: readonly Uint8Array[];
}

/** What a decision under the lock gives back. */
export interface Decision<T> {
  readonly result: T;
  readonly change?: LogChange;
  /**
   * True: the append need not be on disk when the call resolves; a file flushes it on the thread
   * pool while the caller works on, and flushed() says when it is. Another log writes durably anyway.
   */
  readonly later?: boolean;
  /** Run under the lock once the change is written (the table's own bookkeeping). */
  readonly after?: () => void;
}

/** A log that appends without a flush and flushes on the thread pool (the file on disk). */
interface DeferredLog extends BatchLog {
  appendUnsynced(records: Uint8Array): void;
  flushAsync(): Promise<void>;
}

/** How a decision is read in. */
export interface RunOptions {
  /** Read the log from its start, whatever was read before (and count nothing as others' writes). */
  readonly fromStart?: boolean;
  /** Run under the lock before the log is read (a table that follows a file put in its place; a sorted part read first). */
  readonly before?: () => void | Promise<void>;
  /** The caller holds the lock already (closing, opening). */
  readonly held?: boolean;
}

/** What the parts of a persisted seen-set share: its log, its lock and how their errors are told. */
export interface DriverParts {
  readonly log: BatchLog;
  readonly lock: LockRunner;
  /** A store's error as crawlsieve's typed error; `what` says what was being done. */
  readonly storageError: (error: unknown, what: string) => Error;
  /** Told when a torn tail (a write stopped part way, never acknowledged) is cut off. */
  readonly onRecover?: (message: string) => void;
}

/** Decides under a log's lock: catch up, decide, write. */
export class LogDriver {
  /** The log was read once: what is read after is others' writes. */
  private loaded = false;
  private fromOthers = 0;
  private lastFlush: Promise<void> = Promise.resolve();

  constructor(private readonly parts: DriverParts) {}

  /** Fingerprints other processes or contexts added or forgot since this one first read the log. */
  get others(): number {
    return this.fromOthers;
  }

  /** True once the log was read. */
  get read(): boolean {
    return this.loaded;
  }

  /** Resolves once the last `later` append is on disk. */
  flushed(): Promise<void> {
    return this.lastFlush;
  }

  /**
   * Under the lock: `follower` takes what the log gained, then `decide` runs, given `cut` (cuts a
   * torn tail off now, for a decision that appends on its own before it returns), and its change
   * is written. A failure to read or write is the store's typed error; `decide`'s own goes as it is.
   */
  run<T>(
    follower: LogFollower,
    decide: (cut: () => Promise<void>, caught: CaughtUp) => Promise<Decision<T>>,
    options: RunOptions = {},
  ): Promise<T> {
    const { log, storageError } = this.parts;
    const locked: LockRunner = options.held === true ? (body) => body() : this.parts.lock;
    return locked(async () => {
      let caught: CaughtUp;
      try {
        if (options.fromStart === true) await log.abort();
        await options.before?.();
        caught = await catchUp(log, follower, this.parts.onRecover);
        if (this.loaded && options.fromStart !== true) this.fromOthers += caught.changed;
        this.loaded = true;
      } catch (error) {
        await log.abort();
        throw storageError(error, `reading ${log.name}`);
      }
      let keep = caught.keep;
      const cut = async () => {
        if (keep === undefined) return;
        await log.write({ keep });
        keep = undefined;
      };
      let decision: Decision<T>;
      try {
        decision = await decide(cut, caught);
      } catch (error) {
        await log.abort();
        throw error;
      }
      try {
        await this.write(keep, decision);
      } catch (error) {
        throw storageError(error, `writing ${log.name}`);
      }
      decision.after?.();
      return decision.result;
    });
  }

  /** Writes a decision's change with the cut of a torn tail, ending what the read began. */
  private async write(keep: number | undefined, { change, later }: Decision<unknown>): Promise<void> {
    const { log } = this.parts;
    const pieces = change?.append?.filter((piece) => piece.length > 0) ?? [];
    if (later === true && change?.clear !== true && isDeferred(log)) {
      if (keep !== undefined) await log.write({ keep });
      for (const piece of pieces) log.appendUnsynced(piece);
      if (pieces.length > 0) this.lastFlush = log.flushAsync();
      return;
    }
    await log.write({ keep, clear: change?.clear, append: pieces.length < 2 ? pieces[0] : concatRecords(pieces) });
  }
}

function isDeferred(log: BatchLog): log is DeferredLog {
  return typeof (log as Partial<DeferredLog>).flushAsync === "function";
}
