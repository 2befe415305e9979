// The persisted exact seen-set: the keys' fingerprints in a FingerprintSet in this process, and
// every batch's new (or forgotten) fingerprints appended to a BatchLog (a file on disk, an OPFS
// file, IndexedDB) shared with the other processes or contexts that open the same set. Every call
// holds the set's lock, first applies what others appended since its last call, then checks and
// inserts, and writes the batch's changes durably before its keys are reported new. So among all
// of them each key is new exactly once, and a key reported new stays seen after a crash.
import { DisposedError } from "../errors.js";
import type { Arena } from "../wasm/arena.js";
import { keyList, keySpans, packedDigests, selectFlagged, type Keys } from "../wasm/batch.js";
import { sharedEngine } from "../wasm/engine.js";
import type { BatchLog } from "./batch-log.js";
import { addFresh, encodeRecords } from "./fingerprint-batches.js";
import { type Decision, type DriverParts, LogDriver } from "./log-driver.js";
import type { ForgettingSeenSet, SeenBackend, SeenKey } from "./seen-set.js";

/** Where a persisted seen-set holds its keys: a FingerprintSet, or a table that leaves part of them in the log's file (disk/tiered-table.ts). */
export interface SeenTable {
  /** Adds packed fingerprints; 1 for each that was new. */
  addFingerprints(packed: Uint8Array): Uint8Array;
  /**
   * Adds packed fingerprints a batch of the log recorded as new (each new when it was written,
   * under the lock, after every batch before it), as the log is read; a table that leaves keys on
   * disk takes them without looking them up there. Else addFingerprints.
   */
  addLogged?(packed: Uint8Array): void;
  /** 1 for each packed fingerprint held. */
  hasFingerprints(packed: Uint8Array): Uint8Array;
  /** Forgets packed fingerprints; 1 for each that was held. */
  removeFingerprints(packed: Uint8Array): Uint8Array;
  /** Keys held. */
  readonly size: number;
  /** Forgets every key. */
  clear(): void;
  /** @internal Hands over its memory, to be reused (the disk file's compaction at close); the table is done with. */
  releaseArena(): Arena | undefined;
  /** Keys looked up on disk, blocks read for them and reads made, and the filter in front of them, for a table that leaves keys there. */
  readonly diskLookups?: {
    readonly asked: number;
    readonly blocksRead: number;
    readonly reads: number;
    readonly filterBits: number;
    readonly filterFpRate: number;
    readonly merges: number;
    readonly mergesKept: number;
    readonly partScans: number;
    readonly merging: boolean;
    readonly mergeWaits: number;
  };
}

/** What a persisted seen-set is made of. */
export interface PersistedParts extends DriverParts {
  readonly backend: SeenBackend;
  readonly log: BatchLog;
  readonly table: SeenTable;
  /** Run under the lock before the log is read: a table that leaves keys in the log's file follows a file put in its place (and may wait for its merge). */
  readonly follow?: () => void | Promise<void>;
  /** The fingerprint of a key: XXH3-128 (new sets), or MD5 (a set imported from an LMDB store). */
  readonly digest: "xxh128" | "md5";
  /** Run when the set is closed, before the lock is taken (a disk seen-set stops a merge still running). */
  readonly closing?: () => Promise<void>;
  /** Called after the log is closed (to release the lock). */
  readonly release?: () => Promise<void>;
}

/** An exact seen-set over a FingerprintSet and a BatchLog, shared through a lock. */
export class PersistedSeenSet implements ForgettingSeenSet {
  readonly exact = true;
  readonly backend: SeenBackend;
  /** Where the batches are kept ("disk", "opfs", "indexeddb"). */
  readonly storage: string;
  private table: SeenTable | undefined;
  private readonly driver: LogDriver;
  private held = 0;

  constructor(private readonly parts: PersistedParts) {
    this.backend = parts.backend;
    this.storage = parts.log.storage;
    this.table = parts.table;
    this.driver = new LogDriver(parts);
  }

