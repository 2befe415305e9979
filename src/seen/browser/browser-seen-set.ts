// The browser seen-set: exact, kept across reloads and browser restarts in the Origin Private File
// System (IndexedDB where OPFS is missing), shared by every tab and worker of the origin that opens
// the same name. Each context keeps the keys' fingerprints in its own FingerprintSet; every call
// holds the name's Web Lock, first adds what other contexts appended since its last call, then
// checks and inserts, and writes the batch's new fingerprints durably before its keys are
// reported new. So among all contexts each key is new exactly once.
import { FingerprintSet } from "../../dedup/fingerprint-set.js";
import { CrawlsieveError, DisposedError, FormatError, InvalidArgumentError } from "../../errors.js";
import * as check from "../../validate.js";
import { addFresh, decodeRecords, encodeRecords } from "../fingerprint-batches.js";
import type { SeenKey, SeenSet } from "../seen-set.js";
import type { BrowserSeenSpec } from "../seen-spec.js";
import { storageError, type BatchLog, type BrowserStorage, type LogWrite } from "./batch-log.js";
import { idbName, openIdbLog } from "./idb-log.js";
import { OpfsLog, startOpfsServer } from "./opfs-log.js";

/** A SeenSet kept in the browser: `storage` says where. */
export interface BrowserSeenSet extends SeenSet {
  readonly backend: "browser";
  /** "opfs" (a file in the Origin Private File System) or "indexeddb". */
  readonly storage: BrowserStorage;
}

/** The OPFS file of a set (in the folder crawlsieve/). */
function opfsFile(name: string): string {
  return `${encodeURIComponent(name)}.seen`;
}

/** Opens (or creates) the browser seen-set `spec.name`. */
export async function browserSeenSet(spec: BrowserSeenSpec): Promise<BrowserSeenSet> {
  // The OPFS file name is the name URI-encoded: kept under the 255 bytes file systems allow.
  if (typeof spec.name !== "string" || spec.name === "" || encodeURIComponent(spec.name).length > 200) throw new InvalidArgumentError("name", spec.name, "a non-empty string of at most 200 characters once URI-encoded");
  const wanted = spec.storage ?? "auto";
  if (!["auto", "opfs", "indexeddb"].includes(wanted)) throw new InvalidArgumentError("storage", spec.storage, '"auto", "opfs" or "indexeddb"');
  const items = check.positiveInteger("items", spec.items ?? 4096);
  if (typeof navigator === "undefined" || navigator.locks === undefined) {
    throw new CrawlsieveError("ERR_UNSUPPORTED", 'the "browser" seen-set needs Web Locks (navigator.locks): a browser page or worker in a secure context (https, or http on localhost/127.0.0.1)');
  }
  const log = await openLog(spec.name, wanted);
  const set = new PersistedSeenSet(log, `crawlsieve:seen:${spec.name}`, new FingerprintSet({ items }));
  try {
    await set.size();
  } catch (error) {
    await set.close();
    throw error;
  }
  return set;
}

/** The store: OPFS when wanted and usable here, else IndexedDB (for "auto"); a set already kept in the other store is refused, never split in two. */
async function openLog(name: string, wanted: "auto" | BrowserStorage): Promise<BatchLog> {
  if (wanted !== "indexeddb") {
    const started = await startOpfsServer();
    if (started !== undefined) {
      if (await idbExists(name)) {
        started.stop();
        throw mismatch(name, "indexeddb");
      }
      return new OpfsLog(opfsFile(name), started.server, started.stop);
    }
    if (wanted === "opfs") throw new CrawlsieveError("ERR_UNSUPPORTED", "this context cannot use OPFS sync access handles (a dedicated worker, or a page that may start one from a blob: URL, is needed)");
  }
  if (typeof indexedDB === "undefined") throw new CrawlsieveError("ERR_UNSUPPORTED", "this context has neither OPFS nor IndexedDB");
  if (await opfsFileExists(name)) throw mismatch(name, "opfs");
  return openIdbLog(name).catch((error) => {
    throw storageError(error, `opening IndexedDB ${idbName(name)}`);
  });
}

