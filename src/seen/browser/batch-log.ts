// Where the browser seen-set's batches are kept: the one interface its two stores (an OPFS file,
// IndexedDB) offer it, and how their errors become crawlsieve's typed errors. Every call is made
// under the set's Web Lock: read() then write() (or abort()), one context at a time.
import { CrawlsieveError, StorageQuotaError } from "../../errors.js";

/** The store a browser seen-set uses. */
export type BrowserStorage = "opfs" | "indexeddb";

/** What read() found: records (concatenated, see fingerprint-batches.ts) appended since this log last read. */
export interface LogRead {
  /** True when the log was cleared or started again since the last read, or this is the first: the table must be emptied before `records` are added. */
  readonly reset: boolean;
  readonly records: Uint8Array;
}

/** The changes of one write, applied in this order, durably before the promise resolves. */
export interface LogWrite {
  /** Keep only this many bytes of what the last read returned (a torn tail is cut off). */
  readonly keep?: number;
  /** Forget every record. */
  readonly clear?: boolean;
  /** Records to append. */
  readonly append?: Uint8Array;
}

/** A set's batches in one store. */
export interface BatchLog {
  readonly storage: BrowserStorage;
  /** What was appended since the last read (by any context). */
  read(): Promise<LogRead>;
  /** Applies a write and ends what read() began. */
  write(change: LogWrite): Promise<void>;
  /** Ends what read() began without a change (after an error between the two). */
  abort(): Promise<void>;
  /** Releases the store (and the worker, if one was started). */
  close(): Promise<void>;
}

/** A store's error as crawlsieve's: a full quota is a StorageQuotaError (ERR_QUOTA); a format error keeps its code. */
export function storageError(error: unknown, what: string): Error {
  if (error instanceof CrawlsieveError) return error;
  const e = error as { name?: string; message?: string; code?: string } | undefined;
  if (e?.name === "QuotaExceededError") return new StorageQuotaError(what, error);
  if (typeof e?.code === "string" && e.code.startsWith("ERR_")) return new CrawlsieveError(e.code, `${what}: ${e.message}`);
  return new CrawlsieveError("ERR_BROWSER_STORAGE", `${what} failed: ${e?.name ?? "Error"}: ${e?.message ?? String(error)}`);
}
