// IMP-CB on disk, on the disk seen-set's own engine: a Deduplicator (a counting filter in front of
// an exact table of MD5 fingerprints with reference counts) in memory, and every reference taken
// or dropped appended to a file of checksummed batches (file-log.ts) through the log driver, under
// the directory's lock, durably before the call returns. A check appends its keys' fingerprints
// (one more reference each), a removal the dropped references as records of forgotten keys, so
// the file read from its start gives every count back, and processes sharing the directory each
// take the others' batches before deciding: exactly one of them sees a key as new. The counting
// filter is rebuilt from the file at open, so no saved counter can hide a key. The file keeps one
// record a reference and is never compacted (a compaction keeps each key once). A directory
// holding a StoreDeduplicator's LMDB store is imported once, counts and all (lmdb-import.ts).
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { type DedupStats, Deduplicator } from "../../exact/imp-cb.js";
import { diskError, isStoreFile, prepareDirectory } from "./store-directory.js";
import { CrawlsieveError, DisposedError, InvalidArgumentError } from "../../errors.js";
import * as check from "../../validate.js";
import { init } from "../../wasm/node.js";
import { toHex } from "../../hash/md5.js";
import { selectFlagged } from "../../wasm/batch.js";
import { encodeRecords } from "../fingerprint-batches.js";
import { LogDriver } from "../log-driver.js";
import { LOG_FILE } from "./disk-seen-set.js";
import { FileLock } from "./file-lock.js";
import { createLogFile, FileLog, readScheme, removeAsideFiles } from "./file-log.js";
import { retireLmdb, startingRecords } from "./lmdb-import.js";

/** The file of a disk deduplicator's references, in its directory. */
export const REFERENCES_FILE = "references.log";

/** Options of openDiskDeduplicator. */
export interface DiskDeduplicatorOptions {
  /** Distinct keys planned: sizes the counting filter (default 1e6); the table grows past it. */
  readonly items?: number;
  /** Rate of "maybe" answers for new keys, i.e. of table look-ups (default 0.01); never of errors. */
  readonly fpRate?: number;
  /** Bits per counter: 2, 4 (default) or 8. A saturated counter stays up, so a removal never hides a key. */
  readonly counterBits?: number;
  /** true (default): each batch is flushed (fdatasync) before it returns; false: written to the kernel only (safe through kill -9). */
  readonly durable?: boolean;
  /** Told when a torn last batch, never acknowledged, is cut off. */
  readonly onRecover?: (message: string) => void;
}

/** Opens (or creates) the disk deduplicator in directory `dir` (created with its parents when missing). */
export async function openDiskDeduplicator(
  dir: string,
  options: DiskDeduplicatorOptions = {},
): Promise<DiskDeduplicator> {
  await init();
  if (typeof dir !== "string" || dir === "") throw new InvalidArgumentError("path", dir, "a directory path");
  const opts = check.options<DiskDeduplicatorOptions>("options", options);
  const durable = opts.durable ?? true;
  if (typeof durable !== "boolean") throw new InvalidArgumentError("durable", opts.durable, "true or false");
  if (opts.onRecover !== undefined && typeof opts.onRecover !== "function")
    throw new InvalidArgumentError("onRecover", opts.onRecover, "a function");
  const plan = {
    items: check.positiveInteger("items", opts.items ?? 1e6),
    fpRate: opts.fpRate,
    counterBits: opts.counterBits,
  };
  const dedup = new Deduplicator(plan);
  try {
    prepareDirectory(dir);
    if (existsSync(join(dir, LOG_FILE)))
      throw new CrawlsieveError(
        "ERR_STORE",
        `${dir} holds a disk seen-set (${LOG_FILE}), not a deduplicator's references: open it with openSeenSet({ backend: "disk" }), or use another directory`,
      );
    const path = join(dir, REFERENCES_FILE);
    const lock = new FileLock(join(dir, "lock"));
    try {
      await lock.run(async () => {
        removeAsideFiles(path);
        // A StoreDeduplicator's LMDB store is taken in once, with its counts, then retired.
        const made = !isStoreFile(path);
        if (made) createLogFile(path, "md5", startingRecords(dir, true)[1]);
        await retireLmdb(dir, path, made, true);
      });
      if (readScheme(path) !== "md5")
        throw new CrawlsieveError("ERR_STORE_CORRUPT", `${path} holds other fingerprints than MD5`);
      const stored = Math.max(0, Math.floor((statSync(path).size - 16) / 16));
      const made = new DiskDeduplicator(
        dedup,
        () => new Deduplicator(plan),
        new FileLog(path, durable, opts.onRecover),
        lock,
        opts.onRecover,
      );
      // Read in now: a damaged file is said at open, and the first batch is not slowed by it.
      if (stored > 0) await made.hasMany([]);
      return made;
    } catch (error) {
      await lock.close().catch(() => undefined);
      throw error;
    }
  } catch (error) {
    dedup.dispose();
    throw error;
  }
}

