// The embedded on-disk fingerprint store for Node: LMDB (memory-mapped B+tree, ACID
// transactions), through the lmdb package. Loaded on demand so the core never requires it.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { CrawlsieveError } from "../errors.js";
import type { FingerprintStore } from "./fingerprint-store.js";

const META = Buffer.from("crawlsieve:epoch");

interface LmdbDatabase {
  get(key: Buffer): unknown;
  putSync(key: Buffer, value: unknown): void;
  removeSync(key: Buffer): void;
  transactionSync<T>(action: () => T): T;
  getKeys(options?: object): Iterable<Buffer>;
  getStats(): { entryCount: number };
  close(): Promise<void> | void;
}

/** Opens (or creates) an LMDB store in directory `dir`. */
export function openLmdbStore(dir: string): FingerprintStore {
  let lmdb: { open(options: object): LmdbDatabase };
  try {
    lmdb = createRequire(import.meta.url)("lmdb");
  } catch (error) {
    throw new CrawlsieveError("ERR_NO_LMDB", `the on-disk store needs the lmdb package (npm install lmdb): ${String(error)}`);
  }
  prepareDirectory(dir);
  const file = join(dir, "fingerprints.mdb");
  checkDataFile(file);
  let db: LmdbDatabase;
  try {
    db = lmdb.open({ path: file, keyEncoding: "binary", encoding: "msgpack" });
  } catch (error) {
    throw new CrawlsieveError("ERR_STORE", `cannot open the fingerprint store ${file}: ${String(error)}`);
  }
  const epochValue = db.get(META);
  let epoch = typeof epochValue === "number" ? epochValue : 0;
  let size = db.getStats().entryCount - (epochValue === undefined ? 0 : 1);
  return {
    get: (fingerprint) => {
      const value = db.get(Buffer.from(fingerprint.buffer, fingerprint.byteOffset, 16));
      return typeof value === "number" ? value : 0;
    },
    commit(changes, nextEpoch) {
      db.transactionSync(() => {
        for (const { fingerprint, count } of changes.values()) {
          const key = Buffer.from(fingerprint);
          const had = db.get(key) !== undefined;
          if (count === 0) {
            if (had) {
              db.removeSync(key);
              size--;
            }
          } else {
            db.putSync(key, count);
            if (!had) size++;
          }
        }
        db.putSync(META, nextEpoch);
      });
      epoch = nextEpoch;
    },
    get epoch() {
      return epoch;
    },
    get size() {
      return size;
    },
    *fingerprints() {
      for (const key of db.getKeys()) if (key.length === 16) yield new Uint8Array(key);
    },
    readSide: (name) => {
      const path = join(dir, name);
      return existsSync(path) ? new Uint8Array(readFileSync(path)) : undefined;
    },
    writeSide: (name, bytes) => {
      // Written aside and renamed, so a crash leaves the old file or the new one, never half.
      const path = join(dir, name);
      writeFileSync(path + ".tmp", bytes);
      renameSync(path + ".tmp", path);
    },
    close: () => void db.close(),
  };
}

// Creates the store's directory one level at a time (a recursive mkdir spins forever under /proc
// on Node 20) and refuses a path that is not a writable directory, with an error naming it.
function prepareDirectory(dir: string): void {
  try {
    if (!existsSync(dir)) mkdirSync(dir);
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    writeFileSync(join(dir, ".crawlsieve-write-test"), "");
  } catch (error) {
    throw new CrawlsieveError("ERR_STORE", `the store directory ${JSON.stringify(dir)} cannot be used: ${(error as Error).message}`);
  }
}

// LMDB maps its file into memory and trusts it: a file that is not an LMDB environment would
// crash the process, so its meta page is checked first (magic 0xBEEFC0DE after the page header).
const LMDB_MAGIC = 0xbeefc0de;

function checkDataFile(file: string): void {
  if (!existsSync(file)) return;
  const header = Buffer.alloc(32);
  const fd = openSync(file, "r");
  let read: number;
  try {
    read = readSync(fd, header, 0, 32, 0);
  } finally {
    closeSync(fd);
  }
  if (read === 0) return;
  const magicAt = [16, 24].find((offset) => read >= offset + 4 && header.readUInt32LE(offset) === LMDB_MAGIC);
  if (magicAt === undefined) {
    throw new CrawlsieveError("ERR_STORE_CORRUPT", `${file} is not an LMDB fingerprint store (no LMDB magic in its meta page); move it away or use another --store directory`);
  }
}
