// The exact windowed seen-set on disk (Node): an ExactWindowSet in memory, and every batch's
// changes appended to one file of checksummed records (file-log.ts) through the log driver, under
// the directory's lock, before the call returns: the keys recorded with their times ("CSFT"
// records, 20 bytes a key), the keys removed, and the hosts and prefixes forgotten ("CSFH"). So
// the file read from its start gives every key's time back, and the processes sharing the
// directory each take the others' batches before deciding: exactly one of them sees a key as new,
// and a key reported new stays seen through kill -9. The clock is read under the lock, so the
// times in the file only grow. First-seen writes a key when it is reported new; refresh writes
// every sighting. Closed, a file grown past twice what it holds is rewritten with only the keys
// still held (expired ones dropped) and renamed into place; the others read it whole.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { diskError, isStoreFile, prepareDirectory } from "../../dedup/store-directory.js";
import { CrawlsieveError, DisposedError, InvalidArgumentError } from "../../errors.js";
import * as check from "../../validate.js";
import { ExactWindowSet, type ExactWindowSetOptions } from "../../window/exact-window-set.js";
import { init } from "../../wasm/node.js";
import { selectFlagged } from "../../wasm/batch.js";
import { encodeRecords, encodeTimedRecords, encodeTombstones } from "../fingerprint-batches.js";
import { LogDriver, type LogFollower } from "../log-driver.js";
import type { SeenKey, WindowedSeenSet } from "../seen-set.js";
import { LOG_FILE } from "./disk-seen-set.js";
import { REFERENCES_FILE } from "./disk-deduplicator.js";
import { FileLock } from "./file-lock.js";
import { createLogFile, FileLog, readScheme, removeAsideFiles } from "./file-log.js";

/** The file of a windowed store's records, in its directory. */
export const WINDOW_FILE = "window.log";

/** Options of openDiskWindowSet: the ExactWindowSet's, and how the file is written. */
export interface DiskWindowSetOptions extends ExactWindowSetOptions {
  /** true (default): each batch is flushed (fdatasync) before it returns; false: written to the kernel only (safe through kill -9). */
  readonly durable?: boolean;
  /** Told when a torn last batch, never acknowledged, is cut off, or a compaction at close failed. */
  readonly onRecover?: (message: string) => void;
}

/** A file past this many bytes, and past twice what its keys would take, is rewritten at close. */
const COMPACT_FROM = 1 << 20;

/** Opens (or creates) the windowed store in directory `dir` (created with its parents when missing). */
export async function openDiskWindowSet(dir: string, options: DiskWindowSetOptions): Promise<DiskWindowSet> {
  await init();
  if (typeof dir !== "string" || dir === "") throw new InvalidArgumentError("path", dir, "a directory path");
  const opts = check.options<DiskWindowSetOptions>("options", options);
  const durable = opts.durable ?? true;
  if (typeof durable !== "boolean") throw new InvalidArgumentError("durable", opts.durable, "true or false");
  if (opts.onRecover !== undefined && typeof opts.onRecover !== "function")
    throw new InvalidArgumentError("onRecover", opts.onRecover, "a function");
  const make = () => new ExactWindowSet(options);
  const set = make();
  try {
    prepareDirectory(dir);
    for (const other of [LOG_FILE, REFERENCES_FILE])
      if (existsSync(join(dir, other)))
        throw new CrawlsieveError(
          "ERR_STORE",
          `${dir} holds another store (${other}), not a windowed one: open it as it was made (without a window), or use another directory`,
        );
    const path = join(dir, WINDOW_FILE);
    const lock = new FileLock(join(dir, "lock"));
    try {
      await lock.run(async () => {
        removeAsideFiles(path);
        if (!isStoreFile(path)) createLogFile(path, "xxh128");
      });
      if (readScheme(path) !== "xxh128")
        throw new CrawlsieveError("ERR_STORE_CORRUPT", `${path} holds other fingerprints than XXH3-128`);
      const made = new DiskWindowSet(set, make, new FileLog(path, durable, opts.onRecover), lock, options);
      // Read in now: a damaged file is said at open, and the first batch is not slowed by it.
      await made.size();
      return made;
    } catch (error) {
      await lock.close().catch(() => undefined);
      throw error;
    }
  } catch (error) {
    set.dispose();
    throw error;
  }
}

