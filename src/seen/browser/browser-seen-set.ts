// The browser seen-set: exact, kept across reloads and browser restarts in the Origin Private File
// System (IndexedDB where OPFS is missing), shared by every tab and worker of the origin that opens
// the same name. Each context keeps the keys' fingerprints in its own FingerprintSet; every call
// holds the name's Web Lock, first adds what other contexts appended since its last call, then
// checks and inserts, and writes the batch's new fingerprints durably before its keys are
// reported new (persisted-seen-set.ts, as the disk seen-set). So among all contexts each key is
// new exactly once.
import { FingerprintSet } from "../../exact/fingerprint-set.js";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import * as check from "../../validate.js";
import type { LockRunner } from "../log-driver.js";
import { PersistedSeenSet } from "../persisted-seen-set.js";
import type { ForgettingSeenSet } from "../seen-set.js";
import type { BrowserSeenSpec } from "../seen-spec.js";
import { storageError, type BatchLog, type BrowserStorage } from "./batch-log.js";
import { idbName, openIdbLog } from "./idb-log.js";
import { OpfsLog, startOpfsServer } from "./opfs-log.js";

/** A SeenSet kept in the browser: `storage` says where. */
export interface BrowserSeenSet extends ForgettingSeenSet {
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
  for (const option of ["ttlMap", "semantics", "now"] as const)
    if (spec[option] !== undefined)
      throw new InvalidArgumentError(option, spec[option], `no ${option} without window (a windowed set's option)`);
  const items = check.positiveInteger("items", spec.items ?? 4096);
  const { log, lock } = await openBrowserLog(spec);
  const set = new PersistedSeenSet({
    backend: "browser",
    log,
    lock,
    table: new FingerprintSet({ items }),
    digest: "xxh128",
    storageError,
  }) as PersistedSeenSet & BrowserSeenSet;
  try {
    await set.size();
  } catch (error) {
    await set.close();
    throw error;
  }
  return set;
}

/** The store of `spec.name` (its name and storage checked) and the Web Lock every call of its set holds. */
export async function openBrowserLog(spec: BrowserSeenSpec): Promise<{ log: BatchLog; lock: LockRunner }> {
  // The OPFS file name is the name URI-encoded: kept under the 255 bytes file systems allow.
  if (typeof spec.name !== "string" || spec.name === "" || encodeURIComponent(spec.name).length > 200)
    throw new InvalidArgumentError("name", spec.name, "a non-empty string of at most 200 characters once URI-encoded");
  const wanted = spec.storage ?? "auto";
  if (!["auto", "opfs", "indexeddb"].includes(wanted))
    throw new InvalidArgumentError("storage", spec.storage, '"auto", "opfs" or "indexeddb"');
  if (typeof navigator === "undefined" || navigator.locks === undefined) {
    throw new CrawlsieveError(
      "ERR_UNSUPPORTED",
      'the "browser" seen-set needs Web Locks (navigator.locks): a browser page or worker in a secure context (https, or http on localhost/127.0.0.1)',
    );
  }
  const log = await openLog(spec.name, wanted);
  const name = `crawlsieve:seen:${spec.name}`;
  return { log, lock: (body) => navigator.locks.request(name, body) as ReturnType<typeof body> };
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
    if (wanted === "opfs")
      throw new CrawlsieveError(
        "ERR_UNSUPPORTED",
        "this context cannot use OPFS sync access handles (a dedicated worker, or a page that may start one from a blob: URL, is needed)",
      );
  }
  if (typeof indexedDB === "undefined")
    throw new CrawlsieveError("ERR_UNSUPPORTED", "this context has neither OPFS nor IndexedDB");
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
