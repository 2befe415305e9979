// The on-disk seen-set (Node): the persisted seen-set (persisted-seen-set.ts) over one append-only
// file of checksummed batches in a directory, shared by the processes that open it through a file
// lock. Every key is looked up in memory; a batch costs one append and one fdatasync. A directory
// holding an LMDB store of an earlier version is imported once (its MD5 fingerprints kept as they
// are), so a resumed crawl keeps its past, and then retired so an LMDB-era build stops there. The
// lock file says a log was made: a log removed later is an error, not an empty store.
import { mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openLmdbStore } from "../../dedup/lmdb-store.js";
import { FingerprintSet } from "../../dedup/fingerprint-set.js";
import { isStoreFile, prepareDirectory, storeWriteError } from "../../dedup/store-directory.js";
import { CrawlsieveError, FormatError, InvalidArgumentError } from "../../errors.js";
import * as check from "../../validate.js";
import { init } from "../../wasm/node.js";
import { encodeRecords, RECORD_FINGERPRINTS } from "../fingerprint-batches.js";
import { PersistedSeenSet } from "../persisted-seen-set.js";
import { LogDriver } from "../log-driver.js";
import { createLogFile, FileLog, readScheme, removeAsideFiles } from "./file-log.js";
import { ColdKeys, coldBytes } from "./cold-keys.js";
import { exceedsBudget, roomLeft, TieredTable } from "./tiered-table.js";
import { Arena } from "../../wasm/arena.js";
import { FileLock } from "./file-lock.js";

/** Options of openDiskSeenSet. */
export interface DiskSeenSetOptions {
  /** Keys planned: sizes the table in memory (it grows past any number; a store's own size counts too). */
  readonly items?: number;
  /** true (default): each batch is flushed to disk (fdatasync) before its keys are reported new, so they survive a power loss; false: written to the kernel only (still safe through kill -9). */
  readonly durable?: boolean;
  /** Told (e.g. on stderr) when a torn last batch, never acknowledged, is cut off, or when compacting the file at close failed (it is then left as it was). */
  readonly onRecover?: (message: string) => void;
  /**
   * Bytes of memory the keys may take (at least 16 MiB). Unset (the default), every key is held in
   * memory (about 20 bytes a key). A store whose keys would take more stays on disk, sorted, the
   * way of IMP-CB: a filter (1 to 2 bytes a key) and an index of its blocks stay in memory, a key
   * the filter cannot rule out costs one 4 KiB read, and only keys added since the file was last
   * compacted are held in memory (it is compacted at open when they are too many).
   */
  readonly memory?: number;
}

/** Smallest memory budget of a disk seen-set. */
const MIN_MEMORY = 16 << 20;

/** The file of a store's batches, in its directory. */
export const LOG_FILE = "fingerprints.log";
const LMDB_FILE = "fingerprints.mdb";
const LOCK_FILE = "lock";
/** Written into the lock file once the store's log exists (old builds leave the lock file's bytes alone). */
const MADE = "a crawlsieve store: fingerprints.log was made in this directory\n";

/** Opens (or creates) the disk seen-set in directory `dir` (created with its parents when missing). */
export async function openDiskSeenSet(dir: string, options: DiskSeenSetOptions = {}): Promise<PersistedSeenSet> {
  await init();
  if (typeof dir !== "string" || dir === "") throw new InvalidArgumentError("path", dir, "a directory path");
  const opts = check.options<DiskSeenSetOptions>("options", options);
  const durable = opts.durable ?? true;
  if (typeof durable !== "boolean") throw new InvalidArgumentError("durable", opts.durable, "true or false");
  if (opts.onRecover !== undefined && typeof opts.onRecover !== "function")
    throw new InvalidArgumentError("onRecover", opts.onRecover, "a function");
  const memory =
    opts.memory === undefined
      ? undefined
      : check.integerInRange("memory", opts.memory, MIN_MEMORY, Number.MAX_SAFE_INTEGER);
  const planned = check.positiveInteger("items", opts.items ?? 4096);
  const { log, lock, digest, stored } = await openStoreLog(dir, durable, opts.onRecover);
  try {
    let table: FingerprintSet | TieredTable;
    let follow: (() => void) | undefined;
    if (memory !== undefined && exceedsBudget(stored, memory)) {
      const tiered = await lock.run(async () => new TieredTable(coldKeysOf(log, memory), planned));
      table = tiered;
      // After a failed merge, the next is tried once twice as many keys wait.
      let mergeFrom = 0;
      follow = () => {
        if (log.stale()) tiered.replaceCold(coldKeysOf(log, memory, false));
        else if (
          tiered.inMemory >= mergeFrom &&
          exceedsBudget(tiered.inMemory, roomLeft(memory, tiered.coldBytes)) &&
          !mergeInto(log, tiered, memory, opts.onRecover)
        )
          mergeFrom = 2 * tiered.inMemory;
      };
    } else {
      // Room for what the file holds, with slack: partitions fill unevenly, and one that fills grows the whole table.
      table = new FingerprintSet({ items: Math.max(planned, Math.ceil(stored * 1.05) + 1024) });
    }
    const set = new PersistedSeenSet({
      backend: "disk",
      log,
      lock: lock.run,
      release: () => lock.close(),
      table,
      follow,
      digest,
      storageError: diskError,
      onRecover: opts.onRecover,
    });
    try {
      await set.size();
    } catch (error) {
      await set.close().catch(() => undefined);
      throw error;
    }
    return set;
  } catch (error) {
    await lock.close().catch(() => undefined);
    throw error;
  }
}

