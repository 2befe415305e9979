// `dedup --store DIR` on the byte pipeline: the line engine's own table is the seen-set in memory,
// and the disk seen-set's file (src/seen/disk/) is its memory across runs and processes. Each chunk
// is decided under the store's lock: first the table takes what the file gained since this process
// last read it (everything at the start; other writers' batches after), then the engine works the
// chunk, keeping the fingerprints of the lines it found new, and those are appended as one batch
// before the lock is let go, and flushed (fdatasync, on the thread pool while the next chunk is
// worked) before the chunk's lines are printed. So a printed line stays seen through kill -9 and a
// power loss, and among processes sharing DIR each line is new for exactly one of them (one that
// read another's batch before its flush may drop lines a power loss then takes back: printed by
// neither, never by both). Past the memory budget the lines left undecided are resolved at the
// end, and printed, under the lock (decideAll), against the whole store read once, in order: only
// its keys that may equal a waiting line's fingerprint (a filter of those, key-sieve.ts) are set
// aside, and the kept lines are made durable a window of output at a time, before it is printed.
// A store whose keys alone would fill the budget is not read in at all (defersStore): every new
// line waits for that end, and the tables hold this run's lines, so a repeat within the run never
// waits and the store is read once, not twice. Of a compacted store, only the records of its
// sorted part that a waiting line may lie in are read (sorted-part.ts), then what followed it.
// What a run records it also writes to its own locked file of unprinted lines until the output
// that holds them is written (unprinted-file.ts); a dead run's file is found under the lock and
// its fingerprints forgotten in the log, so a kill -9 between record and print loses no line.
import { CrawlsieveError } from "../../errors.js";
import { diskError } from "./store-directory.js";
import { openStoreLog, type StoreLog } from "./disk-seen-set.js";
import { encodeRecords } from "../fingerprint-batches.js";
import { exceedsBudget } from "./tiered-table.js";
import { LogDriver } from "../log-driver.js";
import type { LineDeduplicator } from "../../lines/line-deduplicator.js";
import type { Arena } from "../../wasm/arena.js";
import type { ChunkGate } from "../../lines/chunk-gate.js";
import { deadRunMessage, deadRuns, UnprintedFile, type DeadRun } from "./unprinted-file.js";

/** Waiting lines a record of a sorted part past which every record is read unasked: at 8 random keys a record, about one record in 10 million would go unmarked. */
const DENSE_LINES_A_RECORD = 8;

/** Whether a store of `stored` keys is too large to read into a table within `memory` bytes: then every new line waits for the end (LineDeduplicator's deferNew). */
export function defersStore(stored: number, memory: number): boolean {
  return exceedsBudget(stored, memory);
}

/** The store a line pipeline decides its chunks under (see ChunkGate). */
export class StoreGate implements ChunkGate {
  /** Keys the store holds (as this process last saw it). */
  private held = 0;
  /** Catches up, decides and writes under the store's lock, as the library's disk seen-set does. */
  private readonly driver: LogDriver;
  /** The flush of the last batch appended (with this run's file of unprinted lines). */
  private flushed: Promise<void> = Promise.resolve();
  /** Reused for each batch's records (grown when a batch needs more). */
  private scratch = new Uint8Array(1 << 20);

  private constructor(
    private readonly store: StoreLog,
    /** The deduplicator whose table follows the file (made with `fresh`, and the file's fingerprint). */
    readonly dedup: LineDeduplicator,
    private readonly onRecover: (message: string) => void,
    private readonly dir: string,
    /** What this run recorded in the store and has not printed yet (unprinted-file.ts). */
    private readonly unprinted: UnprintedFile,
  ) {
    this.driver = new LogDriver({ log: store.log, lock: store.lock.run, storageError: diskError, onRecover });
  }

  /** Lines that runs killed before printing them had recorded, found new again by this run. */
  private forgottenForDead = 0;

