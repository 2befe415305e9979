// The on-disk seen-set (Node): the persisted seen-set (persisted-seen-set.ts) over one append-only
// file of checksummed batches in a directory, shared by the processes that open it through a file
// lock. Every key is looked up in memory, or with a memory budget (from the first key) in a tiered
// table that merges what outgrows it into the file's sorted part in a worker thread while batches
// go on (tiered-table.ts, background-merge.ts); a batch costs one append and one fdatasync. A
// directory holding an LMDB store of an earlier version is imported once (its MD5 fingerprints kept
// as they are), so a resumed crawl keeps its past, and then retired so an LMDB-era build stops
// there. The lock file says a log was made: a log removed later is an error, not an empty store.
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FingerprintSet } from "../../exact/fingerprint-set.js";
import { diskError, isStoreFile, prepareDirectory, storeWriteError } from "./store-directory.js";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import * as check from "../../validate.js";
import { init } from "../../wasm/node.js";
import { PersistedSeenSet } from "../persisted-seen-set.js";
import { createLogFile, FileLog, readScheme, removeAsideFiles } from "./file-log.js";
import { retireLmdb, startingRecords } from "./lmdb-import.js";
import { ColdKeys, coldBytes } from "./cold-keys.js";
import { instantiateSharedKernels, newSharedMemory } from "../../wasm/shared-module.js";
import { BackgroundMerge, type MergeOutcome } from "./background-merge.js";
import { installPartIndex, partIndexPath } from "./part-index.js";
import type { SortedPart } from "./sorted-part.js";
import { exceedsBudget, heldItems, roomLeft, TieredTable } from "./tiered-table.js";
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
    let follow: (() => void | Promise<void>) | undefined;
    let closing: (() => Promise<void>) | undefined;
    if (memory !== undefined) {
      // Tiered from the first key: a store that outgrows its budget while open merges as it goes.
      // One within it is read into memory whole by its first call (its sorted part too, if any).
      let wholeFirst = !exceedsBudget(stored, memory);
      const tiered = await lock.run(
        async () =>
          new TieredTable(
            wholeFirst ? undefined : coldKeysOf(log, memory),
            Math.min(tableItems(planned, stored), heldItems(memory)),
          ),
      );
      table = tiered;
      // After a failed merge, the next is tried once twice as many keys wait.
      let mergeFrom = 0;
      let merge: BackgroundMerge | undefined;
      // The shared memory of the part a merge replaced, its filter no longer used: the next merge builds its filter there.
      let spare: WebAssembly.Memory | undefined;
      // Merges stopped (their threads ended and files removed on Node's loop), waited for at close.
      const stopping = new Set<Promise<void>>();
      const stop = (stopped: BackgroundMerge) => {
        const done: Promise<void> = stopped.cancel().finally(() => stopping.delete(done));
        stopping.add(done);
      };
      const told = opts.onRecover;
      const failed = (why: string) => {
        told?.(
          `merging ${tiered.inMemory} keys held in memory into ${log.name} failed, and they stay in memory: ${why}`,
        );
        mergeFrom = 2 * tiered.inMemory;
      };
      // A merge's thread is done: its part installed under the lock, or the keys it froze kept held.
      const settle = (done: BackgroundMerge, outcome: MergeOutcome): void => {
        merge = undefined;
        if (!outcome.ok) {
          tiered.thaw();
          stop(done);
          if (!outcome.stale) failed(outcome.message);
          return;
        }
        let part: SortedPart | undefined;
        try {
          part = log.installMerge(done.snapshot, outcome.compacted, outcome.copiedTo);
        } catch (error) {
          // installAside failed before the rename (a full disk): the file is as it was.
          rmSync(done.indexAside, { force: true });
          tiered.thaw();
          failed((error as Error).message);
          return;
        }
        if (part === undefined) {
          rmSync(done.indexAside, { force: true });
          tiered.thaw();
        } else {
          // After the part: a kill between leaves the old index, bound to the old epoch, not taken.
          installPartIndex(done.indexAside, log.path);
          // A kept filter goes on as it is, with the keys added to it since counted.
          const kept = done.keep === undefined ? undefined : tiered.filterNow;
          tiered.merged((old) => {
            if (kept !== undefined && old !== undefined)
              return ColdKeys.adopt(part, memory, { ...outcome.index, filter: kept }, old);
            if (old?.shared) spare = old.k.memory;
            return ColdKeys.adopt(part, memory, outcome.index);
          }, kept !== undefined);
        }
      };
      follow = () => {
        if (wholeFirst) {
          wholeFirst = false;
        } else if (log.stale()) {
          // Another process compacted or cleared the file: a merge of the old one is for nothing.
          if (merge !== undefined) stop(merge);
          merge = undefined;
          tiered.replaceCold((arena) => coldKeysOf(log, memory, false, arena));
        } else if (merge !== undefined) {
          const running = merge;
          const outcome = running.poll();
          if (outcome !== undefined) return settle(running, outcome);
          running.tell(log.end);
          // Keys gathering faster than a merge ends (a fast fill of a large store): past twice what
          // the budget leaves them, a batch waits for it, so memory stays bounded.
          if (exceedsBudget(tiered.inMemory, 2 * roomLeft(memory, tiered.coldBytes))) {
            tiered.waited++;
            return running.finished().then((done) => settle(running, done));
          }
        } else if (tiered.inMemory >= mergeFrom && exceedsBudget(tiered.inMemory, roomLeft(memory, tiered.coldBytes))) {
          // The part's filter kept when it has room for the keys this merge takes and for the
          // most that may gather before the next (the set adds each key to it as it comes): no
          // second filter built, and the spare one goes. A filter that must grow again soon (at
          // its floor of 8 bits a key) is built anew, in the spare memory, not in fresh memory
          // beside it. A failed or stopped merge's memory is not taken again: its thread may still be writing in it.
          const kept = tiered.filterKept(memory, heldItems(2 * roomLeft(memory, tiered.coldBytes)));
          merge =
            kept === undefined
              ? BackgroundMerge.start(log.snapshot(), memory, spare ?? newSharedMemory())
              : BackgroundMerge.start(log.snapshot(), memory, kept.memory, kept.place);
          spare = undefined;
          tiered.freeze();
        }
      };
      closing = async () => {
        if (merge !== undefined) stop(merge);
        merge = undefined;
        await Promise.all(stopping);
      };
    } else {
      table = new FingerprintSet({ items: tableItems(planned, stored) });
    }
    const set = new PersistedSeenSet({
      backend: "disk",
      log,
      lock: lock.run,
      release: () => lock.close(),
      closing,
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

/** Keys a table is first made for: those planned, or room for what the file holds with slack (partitions fill unevenly, and one that fills grows the whole table). */
function tableItems(planned: number, stored: number): number {
  return Math.max(planned, Math.ceil(stored * 1.05) + 1024);
}

/**
 * The keys of the file's sorted part, left on disk within `memory` bytes, with the log set to read
 * what came after it; first, with `compact`, the file is compacted when the keys after its sorted
 * part are more than twice what the budget leaves (what a set holds at most while a merge runs, so
 * a set closed or killed mid-merge opens without rewriting the file: its first batch starts a
 * merge in the background instead). Called under the set's lock.
 */
function coldKeysOf(log: FileLog, memory: number, compact = true, arena?: Arena): ColdKeys | undefined {
  try {
    if (compact) {
      const { stored, unsorted } = log.keyCounts();
      if (exceedsBudget(unsorted, 2 * roomLeft(memory, coldBytes(stored, memory)))) log.compact(new Arena());
    }
    const part = log.sortedPart();
    return part === undefined
      ? undefined
      : // In a shared memory, so that a merge may keep its filter (ColdKeys.keptFor).
        ColdKeys.build(part, memory, arena ?? new Arena(instantiateSharedKernels(newSharedMemory())), {
          path: partIndexPath(log.path),
          epoch: log.epochRead,
        });
  } catch (error) {
    throw diskError(error, `opening ${log.name} past its memory budget`);
  }
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
      removeAsideFiles(partIndexPath(path));
      const lockPath = join(dir, LOCK_FILE);
      let justImported = false;
      if (statSync(join(dir, "references.log"), { throwIfNoEntry: false }) !== undefined)
        throw new CrawlsieveError(
          "ERR_STORE",
          `${dir} holds a disk deduplicator's references (references.log), not a seen-set: open it with openDiskDeduplicator, or use another directory`,
        );
      if (!isStoreFile(path)) {
        // The lock file says a log was made here once: a log gone since is a store lost, not a new one.
        if (statSync(lockPath).size > 0)
          throw new CrawlsieveError(
            "ERR_STORE_CORRUPT",
            `${path} is missing, though ${dir} held a store (its lock file says one was made there): it was removed or moved; restore it, or empty ${lockPath} to start an empty store`,
          );
        try {
          createLogFile(path, ...startingRecords(dir, false));
          justImported = true;
        } catch (error) {
          throw storeWriteError(path, dir, error);
        }
      }
      if (statSync(lockPath).size === 0) writeFileSync(lockPath, MADE);
      await retireLmdb(dir, path, justImported, false);
    });
    const digest = readScheme(path);
    const stored = Math.max(0, Math.floor((statSync(path).size - 16) / 16));
    return { log: new FileLog(path, durable, told), lock, digest, stored };
  } catch (error) {
    await lock.close().catch(() => undefined);
    throw error;
  }
}
