// The exact windowed seen-set over a BatchLog (a file on disk, an OPFS file, IndexedDB, a Durable
// Object's rows), runtime-neutral: an ExactWindowSet in memory, and every batch's changes appended
// through the log driver under the store's lock before the call returns: the keys recorded with
// their times ("CSFT" records, 20 bytes a key), the keys removed, and the hosts and prefixes
// forgotten ("CSFH"). So the log read from its start gives every key's time back, and the writers
// sharing it each take the others' batches before deciding: exactly one of them sees a key as new.
// The clock is read under the lock, so the times in the log only grow. First-seen writes a key
// when it is reported new; refresh writes every sighting. The disk store (disk/disk-window-set.ts)
// adds its lock file and compaction; the browser one (browser/browser-window-set.ts) its stores.
import { CrawlsieveError, DisposedError } from "../errors.js";
import * as check from "../validate.js";
import { ExactWindowSet, type ExactWindowSetOptions } from "../window/exact-window-set.js";
import type { BatchLog } from "./batch-log.js";
import { encodeRecords, encodeTimedRecords, encodeTombstones } from "./fingerprint-batches.js";
import { type DriverParts, LogDriver, type LogFollower } from "./log-driver.js";
import type { SeenBackend, SeenKey, WindowedSeenSet } from "./seen-set.js";

/** What a windowed set over a log is made of: the log driver's parts, and how the set is named. */
export interface LogWindowParts extends DriverParts {
  readonly backend: SeenBackend;
  readonly log: BatchLog;
  /** Called after the log is closed (to release a lock file). */
  readonly release?: () => Promise<void>;
}

/** An exact windowed seen-set kept in a log and shared by whoever opens the same log under the same lock. */
export class LogWindowSet implements WindowedSeenSet {
  readonly exact = true;
  readonly backend: SeenBackend;
  readonly semantics: ExactWindowSet["semantics"];
  /** Where the records are kept ("disk", "opfs", "indexeddb", "durable-object"). */
  readonly storage: string;
  protected readonly driver: LogDriver;
  protected readonly clock: () => number;
  private set: ExactWindowSet | undefined;
  /** dueAgain of tables given up (the log read whole again). */
  private carriedDue = 0;

  /** A set of `options` over `parts` (the ExactWindowSet's options are checked here). */
  constructor(
    private readonly options: ExactWindowSetOptions,
    protected readonly parts: LogWindowParts,
  ) {
    this.set = new ExactWindowSet(options);
    this.semantics = this.set.semantics;
    this.backend = parts.backend;
    this.storage = parts.log.storage;
    this.clock = options.now ?? Date.now;
    this.driver = new LogDriver(parts);
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

  /** Keys this context found due again (held, and their TTL passed or their host forgotten). */
  get dueAgain(): number {
    return this.carriedDue + (this.set?.dueAgain ?? 0);
  }

  /** 1 where a key is seen at `at` (ms; default now), as the log stands. */
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

  /** Keys held as the log stands (expired ones included until they are dropped). */
  size(): Promise<number> {
    return this.decide((set) => ({ result: set.size, append: [] }));
  }

  /** Forgets every key and tombstone, for every writer sharing the log. */
  async clear(): Promise<void> {
    this.live();
    await this.driver.run(this.follower(), async () => {
      this.live().clear();
      return { result: undefined, change: { clear: true } };
    });
  }

  /** Catches up, runs beforeClose under the lock, then closes the log; later calls fail. */
  async close(): Promise<void> {
    if (this.set === undefined) return;
    try {
      await this.driver.run(this.follower(), async () => ({ result: undefined }));
      await this.parts.lock(async () => {
        try {
          this.beforeClose(this.live());
        } finally {
          await this.parts.log.close();
        }
      });
    } finally {
      this.carriedDue += this.set?.dueAgain ?? 0;
      this.set?.dispose();
      this.set = undefined;
      await this.parts.release?.();
    }
  }

  /** Run under the lock at close, on the table caught up with the log (the disk file's compaction). */
  protected beforeClose(_set: ExactWindowSet): void {}

  /** Records a tombstone at the clock's time (read under the lock) and appends it. */
  private forget(body: (set: ExactWindowSet, now: number) => void, at: number | undefined): Promise<void> {
    return this.decide((set) => {
      const before = new Map(set.tombstoneList());
      body(set, at ?? this.clock());
      const changed = set.tombstoneList().filter(([pattern, second]) => before.get(pattern) !== second);
      return { result: undefined, append: [encodeTombstones(changed)] };
    });
  }

  /** How the table takes the log's records. */
  protected follower(): LogFollower {
    return {
      // Read whole again (a failed write, another writer's clear or compaction): from nothing.
      clear: () => {
        const old = this.live();
        this.carriedDue += old.dueAgain;
        this.set = new ExactWindowSet(this.options);
        old.dispose();
      },
      add: () => {
        throw new CrawlsieveError(
          "ERR_STORE_CORRUPT",
          `${this.parts.log.name} holds untimed keys: it is a seen-set without a window (open it without one)`,
        );
      },
      remove: (packed) => this.live().applyRemovals(packed),
      timed: (entries) => this.live().applyTimed(entries),
      tombstones: (list) => this.live().applyTombstones(list),
    };
  }

  /** Runs `body` under the lock on a table brought up to date with the log, and appends what it returns. */
  protected decide<T>(
    body: (set: ExactWindowSet) => { result: T; append: Uint8Array[] },
    after?: () => void,
  ): Promise<T> {
    this.live();
    return this.driver.run(
      this.follower(),
      async () => {
        const { result, append } = body(this.live());
        return { result, change: { append: append.filter((piece) => piece.length > 0) }, after };
      },
      // Closed while this call waited for the lock.
      { before: () => void this.live() },
    );
  }

  /** The table, or DisposedError once closed. */
  protected live(): ExactWindowSet {
    if (this.set === undefined) throw new DisposedError(`the ${this.backend} window set`);
    return this.set;
  }
}