  /**
   * Opens the store in `dir` and makes the deduplicator with `make`, given the store's fingerprint
   * and its size (for the first table); the store's keys are read in by the first decide().
   */
  static async open(
    dir: string,
    make: (hash: "xxh128" | "md5", stored: number) => LineDeduplicator,
    onRecover: (message: string) => void,
  ): Promise<StoreGate> {
    const store = await openStoreLog(dir, true, onRecover);
    let unprinted: UnprintedFile | undefined;
    try {
      // Under the store's lock, as deadRuns() looks: a file in the making, not yet locked by its
      // maker, would otherwise look dead to another run and be removed under it.
      unprinted = await store.lock.run(async () => UnprintedFile.create(dir, true, store.log.path));
      return new StoreGate(store, make(store.digest, store.stored), onRecover, dir, unprinted);
    } catch (error) {
      unprinted?.close();
      await store.lock.close().catch(() => undefined);
      throw error;
    }
  }

  /** The store's fingerprint: XXH3-128, or MD5 for a store imported from LMDB. */
  get hash(): "xxh128" | "md5" {
    return this.store.digest;
  }

  /** Records of a compacted store's sorted part read at the end, of how many (undefined: none was looked up). */
  private sortedRead: { records: number; of: number } | undefined;

  /** Keys in the store (as found at the start when it was never read: a deferred run with no new line), keys other processes added while this one ran, lines of killed runs found new again, and the sorted part's records read at the end. */
  get stats(): {
    stored: number;
    fromOthers: number;
    unprintedByKilledRuns: number;
    sortedRecordsRead?: number;
    sortedRecords?: number;
  } {
    const sorted =
      this.sortedRead === undefined
        ? {}
        : { sortedRecordsRead: this.sortedRead.records, sortedRecords: this.sortedRead.of };
    return {
      stored: this.driver.read ? this.held : this.store.stored,
      fromOthers: this.driver.others,
      unprintedByKilledRuns: this.forgottenForDead,
      ...sorted,
    };
  }

  /** Where the output handed over so far stands (see UnprintedFile.mark): printed(mark) once it is written. */
  mark(): number {
    return this.unprinted.mark();
  }

  /** The output handed over up to `mark` is written: its lines' batches leave this run's file of unprinted lines. */
  printed(mark: number): void {
    this.unprinted.printed(mark);
  }

  /**
   * The fingerprints that runs killed before printing them left recorded (deadRuns), taken out of
   * the table with `remove` so their lines are new again for this run, as records of forgotten
   * keys to append before this chunk's own. Under the lock, after the catch-up.
   */
  private forgetDead(remove: (fingerprints: Uint8Array) => void): { runs: DeadRun[]; records: Uint8Array[] } {
    const runs = deadRuns(this.dir, this.unprinted.path);
    const records: Uint8Array[] = [];
    for (const run of runs) {
      for (const batch of run.batches) {
        remove(batch);
        this.held -= batch.length / 16;
        records.push(encodeRecords(batch, true));
      }
    }
    return { runs, records };
  }

  /** Once the forget records are durable: the dead runs' files go, and the user is told. */
  private settleDead(runs: readonly DeadRun[]): void {
    for (const run of runs) {
      run.take();
      if (run.lines === 0) continue;
      this.forgottenForDead += run.lines;
      this.onRecover(deadRunMessage(run));
    }
  }