/** Exact dedup with reference counts (IMP-CB) kept on disk and shared by the processes that open its directory. */
export class DiskDeduplicator {
  private readonly driver: LogDriver;
  private dedup: Deduplicator | undefined;
  /** The kernels' look-up counts made while taking the file's batches in (not this process's checks). */
  private replayed = { lookups: 0, lookupsAvoided: 0, lookupsForNew: 0 };
  /** This process's counts kept from a table given up (after a failed write, the file is read whole again). */
  private carried: DedupStats = { seen: 0, new: 0, duplicates: 0, lookups: 0, lookupsAvoided: 0, lookupsForNew: 0 };

  /** @internal Made by openDiskDeduplicator. */
  constructor(
    dedup: Deduplicator,
    private readonly remake: () => Deduplicator,
    private readonly log: FileLog,
    private readonly lock: FileLock,
    onRecover?: (message: string) => void,
  ) {
    this.dedup = dedup;
    this.driver = new LogDriver({ log, lock: lock.run, storageError: diskError, onRecover });
  }

  /** Checks keys in order: isNew[i] = 1 when new (one reference now), counts[i] = references after the call. Durable on return. */
  async checkMany(keys: readonly (string | Uint8Array)[]): Promise<{ isNew: Uint8Array; counts: Uint32Array }> {
    const packed = this.live().fingerprintsOf(keys);
    return this.decide((dedup) => {
      const answer = dedup.applyFingerprints(packed, false, true);
      return { result: answer, append: packed.length > 0 ? [encodeRecords(packed)] : [] };
    });
  }

  /**
   * Drops one reference of each key (every one with `all`); at the last the key is forgotten and
   * its counters go down. removed[i] = 1 when keys[i] had a reference; counts[i] = references left.
   */
  async removeMany(
    keys: readonly (string | Uint8Array)[],
    options: { all?: boolean } = {},
  ): Promise<{ removed: Uint8Array; counts: Uint32Array }> {
    const all = check.options<{ all: boolean }>("options", options).all ?? false;
    if (typeof all !== "boolean") throw new InvalidArgumentError("all", all, "true or false");
    const packed = this.live().fingerprintsOf(keys);
    return this.decide((dedup) => {
      // In order: a key named twice in the batch drops two references, as two calls would.
      const { isNew: removed, counts } = dedup.applyFingerprints(packed, true, false);
      const dropped: Uint8Array[] = [selectFlagged(packed, removed)];
      if (all) dropped.push(...dropEvery(dedup, packed, counts));
      const records = dropped.filter((piece) => piece.length > 0).map((piece) => encodeRecords(piece, true));
      return { result: { removed, counts: all ? new Uint32Array(keys.length) : counts }, append: records };
    });
  }

