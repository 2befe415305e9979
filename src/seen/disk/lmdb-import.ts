// An LMDB store of an earlier version (fingerprints.mdb, MD5 keys with reference counts), read
// once, read-only, into a log of this build: the disk seen-set takes its keys, the disk
// deduplicator its keys with their counts. The lmdb package is optional and loaded only here,
// only then. Once taken in, the store is retired: it moves to `fingerprints.mdb.imported` and a
// directory takes its name, which every LMDB-era build refuses ("is not a file"), so a rollback
// or a rolling upgrade stops with an error instead of printing again what this build printed.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { checkDataFile, diskError } from "./store-directory.js";
import { CrawlsieveError } from "../../errors.js";
import { concatRecords, encodeRecords, RECORD_FINGERPRINTS } from "../fingerprint-batches.js";
import { LogDriver } from "../log-driver.js";

import { FileLog, readScheme } from "./file-log.js";

/** The LMDB store's file in its directory. */
export const LMDB_FILE = "fingerprints.mdb";
/** The key under which an LMDB store kept its commit epoch: not a fingerprint. */
const EPOCH_KEY = Buffer.from("crawlsieve:epoch");
/** Bytes of a log file's header: what follows it is records. */
const LOG_HEADER = 16;

interface ReadOnlyLmdb {
  getRange(options: object): Iterable<{ key: Buffer; value: unknown }>;
  close(): Promise<void> | void;
}

/**
 * What a new log starts with: nothing (XXH3-128) when `dir` holds no LMDB store, else (MD5) the
 * store's fingerprints, each once, or with `counts` as many times as its references.
 */
export function startingRecords(dir: string, counts: boolean): [digest: "xxh128" | "md5", records?: Uint8Array[]] {
  if (!statSync(join(dir, LMDB_FILE), { throwIfNoEntry: false })?.isFile()) return ["xxh128"];
  const records: Uint8Array[] = [];
  let batch = new Uint8Array(16 * RECORD_FINGERPRINTS);
  let n = 0;
  for (const { fingerprint, count } of lmdbEntries(dir)) {
    for (let c = counts ? count : 1; c > 0; c--) {
      batch.set(fingerprint, 16 * n++);
      if (n === RECORD_FINGERPRINTS) {
        records.push(encodeRecords(batch));
        batch = new Uint8Array(16 * RECORD_FINGERPRINTS);
        n = 0;
      }
    }
  }
  if (n > 0) records.push(encodeRecords(batch.subarray(0, 16 * n)));
  return ["md5", records];
}

/**
 * Retires an LMDB store beside the log at `path`, once its keys are in the log: imported now
 * (`justImported`), or left in place by a build that imported it and stopped before retiring it
 * or wrote to it since. A seen-set takes its keys in once more (a repeat is harmless); a log of
 * counts must hold exactly the import, else the two disagree and neither is trusted. Under the lock.
 */
export async function retireLmdb(dir: string, path: string, justImported: boolean, counts: boolean): Promise<void> {
  const mdb = join(dir, LMDB_FILE);
  if (!statSync(mdb, { throwIfNoEntry: false })?.isFile()) return;
  if (!justImported) {
    if (readScheme(path) !== "md5")
      throw new CrawlsieveError(
        "ERR_STORE_CORRUPT",
        `${dir} holds an LMDB store (${LMDB_FILE}) beside a log of XXH3-128 fingerprints: they cannot be one store; move one away`,
      );
    if (counts) checkImported(dir, path, mdb);
    else await takeIn(dir, path, mdb);
  }
  renameSync(mdb, `${mdb}.imported`);
  const lockFile = `${mdb}-lock`;
  if (statSync(lockFile, { throwIfNoEntry: false }) !== undefined) renameSync(lockFile, `${mdb}.imported-lock`);
  mkdirSync(mdb);
  writeFileSync(
    join(mdb, "README"),
    `This LMDB store was imported into ../${basename(path)} by crawlsieve and moved to ../${LMDB_FILE}.imported.\nThis directory stands in its place so that an older crawlsieve stops here instead of using the old store.\n`,
  );
}

/** The LMDB store's fingerprints appended to the log once more (what an older build added since the import). */
async function takeIn(dir: string, path: string, mdb: string): Promise<void> {
  const [, records] = startingRecords(dir, false);
  const log = new FileLog(path, true);
  const driver = new LogDriver({ log, lock: (body) => body(), storageError: diskError });
  try {
    // Appended after what the log holds, a torn tail cut first: read to its end.
    const ignore = { clear: () => undefined, add: () => undefined, remove: () => undefined };
    await driver.run(ignore, async () => ({ result: undefined, change: { append: records ?? [] } }), { held: true });
  } catch (error) {
    throw diskError(error, `taking in the LMDB store ${mdb}`);
  } finally {
    await log.close();
  }
}

/** A log of counts beside an LMDB store not yet retired must be the store's import, byte for byte (a crash before the retiring). */
function checkImported(dir: string, path: string, mdb: string): void {
  const [, records] = startingRecords(dir, true);
  const expected = concatRecords(records ?? []);
  const body = readFileSync(path).subarray(LOG_HEADER);
  if (body.length === expected.length && body.equals(expected)) return;
  throw new CrawlsieveError(
    "ERR_STORE_CORRUPT",
    `${dir} holds an LMDB store (${mdb}) and ${path}, which is not that store's import: the counts of one of them are not the other's; move one away`,
  );
}

/** Every fingerprint of the LMDB store in `dir` with its reference count, read-only. */
function* lmdbEntries(dir: string): Generator<{ fingerprint: Uint8Array; count: number }> {
  const file = join(dir, LMDB_FILE);
  checkDataFile(file);
  let lmdb: { open(options: object): ReadOnlyLmdb };
  try {
    lmdb = createRequire(import.meta.url)("lmdb");
  } catch (error) {
    throw new CrawlsieveError(
      "ERR_NO_LMDB",
      `${file} is an LMDB store of an earlier version; importing it needs the lmdb package once (npm install lmdb): ${String(error)}`,
    );
  }
  let db: ReadOnlyLmdb;
  try {
    db = lmdb.open({ path: file, keyEncoding: "binary", encoding: "msgpack", readOnly: true });
  } catch (error) {
    throw new CrawlsieveError("ERR_STORE", `cannot open the LMDB store ${file}: ${String(error)}`);
  }
  try {
    // Its metadata entries: "crawlsieve:id", and "crawlsieve:epoch", 16 bytes like a fingerprint.
    for (const { key, value } of db.getRange({})) {
      if (key.length === 16 && !EPOCH_KEY.equals(key))
        yield { fingerprint: new Uint8Array(key), count: typeof value === "number" ? value : 1 };
    }
  } finally {
    void db.close();
  }
}