/**
 * The keys of the file's sorted part, left on disk within `memory` bytes, with the log set to read
 * what came after it; first, with `compact`, the file is compacted when the keys after its sorted
 * part would not fit what the budget leaves. Called under the set's lock.
 */
function coldKeysOf(log: FileLog, memory: number, compact = true): ColdKeys | undefined {
  try {
    if (compact) {
      const { stored, unsorted } = log.keyCounts();
      if (exceedsBudget(unsorted, roomLeft(memory, coldBytes(stored, memory)))) log.compact(new Arena());
    }
    const part = log.sortedPart();
    return part === undefined ? undefined : ColdKeys.build(part, memory);
  } catch (error) {
    throw diskError(error, `opening ${log.name} past its memory budget`);
  }
}

/**
 * Merges the keys a tiered table holds in memory into the file's sorted part, once they outgrow
 * what the budget leaves them: the file is compacted (in an instance of its own) and its new
 * sorted part taken. A compaction that fails (a full disk) leaves the file as it was, and is told
 * (false): the keys stay in memory, past the budget, until a later one succeeds.
 */
function mergeInto(log: FileLog, tiered: TieredTable, memory: number, told?: (message: string) => void): boolean {
  try {
    log.compact(new Arena());
  } catch (error) {
    told?.(
      `merging ${tiered.inMemory} keys held in memory into ${log.name} failed, and they stay in memory: ${(error as Error).message}`,
    );
    return false;
  }
  tiered.replaceCold(coldKeysOf(log, memory, false));
  return true;
}

/** A store directory opened: its file of batches, the lock every batch is written under, its fingerprint and the fingerprints it holds (about: forgotten ones count). */
export interface StoreLog {
  readonly log: FileLog;
  readonly lock: FileLock;
  readonly digest: "xxh128" | "md5";
  readonly stored: number;
}

/**
 * Opens the store in `dir` (created with its parents when missing): its file is created, or an
 * LMDB store of an earlier version imported, under the lock, so two processes starting at once do
 * it once. Shared by the disk seen-set and `dedup --store`. `told` hears why a compaction at
 * close failed.
 */
export async function openStoreLog(dir: string, durable: boolean, told?: (message: string) => void): Promise<StoreLog> {
  prepareDirectory(dir);
  const path = join(dir, LOG_FILE);
  const lock = new FileLock(join(dir, LOCK_FILE));
  try {
    await lock.run(async () => {
      // A file written aside by a process killed before it renamed it (under this lock, so no one's now).
      removeAsideFiles(path);
      const lockPath = join(dir, LOCK_FILE);
      let justImported = false;
      if (!isStoreFile(path)) {
        // The lock file says a log was made here once: a log gone since is a store lost, not a new one.
        if (statSync(lockPath).size > 0)
          throw new CrawlsieveError(
            "ERR_STORE_CORRUPT",
            `${path} is missing, though ${dir} held a store (its lock file says one was made there): it was removed or moved; restore it, or empty ${lockPath} to start an empty store`,
          );
        try {
          createLogFile(path, ...startingRecords(dir));
          justImported = true;
        } catch (error) {
          throw storeWriteError(path, dir, error);
        }
      }
      if (statSync(lockPath).size === 0) writeFileSync(lockPath, MADE);
      await retireLmdb(dir, path, justImported);
    });
    const digest = readScheme(path);
    const stored = Math.max(0, Math.floor((statSync(path).size - 16) / 16));
    return { log: new FileLog(path, durable, told), lock, digest, stored };
  } catch (error) {
    await lock.close().catch(() => undefined);
    throw error;
  }
}