  readonly decide = <T>(work: () => T | Promise<T>, settle: () => Promise<void>): Promise<T> => {
    // Every new line waits for decideAll: nothing is printed, so there is nothing to decide now.
    if (this.dedup.defersNew) return Promise.resolve().then(work);
    const dedup = this.dedup;
    // Taking keys may grow the table and so move memory: the write under way must end first.
    let settled = false;
    let dead: DeadRun[] = [];
    const decided = this.driver.run(
      {
        clear: () => {
          if (this.driver.read) dedup.clearSeen();
          this.held = 0;
        },
        add: async (fingerprints) => {
          if (!settled) await settle();
          settled = true;
          // Past the budget the tables are frozen: keys they cannot take are read again at the end (decideAll).
          dedup.addFingerprints(fingerprints);
          this.held += fingerprints.length / 16;
        },
        remove: (fingerprints) => {
          dedup.removeFingerprints(fingerprints);
          this.held -= fingerprints.length / 16;
        },
      },
      async () => {
        let forgotten: { runs: DeadRun[]; records: Uint8Array[] };
        try {
          forgotten = this.forgetDead((fingerprints) => dedup.removeFingerprints(fingerprints));
        } catch (error) {
          throw diskError(error, `reading ${this.store.log.name}`);
        }
        dead = forgotten.runs;
        dedup.clearFresh();
        const result = await work();
        // Encoded at once: the fingerprints are a view of WebAssembly memory.
        const digests = dedup.freshDigests();
        const fresh = digests.length / 16;
        // Recorded as unprinted before the log has them: a kill after the append finds them there.
        if (fresh > 0) this.unprinted.record(digests, true);
        const append = fresh > 0 ? [...forgotten.records, this.encode(digests)] : forgotten.records;
        return {
          result,
          change: { append },
          // Flushed on the thread pool while the next chunk is worked: the chunk's lines are written once it is done (durable()).
          later: true,
          after: () => {
            this.held += fresh;
            dedup.clearFresh();
            const runs = dead;
            if (append.length === 0 && runs.length === 0) return;
            const flushed = Promise.all([this.driver.flushed(), this.unprinted.flushAsync()]).then(() =>
              this.settleDead(runs),
            );
            flushed.catch(() => runs.forEach((run) => run.release()));
            this.flushed = flushed;
          },
        };
      },
    );
    return decided.catch((error) => {
      dead.forEach((run) => run.release());
      throw error;
    });
  };

  /** Packed fingerprints as records, in the reused scratch when it holds them (grown for the next time when not); valid until the next call. */
  private encode(fingerprints: Uint8Array): Uint8Array {
    const records = encodeRecords(fingerprints, false, this.scratch);
    if (records.buffer !== this.scratch.buffer) this.scratch = new Uint8Array(records.length * 2);
    return records;
  }

  /** Resolves once the last decision's new fingerprints are on disk: its lines may be written then. */
  durable(): Promise<void> {
    return this.flushed;
  }