  async addMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    return this.add(keyList(keys));
  }

  /**
   * Keys held after the last call, fingerprints this process took from the log after its first
   * read (written by other processes or contexts meanwhile), and for a disk set with a memory
   * budget the keys looked up on disk, the 4 KiB blocks read for them, the reads made (near
   * blocks are read at once), and the sorted part's filter: its bits a key and the share of
   * absent keys it lets through to a read (a miss reads the disk at that rate, no more), the
   * background merges installed (and those of them that kept the filter, none built), the sorted parts read whole at an open (none when the filter and
   * index saved beside the log were taken), whether a merge runs, and the batches that waited for one.
   */
  get stats(): {
    keys: number;
    fromOthers: number;
    diskLookups?: number;
    diskBlocksRead?: number;
    diskReads?: number;
    filterBitsPerKey?: number;
    filterFpRate?: number;
    diskMerges?: number;
    diskMergesKept?: number;
    diskPartScans?: number;
    diskMerging?: boolean;
    diskMergeWaits?: number;
  } {
    const disk = this.table?.diskLookups;
    return {
      keys: this.held,
      fromOthers: this.driver.others,
      ...(disk === undefined
        ? {}
        : {
            diskLookups: disk.asked,
            diskBlocksRead: disk.blocksRead,
            diskReads: disk.reads,
            filterBitsPerKey: disk.filterBits,
            filterFpRate: disk.filterFpRate,
            diskMerges: disk.merges,
            diskMergesKept: disk.mergesKept,
            diskPartScans: disk.partScans,
            diskMerging: disk.merging,
            diskMergeWaits: disk.mergeWaits,
          }),
    };
  }

  /** Adds keys given as spans of one buffer (key i = data[spans[2i] .. spans[2i + 1])); 1 where new. */
  async addSpans(data: Uint8Array, spans: ArrayLike<number>): Promise<Uint8Array> {
    return this.add(keySpans(data, spans));
  }

  /** The packed 16-byte fingerprints of keys as this set makes them (for addFingerprints; no lock taken). */
  fingerprintMany(keys: readonly SeenKey[]): Uint8Array {
    return this.fingerprints(keyList(keys));
  }

  /** The packed fingerprints of keys given as spans of one buffer. */
  fingerprintSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.fingerprints(keySpans(data, spans));
  }

  /** Adds packed fingerprints (from fingerprintMany/fingerprintSpans), committed as one batch; 1 where new. */
  async addFingerprints(packed: Uint8Array): Promise<Uint8Array> {
    return this.locked(async (table) => {
      const { flags, fresh } = addFresh(table, packed);
      if (fresh.length === 0) return { result: flags };
      return { result: flags, change: { append: [encodeRecords(fresh)] } };
    });
  }

  async hasMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    const packed = this.fingerprints(keyList(keys));
    return this.locked(async (table) => ({ result: table.hasFingerprints(packed) }));
  }

  async removeMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    const packed = this.fingerprints(keyList(keys));
    return this.locked(async (table) => {
      const flags = table.removeFingerprints(packed);
      const gone = selectFlagged(packed, flags);
      return gone.length === 0 ? { result: flags } : { result: flags, change: { append: [encodeRecords(gone, true)] } };
    });
  }

  async size(): Promise<number> {
    return this.locked(async (table) => ({ result: table.size }));
  }

  async clear(): Promise<void> {
    return this.locked(async (table) => ({ result: undefined, change: { clear: true }, after: () => table.clear() }));
  }

  async close(): Promise<void> {
    if (this.table === undefined) return;
    try {
      await this.parts.closing?.();
      await this.parts.lock(async () => {
        // The table's memory, touched already, is the disk file's to compact in.
        const spare = this.table?.releaseArena();
        this.table = undefined;
        const { log } = this.parts;
        await (log.closeWith !== undefined && spare !== undefined ? log.closeWith(spare) : log.close());
      });
    } finally {
      await this.parts.release?.();
    }
  }

  private async add(keys: Keys): Promise<Uint8Array> {
    return this.addFingerprints(this.fingerprints(keys));
  }

  /** The keys' packed 16-byte fingerprints, made before the lock is taken. */
  private fingerprints(keys: Keys): Uint8Array {
    this.live();
    return packedDigests(sharedEngine().staging, keys, this.parts.digest);
  }

  /**
   * Runs `body` under the lock on a table brought up to date with the log (log-driver.ts). When
   * the write fails, the log forgets what it read, so the next call empties the table and reloads
   * it whole: the keys of the failed batch, changed by `body`, never count as changed.
   */
  private async locked<T>(body: (table: SeenTable) => Promise<Decision<T>>): Promise<T> {
    const table = this.live();
    const result = await this.driver.run(
      {
        // A table still empty needs no clearing when the log is read whole.
        clear: () => (table.size > 0 ? table.clear() : undefined),
        add: (f) => (table.addLogged === undefined ? void table.addFingerprints(f) : table.addLogged(f)),
        remove: (f) => void table.removeFingerprints(f),
      },
      () => body(table),
      {
        before: () => {
          // Closed while this call waited for the lock.
          this.live();
          return this.parts.follow?.();
        },
      },
    );
    this.held = table.size;
    return result;
  }

  private live(): SeenTable {
    if (this.table === undefined) throw new DisposedError(this.parts.log.name);
    return this.table;
  }
}