function mismatch(name: string, kept: BrowserStorage): CrawlsieveError {
  return new CrawlsieveError(
    "ERR_STORAGE_MISMATCH",
    `the seen-set ${JSON.stringify(name)} is kept in ${kept === "opfs" ? "OPFS" : "IndexedDB"} by another context of this origin; open it with storage: "${kept}" (two stores would report keys new twice)`,
  );
}

/** True when IndexedDB has the set's database (listed, never created by asking). */
async function idbExists(name: string): Promise<boolean> {
  if (typeof indexedDB === "undefined" || typeof indexedDB.databases !== "function") return false;
  return (await indexedDB.databases()).some((db) => db.name === idbName(name));
}

/** True when OPFS has the set's file. */
async function opfsFileExists(name: string): Promise<boolean> {
  if (typeof navigator.storage?.getDirectory !== "function") return false;
  try {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("crawlsieve");
    await dir.getFileHandle(opfsFile(name));
    return true;
  } catch {
    return false;
  }
}

/** The SeenSet over a FingerprintSet and a BatchLog. */
class PersistedSeenSet implements BrowserSeenSet {
  readonly exact = true;
  readonly backend = "browser" as const;
  readonly storage: BrowserStorage;
  private table: FingerprintSet | undefined;

  constructor(private readonly log: BatchLog, private readonly lock: string, table: FingerprintSet) {
    this.storage = log.storage;
    this.table = table;
  }

  async addMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    const packed = FingerprintSet.fingerprintMany(keys);
    return this.locked(async (table) => {
      const { flags, fresh } = addFresh(table, packed);
      if (fresh.length === 0) return { result: flags };
      return { result: flags, change: { append: encodeRecords(fresh) } };
    });
  }

  async hasMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    const packed = FingerprintSet.fingerprintMany(keys);
    return this.locked(async (table) => ({ result: table.hasFingerprints(packed) }));
  }

  async size(): Promise<number> {
    return this.locked(async (table) => ({ result: table.size }));
  }

  async clear(): Promise<void> {
    return this.locked(async (table) => ({ result: undefined, change: { clear: true }, after: () => table.clear() }));
  }

  async close(): Promise<void> {
    if (this.table === undefined) return;
    await navigator.locks.request(this.lock, async () => {
      this.table?.dispose();
      this.table = undefined;
      await this.log.close();
    });
  }

  /**
   * Runs `body` under the Web Lock on a table brought up to date with the log; writes its change
   * (with the cut of a torn tail) durably before resolving. When the write fails, the log forgets
   * what it read, so the next call empties the table and reloads it whole: the keys of the failed
   * batch, inserted by `body`, never count as seen.
   */
  private async locked<T>(body: (table: FingerprintSet) => Promise<{ result: T; change?: LogWrite; after?: () => void }>): Promise<T> {
    this.live();
    return navigator.locks.request(this.lock, async () => {
      const table = this.live();
      let keep: number | undefined;
      try {
        const read = await this.log.read();
        if (read.reset) table.clear();
        const decoded = decodeRecords(read.records, `the ${this.storage} seen-set`);
        for (const batch of decoded.batches) table.addFingerprints(batch);
        if (decoded.torn && this.storage === "indexeddb") throw new FormatError("an IndexedDB row of the seen-set is cut short", "ERR_TRUNCATED");
        if (decoded.torn) keep = decoded.goodBytes;
      } catch (error) {
        await this.log.abort();
        throw storageError(error, `reading the ${this.storage} seen-set`);
      }
      const { result, change, after } = await body(table).catch(async (error) => {
        await this.log.abort();
        throw error;
      });
      try {
        await this.log.write({ ...change, keep });
      } catch (error) {
        throw storageError(error, `writing the ${this.storage} seen-set`);
      }
      after?.();
      return result;
    }) as Promise<T>;
  }

  private live(): FingerprintSet {
    if (this.table === undefined) throw new DisposedError(`the browser seen-set`);
    return this.table;
  }
}
