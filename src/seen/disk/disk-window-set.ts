// The exact windowed seen-set on disk (Node): the windowed set over a log (../log-window-set.ts)
// on one file of checksummed records (file-log.ts) under the directory's lock, so the processes
// sharing the directory each take the others' batches before deciding: exactly one of them sees a
// key as new, and a key reported new stays seen through kill -9. Closed, a file grown past twice
// what it holds is rewritten with only the keys still held (expired ones dropped) and renamed into
// place; the others read it whole.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { diskError, isStoreFile, prepareDirectory } from "./store-directory.js";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import * as check from "../../validate.js";
import { ExactWindowSet, type ExactWindowSetOptions } from "../../window/exact-window-set.js";
import { init } from "../../wasm/node.js";
import { selectFlagged } from "../../wasm/batch.js";
import { encodeRecords, encodeTimedRecords, encodeTombstones } from "../fingerprint-batches.js";
import { LogWindowSet } from "../log-window-set.js";
import type { SeenKey } from "../seen-set.js";
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
  // The options are checked before anything is made on disk.
  new ExactWindowSet(options).dispose();
  prepareDirectory(dir);
  for (const other of [LOG_FILE, REFERENCES_FILE])
    if (existsSync(join(dir, other)))
      throw new CrawlsieveError(
        "ERR_STORE",
        `${dir} holds another store (${other}), not a windowed one: open it as it was made (without a window), or use another directory`,
      );
  const path = join(dir, WINDOW_FILE);
  const lock = new FileLock(join(dir, "lock"));
  let made: DiskWindowSet | undefined;
  try {
    await lock.run(async () => {
      removeAsideFiles(path);
      if (!isStoreFile(path)) createLogFile(path, "xxh128");
    });
    if (readScheme(path) !== "xxh128")
      throw new CrawlsieveError("ERR_STORE_CORRUPT", `${path} holds other fingerprints than XXH3-128`);
    made = new DiskWindowSet(new FileLog(path, durable, opts.onRecover), lock, options);
    // Read in now: a damaged file is said at open, and the first batch is not slowed by it.
    await made.size();
    return made;
  } catch (error) {
    // Closing the set releases the lock too.
    await (made === undefined ? lock.close() : made.close()).catch(() => undefined);
    throw error;
  }
}

/** An exact windowed seen-set kept on disk and shared by the processes that open its directory. */
export class DiskWindowSet extends LogWindowSet {
  declare readonly backend: "disk";
  private readonly onRecover?: (message: string) => void;

  /** @internal Made by openDiskWindowSet. */
  constructor(
    private readonly log: FileLog,
    private readonly lock: FileLock,
    options: DiskWindowSetOptions,
  ) {
    super(options, {
      backend: "disk",
      log,
      lock: lock.run,
      storageError: diskError,
      onRecover: options.onRecover,
      release: () => lock.close(),
    });
    this.onRecover = options.onRecover;
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

  /** At close, under the lock and caught up: a file grown past twice what it holds is rewritten with only the keys still held, and the tombstones. */
  protected override beforeClose(set: ExactWindowSet): void {
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
}
