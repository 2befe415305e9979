// The browser seen-set's two stores (an OPFS file, IndexedDB) and how their errors become
// crawlsieve's typed errors. The interface they offer is the persisted seen-sets' (../batch-log.ts).
import { CrawlsieveError, StorageQuotaError } from "../../errors.js";
export type { BatchLog, LogRead, LogWrite } from "../batch-log.js";

/** The store a browser seen-set uses. */
export type BrowserStorage = "opfs" | "indexeddb";

/** A store's error as crawlsieve's: a full quota is a StorageQuotaError (ERR_QUOTA); a format error keeps its code. */
export function storageError(error: unknown, what: string): Error {
  if (error instanceof CrawlsieveError) return error;
  const e = error as { name?: string; message?: string; code?: string } | undefined;
  if (e?.name === "QuotaExceededError") return new StorageQuotaError(what, error);
  if (typeof e?.code === "string" && e.code.startsWith("ERR_"))
    return new CrawlsieveError(e.code, `${what}: ${e.message}`);
  return new CrawlsieveError(
    "ERR_BROWSER_STORAGE",
    `${what} failed: ${e?.name ?? "Error"}: ${e?.message ?? String(error)}`,
  );
}