/**
 * An LMDB store beside the log (imported now, or by a build that left it in place) is taken in
 * once more (keys an older build added after the import; a repeat is harmless) and retired: it
 * moves to `fingerprints.mdb.imported` and a directory takes its name, which every LMDB-era build
 * refuses ("is not a file"), so a rollback or a rolling upgrade stops with an error instead of
 * printing again what this build printed. Under the lock.
 */
async function retireLmdb(dir: string, path: string, justImported: boolean): Promise<void> {
  const mdb = join(dir, LMDB_FILE);
  if (!statSync(mdb, { throwIfNoEntry: false })?.isFile()) return;
  if (!justImported) await takeInLmdb(dir, path, mdb);
  renameSync(mdb, `${mdb}.imported`);
  const lockFile = `${mdb}-lock`;
  if (statSync(lockFile, { throwIfNoEntry: false }) !== undefined) renameSync(lockFile, `${mdb}.imported-lock`);
  mkdirSync(mdb);
  writeFileSync(
    join(mdb, "README"),
    `This LMDB store was imported into ../${LOG_FILE} by crawlsieve and moved to ../${LMDB_FILE}.imported.\nThis directory stands in its place so that an older crawlsieve stops here instead of using the old store.\n`,
  );
}

/** The fingerprints of an LMDB store left beside the log by an earlier import, appended to the log once more (what an older build added since). */
async function takeInLmdb(dir: string, path: string, mdb: string): Promise<void> {
  if (readScheme(path) !== "md5")
    throw new CrawlsieveError(
      "ERR_STORE_CORRUPT",
      `${dir} holds an LMDB store (${LMDB_FILE}) beside a log of XXH3-128 fingerprints: they cannot be one store; move one away`,
    );
  const [, records] = startingRecords(dir);
  const log = new FileLog(path, true);
  const driver = new LogDriver({ log, lock: (body) => body(), storageError: diskError });
  try {
    // Appended after what the log holds, a torn tail cut first: read to its end.
    const ignore = { clear: () => undefined, add: () => undefined, remove: () => undefined };
    await driver.run(ignore, async () => ({ result: undefined, change: { append: [...(records ?? [])] } }), {
      held: true,
    });
  } catch (error) {
    throw diskError(error, `taking in the LMDB store ${mdb}`);
  } finally {
    await log.close();
  }
}

/** What a new file starts with: nothing (XXH3-128), or the fingerprints of an LMDB store of an earlier version (MD5). */
function startingRecords(dir: string): [digest: "xxh128" | "md5", records?: Iterable<Uint8Array>] {
  if (!statSync(join(dir, LMDB_FILE), { throwIfNoEntry: false })?.isFile()) return ["xxh128"];
  const store = openLmdbStore(dir, { durable: false });
  const records: Uint8Array[] = [];
  try {
    let batch = new Uint8Array(16 * RECORD_FINGERPRINTS);
    let n = 0;
    for (const fingerprint of store.fingerprints()) {
      batch.set(fingerprint, 16 * n++);
      if (n === RECORD_FINGERPRINTS) {
        records.push(encodeRecords(batch));
        batch = new Uint8Array(16 * RECORD_FINGERPRINTS);
        n = 0;
      }
    }
    if (n > 0) records.push(encodeRecords(batch.subarray(0, 16 * n)));
  } finally {
    store.close();
  }
  return ["md5", records];
}

/** A store's error as a typed one naming the file (`what` says what was being done): damage is ERR_STORE_CORRUPT. */
export function diskError(error: unknown, what: string): Error {
  if (error instanceof FormatError)
    return new CrawlsieveError(
      "ERR_STORE_CORRUPT",
      `${what}: ${error.message}; the store is damaged: move it away (or restore it) and run again`,
    );
  if (error instanceof CrawlsieveError) return error;
  return new CrawlsieveError("ERR_STORE", `${what}: ${(error as Error).message}`);
}