  /**
   * The last decision, of the lines that waited on disk past the memory budget (resolved()), and
   * their output: `work` gives them all back, under the store's lock. The store is read again
   * whole and its keys that may equal a spilled line set aside by partition beside them; they are
   * resolved against those, and the kept lines' fingerprints appended and flushed a window of
   * output at a time, before the window's first line is given back (what was not flushed is cut
   * off again if anything fails). With nothing spilled it is a decide().
   */
  readonly decideAll = <T>(work: () => T | Promise<T>, settle: () => Promise<void>): Promise<T> => {
    const dedup = this.dedup;
    if (dedup.spilledLines === 0) return this.decide(work, settle);
    const { log } = this.store;
    let sorted = false;
    const readSorted = () => {
      // Worth its reading (every spill record once) when the store is not much smaller than the spill.
      if (2 * Math.max(this.store.stored, this.held) >= dedup.spilledLines) dedup.sieveStoreKeys();
      // A compacted store's sorted part is read only where a waiting line may be in it; then what came after it, whole.
      const part = log.sortedPart();
      if (part === undefined) return;
      sorted = true;
      try {
        // So many lines waited that every record would be marked: no need to ask which.
        if (dedup.spilledLines >= DENSE_LINES_A_RECORD * part.records) part.markAll();
        else dedup.eachSpilled((records, size) => part.mark(records, size));
        part.eachMarked((fingerprints) => dedup.spillStoreKeys(fingerprints, false));
      } finally {
        part.close();
      }
      this.held = part.count;
      this.sortedRead = { records: part.recordsRead, of: part.records };
    };
    const follower = {
      clear: () => {
        if (sorted)
          throw new CrawlsieveError(
            "ERR_INTERNAL",
            `${log.name} was read again from its start after its sorted part, under the lock`,
          );
        this.held = 0;
      },
      add: (fingerprints: Uint8Array) => {
        dedup.spillStoreKeys(fingerprints, false);
        this.held += fingerprints.length / 16;
      },
      remove: (fingerprints: Uint8Array) => {
        dedup.spillStoreKeys(fingerprints, true);
        this.held -= fingerprints.length / 16;
      },
    };
    const decided = async (cut: () => Promise<void>) => {
      let dead: DeadRun[] = [];
      try {
        // A torn tail goes before anything is appended after it.
        await cut();
        // What runs killed before printing it recorded is new again: forgotten, durably, before anything is decided.
        const forgotten = this.forgetDead((fingerprints) => dedup.spillStoreKeys(fingerprints, true));
        dead = forgotten.runs;
        for (const records of forgotten.records) log.appendUnsynced(records);
        if (dead.length > 0) log.flush();
        this.settleDead(dead);
      } catch (error) {
        dead.forEach((run) => run.release());
        throw diskError(error, `reading ${log.name}`);
      }
      // Each window of kept lines is appended and flushed before its first line is given back, so a
      // crash leaves at most that window and the next recorded and not printed; the lock is held
      // until the last.
      let durable = log.end;
      dedup.onKept = (pieces) => {
        // Recorded as unprinted before the log has them, as decide() does.
        for (const fingerprints of pieces) this.unprinted.record(fingerprints, false);
        for (const fingerprints of pieces) {
          log.appendUnsynced(this.encode(fingerprints));
          this.held += fingerprints.length / 16;
        }
        this.unprinted.flush();
        log.flush();
        durable = log.end;
      };
      try {
        return { result: await work() };
      } catch (error) {
        try {
          log.cutTo(durable);
        } catch {
          // The next run finds the unflushed records or a torn tail: neither was printed.
        }
        throw error;
      } finally {
        dedup.onKept = undefined;
      }
    };
    // Read from the start: the frozen tables hold only part of the store.
    return this.driver.run(follower, decided, { fromStart: true, before: readSorted });
  };

  /**
   * Closes the file and lets the lock go; with `spare`, the deduplicator's memory once it is done
   * with (LineDeduplicator.releaseArena), the file is compacted in it when it has grown enough.
   */
  async close(spare?: Arena): Promise<void> {
    // A flush still on the thread pool keeps the file open until it is done.
    await this.flushed.catch(() => undefined);
    try {
      await this.store.lock.run(async () => {
        await this.forgetUnprinted();
        await this.store.log.closeWith(spare);
      });
    } finally {
      await this.store.lock.close();
    }
  }

  /**
   * Lines this run recorded and did not print (its output failed, or it stopped part way) are
   * forgotten in the store before it lets go, so the next run prints them; then its file of
   * unprinted lines goes. Should the store not take that, the file stays for the next run to
   * forget them. Under the lock.
   */
  private async forgetUnprinted(): Promise<void> {
    const batches = this.unprinted.unprinted();
    // Runs killed since this one last looked (or that it never looked for: a run whose lines all waited and none was new).
    let dead: DeadRun[] = [];
    try {
      dead = deadRuns(this.dir, this.unprinted.path);
      for (const run of dead) batches.push(...run.batches);
      // Up to date first: the append goes after every record, a torn tail cut off (a store never read in is not read for nothing).
      if (batches.length > 0)
        await this.driver.run(
          IGNORE,
          async () => ({ result: undefined, change: { append: batches.map((batch) => encodeRecords(batch, true)) } }),
          { held: true },
        );
    } catch (error) {
      dead.forEach((run) => run.release());
      this.onRecover(
        `the lines this run recorded and did not print could not be forgotten in ${this.store.log.name} (${(error as Error).message}); the next run forgets them`,
      );
      return;
    }
    for (const run of dead) run.take();
    this.unprinted.close();
  }
}

/** A follower for a catch-up that only finds the log's end. */
const IGNORE = { clear: () => undefined, add: () => undefined, remove: () => undefined };
