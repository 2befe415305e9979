// The embedded on-disk fingerprint store for Node: LMDB (memory-mapped B+tree, ACID
// transactions), through the lmdb package. Loaded on demand so the core never requires it.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { checkDataFile, prepareDirectory, storeWriteError } from "../disk/store-directory.js";
import { randomBytes } from "node:crypto";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import type { FingerprintStore } from "./fingerprint-store.js";

const EPOCH = Buffer.from("crawlsieve:epoch");
const ID = Buffer.from("crawlsieve:id");

interface LmdbDatabase {
  get(key: Buffer): unknown;
  putSync(key: Buffer, value: unknown): void;
  removeSync(key: Buffer): void;
  transactionSync<T>(action: () => T): T;
  getKeys(options?: object): Iterable<Buffer>;
  getStats(): { entryCount: number };
  close(): Promise<void> | void;
}

/** Options of openLmdbStore. */
export interface LmdbStoreOptions {
  /**
   * true (default): every commit is flushed to disk (fdatasync of data, then of the meta page)
   * before it returns, so what was acknowledged survives a power loss. false: no flush at all
   * (lmdb's noSync): still safe after a process crash (kill -9), since the pages are in the
   * kernel's cache, but a power loss or kernel crash can undo the last commits.
   */
  readonly durable?: boolean;
}

/** Opens (or creates) an LMDB store in directory `dir`; several processes may use it at once. */
export function openLmdbStore(dir: string, options: LmdbStoreOptions = {}): FingerprintStore {
  let lmdb: { open(options: object): LmdbDatabase };
  try {
    lmdb = createRequire(import.meta.url)("lmdb");
  } catch (error) {
    throw new CrawlsieveError(
      "ERR_NO_LMDB",
      `the on-disk store needs the lmdb package (npm install lmdb): ${String(error)}`,
    );
  }
  const durable = options.durable ?? true;
  if (typeof durable !== "boolean") throw new InvalidArgumentError("durable", options.durable, "true or false");
  prepareDirectory(dir);
  const file = join(dir, "fingerprints.mdb");
  checkDataFile(file);
  let db: LmdbDatabase;
  try {
    db = lmdb.open({
      path: file,
      keyEncoding: "binary",
      encoding: "msgpack",
      overlappingSync: false,
      noSync: !durable,
    });
  } catch (error) {
    throw new CrawlsieveError("ERR_STORE", `cannot open the fingerprint store ${file}: ${String(error)}`);
  }
  // The identity is created once, by whichever process gets the write lock first.
  const id = db.transactionSync(() => {
    const existing = db.get(ID);
    if (typeof existing === "string") return existing;
    const fresh = randomBytes(16).toString("hex");
    db.putSync(ID, fresh);
    return fresh;
  });
  let closed = false;
  let lastSize = 0;
  const countEntries = () => db.getStats().entryCount - (db.get(EPOCH) === undefined ? 1 : 2);
  const readEpoch = () => {
    const value = db.get(EPOCH);
    return typeof value === "number" ? value : 0;
  };
  return {
    id,
    read(fingerprint) {
      const value = db.get(Buffer.from(fingerprint.buffer, fingerprint.byteOffset, 16));
      return typeof value === "number" ? value : 0;
    },
    update(decide) {
      return writing(dir, () =>
        db.transactionSync(() => {
          // Read inside the write transaction: no other process can commit until this one ends.
          const epoch = readEpoch();
          const changes = decide({
            epoch,
            get: (fingerprint) => {
              const value = db.get(Buffer.from(fingerprint.buffer, fingerprint.byteOffset, 16));
              return typeof value === "number" ? value : 0;
            },
          });
          if (changes.size === 0) return epoch;
          for (const { fingerprint, count } of changes.values()) {
            const key = Buffer.from(fingerprint);
            if (count === 0) db.removeSync(key);
            else db.putSync(key, count);
          }
          db.putSync(EPOCH, epoch + 1);
          return epoch + 1;
        }),
      );
    },
    get epoch() {
      return readEpoch();
    },
    get size() {
      // Read now, as other processes may have written; after close, the last count read. Two
      // entries are metadata once a commit happened.
      if (!closed) lastSize = countEntries();
      return lastSize;
    },
    *fingerprints() {
      // "crawlsieve:epoch" is 16 bytes too, and no fingerprint.
      for (const key of db.getKeys()) if (key.length === 16 && !EPOCH.equals(key)) yield new Uint8Array(key);
    },
    readSide: (name) => {
      const path = join(dir, name);
      return existsSync(path) ? new Uint8Array(readFileSync(path)) : undefined;
    },
    writeSide: (name, bytes) => {
      // Written aside under a name of this process's own and renamed, so a crash or a concurrent
      // writer leaves the old file or one whole new one, never a mix.
      const path = join(dir, name);
      const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
      writing(dir, () => {
        try {
          writeFileSync(aside, bytes);
          renameSync(aside, path);
        } catch (error) {
          rmSync(aside, { force: true });
          throw error;
        }
      });
    },
    close: () => {
      lastSize = countEntries();
      closed = true;
      void db.close();
    },
  };
}

/** Runs a write to the store; a failure is a typed error naming the store (storeWriteError). */
function writing<T>(dir: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    throw storeWriteError(dir, dir, error);
  }
}
