// The embedded on-disk fingerprint store for Node: LMDB (memory-mapped B+tree, ACID
// transactions), through the lmdb package. Loaded on demand so the core never requires it.
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from "node:fs";
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
  mkdirSync(dir, { recursive: true });
  const db = lmdb.open({ path: join(dir, "fingerprints.mdb"), keyEncoding: "binary", encoding: "msgpack" });
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
