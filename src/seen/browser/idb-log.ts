// The IndexedDB store of the browser seen-set, where OPFS is missing (service workers, extension
// background workers, older browsers): the database `crawlsieve-seen:<name>` holds one row per
// batch (the same checksummed record bytes as the OPFS file) under increasing keys, and a meta row
// with the format version and the epoch (changed by clear(), so other contexts reload). Writes
// ask for "strict" durability: the transaction completes once the row is on disk.
import type { BatchLog, LogRead, LogWrite } from "./batch-log.js";

const VERSION = 1;
const SCHEME = 1;

/** The meta row. */
interface Meta {
  readonly version: number;
  readonly scheme: number;
  readonly epoch: number;
}

/** The database name of a set. */
export function idbName(name: string): string {
  return `crawlsieve-seen:${name}`;
}

/** Opens (creating) the set's database. */
export function openIdbLog(name: string): Promise<IdbLog> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(idbName(name), 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore("meta");
      request.result.createObjectStore("batches", { autoIncrement: true });
    };
    request.onsuccess = () => resolve(new IdbLog(request.result));
    request.onerror = () => reject(request.error);
    request.onblocked = () =>
      reject(
        Object.assign(new Error(`IndexedDB ${idbName(name)} is blocked by another connection`), {
          name: "BlockedError",
        }),
      );
  });
}

/** The batches of one set in IndexedDB. */
export class IdbLog implements BatchLog {
  readonly storage = "indexeddb" as const;
  readonly name = "the IndexedDB seen-set";
  readonly atomicWrites = true;
  /** The epoch last read (-1: never read) and the key of the last row read or written. */
  private epoch = -1;
  private lastKey = 0;

  constructor(private readonly db: IDBDatabase) {}

  read(): Promise<LogRead> {
    return new Promise((resolve, reject) => {
      const tx = this.db.transaction(["meta", "batches"], "readonly");
      tx.onerror = () => reject(tx.error);
      const metaRequest = tx.objectStore("meta").get("format");
      metaRequest.onsuccess = () => {
        const meta = metaRequest.result as Meta | undefined;
        if (meta !== undefined && (meta.version !== VERSION || meta.scheme !== SCHEME)) {
          return reject(
            Object.assign(
              new Error(
                `IndexedDB ${this.db.name} holds format ${meta.version}, scheme ${meta.scheme}; this build reads ${VERSION}, ${SCHEME}`,
              ),
              { code: "ERR_UNSUPPORTED_VERSION" },
            ),
          );
        }
        const epoch = meta?.epoch ?? 0;
        const reset = epoch !== this.epoch;
        const range = reset || this.lastKey === 0 ? undefined : IDBKeyRange.lowerBound(this.lastKey, true);
        const rows = tx.objectStore("batches").getAll(range);
        const keys = tx.objectStore("batches").getAllKeys(range);
        tx.oncomplete = () => {
          const values = rows.result as ArrayBuffer[];
          const records = new Uint8Array(values.reduce((n, v) => n + v.byteLength, 0));
          values.reduce((at, v) => (records.set(new Uint8Array(v), at), at + v.byteLength), 0);
          this.epoch = epoch;
          if (keys.result.length > 0) this.lastKey = Number(keys.result[keys.result.length - 1]);
          else if (reset) this.lastKey = 0;
          resolve({ reset, records });
        };
      };
    });
  }

  write(change: LogWrite): Promise<void> {
    if (change.keep !== undefined)
      return Promise.reject(Object.assign(new Error("an IndexedDB row cannot be torn"), { code: "ERR_FORMAT" }));
    // A read-only call (hasMany, size, a batch of repeats) writes nothing: no transaction to wait for.
    if (change.clear !== true && (change.append === undefined || change.append.length === 0) && this.epoch > 0)
      return Promise.resolve();
    return new Promise((resolve, reject) => {
      const tx = this.db.transaction(["meta", "batches"], "readwrite", { durability: "strict" });
      let epoch = this.epoch;
      if (change.clear === true || epoch <= 0) {
        if (change.clear === true) tx.objectStore("batches").clear();
        epoch = newEpoch(epoch);
        tx.objectStore("meta").put({ version: VERSION, scheme: SCHEME, epoch } satisfies Meta, "format");
      }
      let key: IDBValidKey | undefined;
      if (change.append !== undefined && change.append.length > 0) {
        const added = tx.objectStore("batches").add(change.append.slice().buffer);
        added.onsuccess = () => (key = added.result);
      }
      tx.oncomplete = () => {
        this.epoch = epoch;
        if (change.clear === true) this.lastKey = 0;
        if (key !== undefined) this.lastKey = Number(key);
        resolve();
      };
      tx.onabort = () => {
        // Unsure what this context knows now: the next read takes the log whole.
        this.epoch = -1;
        reject(tx.error ?? new Error("the IndexedDB transaction was aborted"));
      };
    });
  }

  async abort(): Promise<void> {
    // The table may hold part of a read: the next read takes the log whole.
    this.epoch = -1;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** A random non-zero epoch other than `old`. */
function newEpoch(old: number): number {
  let next = old;
  while (next === old || next <= 0) next = crypto.getRandomValues(new Uint32Array(1))[0];
  return next;
}
