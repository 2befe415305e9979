// A store's directory and files (the disk seen-set's log, an LMDB store): made ready before
// anything is opened in them, and their failed writes told as typed errors, the same way for both.
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve, sep } from "node:path";
import { CrawlsieveError, FormatError, StoreFullError } from "../../errors.js";

/** Creates the store's directory (and its parents) and refuses, by name, a path that is not a writable directory. */
export function prepareDirectory(dir: string): void {
  try {
    // Parents first, one level at a time. Another process may make one between a check and a
    // mkdir: EEXIST is that, not an error. (Not { recursive: true }: Node 20 loops forever on it under /proc.)
    const absolute = resolve(dir);
    const levels = absolute.split(sep).filter(Boolean);
    for (let i = 1; i <= levels.length; i++) {
      const level = sep + levels.slice(0, i).join(sep);
      if (existsSync(level)) continue;
      try {
        mkdirSync(level);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    // A real write (a read-only mount passes an access() check as root), then nothing left behind.
    const probe = join(dir, `.crawlsieve-write-test.${process.pid}`);
    writeFileSync(probe, "");
    rmSync(probe, { force: true });
  } catch (error) {
    throw new CrawlsieveError(
      "ERR_STORE",
      `the store directory ${JSON.stringify(dir)} cannot be used: ${(error as Error).message}`,
    );
  }
}

/** True when the store's file `path` exists and is a regular file; a typed error naming it when it is something else. */
export function isStoreFile(path: string): boolean {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return false;
  if (!stat.isFile())
    throw new CrawlsieveError(
      "ERR_STORE",
      `${path} is not a file (a directory or a device where the store keeps its fingerprints); move it away or use another --store directory`,
    );
  return true;
}

/**
 * A failed write to the store `where` (in directory `dir`) as a typed error: a full disk is a
 * StoreFullError (LMDB reports one as EIO, "Input/output error", so the free space is asked too).
 */
export function storeWriteError(where: string, dir: string, error: unknown): Error {
  if (error instanceof CrawlsieveError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOSPC" || code === "EDQUOT" || diskFull(dir)) return new StoreFullError(where, error);
  return new CrawlsieveError("ERR_STORE", `cannot write to the store ${where}: ${(error as Error).message}`);
}

/** True when the file system of `dir` has less than 1 MiB free for this user. */
function diskFull(dir: string): boolean {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize < 1 << 20;
  } catch {
    return false;
  }
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

// LMDB maps its file into memory and trusts it: a file that is not an LMDB environment would
// crash the process, so its meta page is checked first (magic 0xBEEFC0DE after the page header).
const LMDB_MAGIC = 0xbeefc0de;

/** Refuses, by name, a file where an LMDB store should be that has no LMDB meta page. */
export function checkDataFile(file: string): void {
  if (!isStoreFile(file)) return;
  const header = Buffer.alloc(32);
  const fd = openSync(file, "r");
  let read: number;
  try {
    read = readSync(fd, header, 0, 32, 0);
  } finally {
    closeSync(fd);
  }
  // Empty, or not written yet by a process creating it right now: LMDB's own lock serializes that.
  if (read === 0 || header.subarray(0, read).every((b) => b === 0)) return;
  const magicAt = [16, 24].find((offset) => read >= offset + 4 && header.readUInt32LE(offset) === LMDB_MAGIC);
  if (magicAt === undefined) {
    throw new CrawlsieveError(
      "ERR_STORE_CORRUPT",
      `${file} is not an LMDB fingerprint store (no LMDB magic in its meta page); move it away or use another --store directory`,
    );
  }
}
