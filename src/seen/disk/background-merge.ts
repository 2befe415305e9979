// A merge of a disk seen-set's keys into a new sorted part, written by a worker thread while
// batches go on (issue: no stop-the-world merges). Under the set's lock a batch takes a snapshot
// (FileLog.snapshot: the bytes this process has read and written, whole records that stay as they
// are while the file keeps its inode and epoch) and freezes the keys in memory
// (TieredTable.freeze); the thread compacts those bytes aside and builds the new part's filter and
// block index as it writes (merge-worker.ts), outside the lock, then copies on the records appended
// since as far as each later batch tells it (tell: the bytes read and written when that batch held
// the lock). Each later batch polls it without waiting (receiveMessageOnPort); the first to find it
// done installs it under the lock: the records appended since its last copy are copied on, the file
// renamed into place (FileLog.installMerge), the filter and index taken over (ColdKeys.adopt) and
// the frozen keys dropped. A batch waits for that install only: a copy of what was appended since
// the thread's last copy (a few batches), never the merge. The filter is built in a shared
// memory and used where it is: the set gives each merge the memory its last part's filter left
// (or a new one), so two filters exist at most, never a third in transit. While the set's filter
// has room for the keys a merge takes (the set adds each key to it as it comes), the merge keeps
// it: one filter, none built, and the thread only reads it to save it. The aside is
// named after this process, so another process's open spares it while this one runs
// (removeAsideFiles); a process killed mid-merge leaves it to the next open, and the store as it
// was.
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { rmSync } from "node:fs";
import type { SievePlace } from "../../lines/key-sieve.js";
import type { ColdIndexParts } from "./cold-keys.js";
import { partIndexPath } from "./part-index.js";
import { asideName, type MergeSnapshot } from "./file-log.js";
import { type Compacted, removeCompactionFiles } from "./log-compaction.js";

/** What a merge's thread is given. */
export interface MergeJob {
  readonly snapshot: MergeSnapshot;
  /** The set's memory budget: sizes the new part's filter. */
  readonly budget: number;
  /** The shared memory the thread builds the filter in (newSharedMemory, or a part's no longer used): handed back with it. */
  readonly memory: WebAssembly.Memory;
  /**
   * Set: the set's own filter, at this place of `memory`, already holds every key of the snapshot
   * and is kept (ColdKeys.keptFor): the thread builds the block index only and reads the filter,
   * to save it, while the set goes on using it and setting bits in it.
   */
  readonly keep?: SievePlace;
  /** The file it writes, renamed into place at the install. */
  readonly aside: string;
  /** Where it saves the new part's filter and index (part-index.ts), renamed in after the part. */
  readonly indexAside: string;
  /** Tests only: the thread holds its result until the test lets it go (mergeTestHooks). */
  readonly gate?: SharedArrayBuffer;
}

/** What a merge's thread hands back: the compaction written and its part's filter and index, or why there is none (`stale`: the file changed first). */
export type MergeOutcome =
  | {
      readonly ok: true;
      readonly compacted: Compacted;
      /** Byte of the old file up to which the thread copied the records appended after the snapshot. */
      readonly copiedTo: number;
      readonly index: ColdIndexParts;
    }
  | { readonly ok: false; readonly stale: boolean; readonly message: string };

/**
 * @internal Tests only: a gate every merge started from now on holds at, once written (Int32Array
 * over it: [0] becomes 1 when a merge waits, [1] set to 1 and notified lets it go); `memories`,
 * when set, gathers the memory each merge builds its filter in.
 */
export const mergeTestHooks: { gate?: SharedArrayBuffer; memories?: WebAssembly.Memory[] } = {};

const workerUrl = new URL("./merge-worker.js", import.meta.url);

/** A background merge running in a worker thread of its own. */
export class BackgroundMerge {
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private stopped: string | undefined;
  /** Where the thread saves the new part's filter and index. */
  readonly indexAside: string;

  private constructor(
    readonly snapshot: MergeSnapshot,
    private readonly aside: string,
    budget: number,
    memory: WebAssembly.Memory,
    /** The set's filter, kept (MergeJob.keep). */
    readonly keep: SievePlace | undefined,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.indexAside = asideName(partIndexPath(snapshot.path));
    const job: MergeJob = {
      snapshot,
      budget,
      memory,
      keep,
      aside,
      indexAside: this.indexAside,
      gate: mergeTestHooks.gate,
    };
    mergeTestHooks.memories?.push(memory);
    // Flags of the process are not the thread's: `node --input-type=module -e` would stop it from loading its file.
    this.worker = new Worker(workerUrl, { workerData: { job, port: port2 }, transferList: [port2], execArgv: [] });
    this.worker.on("error", (error) => {
      this.stopped = error.message;
    });
    this.worker.on("exit", (code) => {
      this.stopped ??= `its thread ended (exit code ${code}) before it handed back a result`;
    });
    // Neither keeps the process running: a process that ends mid-merge leaves the store as it was.
    this.worker.unref();
    this.port.unref();
  }

  /**
   * Starts merging the file as of `snapshot` within the memory budget `budget`, the new part's
   * filter built in the shared `memory` (no other thread may use it until the merge is done), or,
   * with `keep`, the set's filter at that place of `memory` kept as it is (MergeJob.keep).
   */
  static start(
    snapshot: MergeSnapshot,
    budget: number,
    memory: WebAssembly.Memory,
    keep?: SievePlace,
  ): BackgroundMerge {
    return new BackgroundMerge(snapshot, asideName(snapshot.path), budget, memory, keep);
  }

  /**
   * The merge's outcome once its thread is done (given once; the merge keeps nothing of it, so
   * its buffers go when the caller is done with them), else undefined: never waits.
   */
  poll(): MergeOutcome | undefined {
    const got = receiveMessageOnPort(this.port);
    let outcome = got?.message as MergeOutcome | undefined;
    if (outcome === undefined && this.stopped !== undefined)
      outcome = { ok: false, stale: false, message: this.stopped };
    if (outcome !== undefined) {
      this.port.close();
      this.worker.removeAllListeners();
    }
    return outcome;
  }

  /** The merge's outcome, once its thread is done (a batch that cannot go on without it waits; polled each millisecond or so). */
  async finished(): Promise<MergeOutcome> {
    for (;;) {
      const outcome = this.poll();
      if (outcome !== undefined) return outcome;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** Tells the thread that the file's first `bytes` are whole records this process read or wrote (under the lock): it copies them on while it runs. */
  tell(bytes: number): void {
    this.port.postMessage({ safe: bytes });
  }

  /** Stops the thread, and removes what it wrote (the install did not take it). */
  async cancel(): Promise<void> {
    this.port.close();
    await this.worker.terminate();
    removeCompactionFiles(this.aside);
    rmSync(this.indexAside, { force: true });
  }
}