  /** Read-only: out[i] = 1 when keys[i] has a reference, as the file stands now. */
  async hasMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    this.live();
    check.keyList("keys", keys);
    return this.decide((dedup) => ({
      result: keys.length === 0 ? new Uint8Array(0) : dedup.hasMany(keys),
      append: [],
    }));
  }

  /** Keys checked, new and duplicate by this process, and the table look-ups its counting filter made and avoided. */
  get stats(): DedupStats {
    const now = this.live().stats;
    const was = this.carried;
    return {
      seen: was.seen + now.seen,
      new: was.new + now.new,
      duplicates: was.duplicates + now.duplicates,
      lookups: was.lookups + now.lookups - this.replayed.lookups,
      lookupsAvoided: was.lookupsAvoided + now.lookupsAvoided - this.replayed.lookupsAvoided,
      lookupsForNew: was.lookupsForNew + now.lookupsForNew - this.replayed.lookupsForNew,
    };
  }

  /** Distinct keys with a reference, as this process last read the file. */
  get size(): number {
    return this.live().size;
  }

  /** Counters (m), hashes (k) and bits per counter of the front filter. */
  get filter(): { counters: number; hashes: number; counterBits: number } {
    return this.live().filter;
  }

  /** Closes the file and the lock; later calls fail. */
  async close(): Promise<void> {
    const dedup = this.dedup;
    if (dedup === undefined) return;
    this.dedup = undefined;
    try {
      await this.lock.run(() => this.log.close());
    } finally {
      dedup.dispose();
      await this.lock.close();
    }
  }

  /** Runs `body` under the lock on a table brought up to date with the file, and appends what it returns. */
  private decide<T>(body: (dedup: Deduplicator) => { result: T; append: Uint8Array[] }): Promise<T> {
    this.live();
    const replay = (packed: Uint8Array, removing: boolean) => {
      const dedup = this.live();
      const before = dedup.stats;
      dedup.applyFingerprints(packed, removing, false);
      const after = dedup.stats;
      this.replayed = {
        lookups: this.replayed.lookups + after.lookups - before.lookups,
        lookupsAvoided: this.replayed.lookupsAvoided + after.lookupsAvoided - before.lookupsAvoided,
        lookupsForNew: this.replayed.lookupsForNew + after.lookupsForNew - before.lookupsForNew,
      };
    };
    return this.driver.run(
      {
        // Read whole again (a failed write, another process's clear): counts start from nothing.
        clear: () => {
          const old = this.live();
          if (old.size === 0) return;
          this.carried = this.stats;
          this.replayed = { lookups: 0, lookupsAvoided: 0, lookupsForNew: 0 };
          this.dedup = this.remake();
          old.dispose();
        },
        add: (packed) => replay(packed, false),
        remove: (packed) => replay(packed, true),
      },
      async () => {
        const { result, append } = body(this.live());
        return { result, change: { append } };
      },
      { before: () => void this.live() },
    );
  }

  private live(): Deduplicator {
    if (this.dedup === undefined) throw new DisposedError("the disk deduplicator");
    return this.dedup;
  }
}

/** Drops every reference left of each key (counts[i] after a first drop), a bounded batch at a time; the fingerprints dropped, packed. */
function dropEvery(dedup: Deduplicator, packed: Uint8Array, counts: Uint32Array): Uint8Array[] {
  const dropped: Uint8Array[] = [];
  let batch = new Uint8Array(16 * DROP_BATCH);
  let n = 0;
  const flush = () => {
    const piece = batch.subarray(0, 16 * n);
    dedup.applyFingerprints(piece, true, false);
    dropped.push(piece);
    batch = new Uint8Array(16 * DROP_BATCH);
    n = 0;
  };
  // A key's last place holds what its first drop left (counts are after the batch's drops, in
  // order): what is left is dropped there, once a key.
  const done = new Set<string>();
  for (let i = counts.length - 1; i >= 0; i--) {
    const one = packed.subarray(16 * i, 16 * i + 16);
    const key = toHex(one);
    if (done.has(key)) continue;
    done.add(key);
    for (let c = counts[i]; c > 0; c--) {
      batch.set(one, 16 * n++);
      if (n === DROP_BATCH) flush();
    }
  }
  if (n > 0) flush();
  return dropped;
}

/** References dropped in one kernel call by removeMany({ all: true }). */
const DROP_BATCH = 65536;