/** An exact windowed seen-set kept on disk and shared by the processes that open its directory. */
export class DiskWindowSet implements WindowedSeenSet {
  readonly exact = true;
  readonly backend = "disk";
  readonly semantics: ExactWindowSet["semantics"];
  private readonly driver: LogDriver;
  private set: ExactWindowSet | undefined;
  private readonly clock: () => number;
  private readonly onRecover?: (message: string) => void;
  /** dueAgain of tables given up (the file read whole again). */
  private carriedDue = 0;

  /** @internal Made by openDiskWindowSet. */
  constructor(
    set: ExactWindowSet,
    private readonly remake: () => ExactWindowSet,
    private readonly log: FileLog,
    private readonly lock: FileLock,
    options: DiskWindowSetOptions,
  ) {
    this.set = set;
    this.semantics = set.semantics;
    this.clock = options.now ?? Date.now;
    this.onRecover = options.onRecover;
    this.driver = new LogDriver({ log, lock: lock.run, storageError: diskError, onRecover: options.onRecover });
  }

  /** Records keys at `at` (ms; default the clock, read under the lock): 1 where a key was not seen within its TTL. Durable on return. */
  addMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    check.keyList("keys", keys);
    return this.decide((set) => {
      const fresh = set.addMany(keys, at ?? this.clock());
      const entries = set.entriesOf(keys, this.semantics === "refresh" ? undefined : fresh);
      return { result: fresh, append: entries.length > 0 ? [encodeTimedRecords(entries)] : [] };
    });
  }

  /**
   * @internal addMany for `dedup --store --window`, under the lock: `gate.forget()` gives the
   * fingerprints to forget first (lines dead runs recorded and never printed), `gate.recorded`
   * hears the new keys' fingerprints before they are appended, and `gate.written` that both are in
   * the file.
   */
  addManyGated(
    keys: readonly SeenKey[],
    at: number | undefined,
    gate: { forget(): Uint8Array[]; recorded(fresh: Uint8Array): void; written(): void },
  ): Promise<Uint8Array> {
    return this.decide(
      (set) => {
        const forgotten = gate.forget().filter((packed) => packed.length > 0);
        for (const packed of forgotten) set.applyRemovals(packed);
        const fresh = set.addMany(keys, at ?? this.clock());
        gate.recorded(selectFlagged(ExactWindowSet.fingerprintsOf(keys), fresh));
        const entries = set.entriesOf(keys, this.semantics === "refresh" ? undefined : fresh);
        const append = forgotten.map((packed) => encodeRecords(packed, true));
        if (entries.length > 0) append.push(encodeTimedRecords(entries));
        return { result: fresh, append };
      },
      () => gate.written(),
    );
  }

  /** @internal Runs `body` under the directory's lock (a run's file of unprinted lines is made there). */
  underLock<T>(body: () => Promise<T> | T): Promise<T> {
    this.live();
    return this.lock.run(async () => body());
  }

  /** @internal The store's file, as errors name the store. */
  get path(): string {
    return this.log.path;
  }

  /** Keys this process found due again (held, and their TTL passed or their host forgotten). */
  get dueAgain(): number {
    return this.carriedDue + (this.set?.dueAgain ?? 0);
  }

  /** 1 where a key is seen at `at` (ms; default now), as the file stands. */
  hasMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    check.keyList("keys", keys);
    return this.decide((set) => ({ result: set.hasMany(keys, at ?? this.clock()), append: [] }));
  }

  /** 1 where a key is due at `at` (ms; default now): not seen, its TTL passed, or forgotten. */
  dueMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    check.keyList("keys", keys);
    return this.decide((set) => ({ result: set.dueMany(keys, at ?? this.clock()), append: [] }));
  }

  /** When each key was last recorded (ms, a whole second), NaN where it is not seen now. */
  seenAtMany(keys: readonly SeenKey[]): Promise<Float64Array> {
    check.keyList("keys", keys);
    return this.decide((set) => ({ result: set.seenAtMany(keys), append: [] }));
  }

  /** Forgets keys; 1 where a key was seen. Durable on return. */
  removeMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    check.keyList("keys", keys);
    const packed = ExactWindowSet.fingerprintsOf(keys);
    return this.decide((set) => ({
      result: set.removeMany(keys),
      append: packed.length > 0 ? [encodeRecords(packed, true)] : [],
    }));
  }

  /** Forgets every key of a host and its subdomains recorded until now (`at`, ms). Durable on return. */
  forgetHost(host: string, at?: number): Promise<void> {
    return this.forget((set, now) => set.forgetHost(host, now), at);
  }

  /** Forgets every key that starts with a URL prefix, recorded until now (`at`, ms). Durable on return. */
  forgetPrefix(prefix: string, at?: number): Promise<void> {
    return this.forget((set, now) => set.forgetPrefix(prefix, now), at);
  }

  /** Keys held as the file stands (expired ones included until they are dropped). */
  size(): Promise<number> {
    return this.decide((set) => ({ result: set.size, append: [] }));
  }

  /** Forgets every key and tombstone, for every process sharing the directory. */
  async clear(): Promise<void> {
    this.live();
    await this.driver.run(this.follower(), async () => {
      this.live().clear();
      return { result: undefined, change: { clear: true } };
    });
  }

  /** Rewrites the file when it grew past twice what it holds, then closes it and the lock; later calls fail. */
  async close(): Promise<void> {
    if (this.set === undefined) return;
    try {
      await this.driver.run(this.follower(), async () => ({ result: undefined }));
      await this.lock.run(async () => {
        try {
          this.compactIfDue();
        } finally {
          await this.log.close();
        }
      });
    } finally {
      this.carriedDue += this.set?.dueAgain ?? 0;
      this.set?.dispose();
      this.set = undefined;
      await this.lock.close();
    }
  }

  /** Under the lock, after catching up: writes only the keys still held, and the tombstones, to a new file renamed into place. */
  private compactIfDue(): void {
    const set = this.live();
    const size = statSync(this.log.path).size;
    if (size < COMPACT_FROM) return;
    // The set is closing: what no TTL holds can go from memory before the sizes are compared.
    set.dropExpired(this.clock());
    if (size < 2 * (16 + 28 * set.size)) return;
    try {
      const records: Uint8Array[] = [];
      set.eachEntry((entries) => records.push(encodeTimedRecords(entries)));
      records.push(encodeTombstones(set.tombstoneList()));
      createLogFile(this.log.path, "xxh128", records);
    } catch (error) {
      this.onRecover?.(`compacting ${this.log.path} failed, and it was left as it was: ${(error as Error).message}`);
    }
  }

  /** Records a tombstone at the clock's time (read under the lock) and appends it. */
  private forget(body: (set: ExactWindowSet, now: number) => void, at: number | undefined): Promise<void> {
    return this.decide((set) => {
      const before = new Map(set.tombstoneList());
      body(set, at ?? this.clock());
      const changed = set.tombstoneList().filter(([pattern, second]) => before.get(pattern) !== second);
      return { result: undefined, append: [encodeTombstones(changed)] };
    });
  }

  /** How the table takes the file's records. */
  private follower(): LogFollower {
    return {
      // Read whole again (a failed write, another process's clear or compaction): from nothing.
      clear: () => {
        const old = this.live();
        this.carriedDue += old.dueAgain;
        this.set = this.remake();
        old.dispose();
      },
      add: () => {
        throw new CrawlsieveError("ERR_STORE_CORRUPT", `${this.log.path} holds untimed keys: it is no windowed store`);
      },
      remove: (packed) => this.live().applyRemovals(packed),
      timed: (entries) => this.live().applyTimed(entries),
      tombstones: (list) => this.live().applyTombstones(list),
    };
  }

  /** Runs `body` under the lock on a table brought up to date with the file, and appends what it returns. */
  private decide<T>(
    body: (set: ExactWindowSet) => { result: T; append: Uint8Array[] },
    after?: () => void,
  ): Promise<T> {
    this.live();
    return this.driver.run(this.follower(), async () => {
      const { result, append } = body(this.live());
      return { result, change: { append: append.filter((piece) => piece.length > 0) }, after };
    });
  }

  private live(): ExactWindowSet {
    if (this.set === undefined) throw new DisposedError("the disk window set");
    return this.set;
  }
}
