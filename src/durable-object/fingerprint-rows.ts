// A Durable Object's fingerprints in its SQLite storage: each batch's new fingerprints appended as
// one packed BLOB row (16 bytes each), so a batch costs one row written, not one per key; small
// rows merged now and then into full ones (1 MiB), so a start reads few rows; and the shard
// number, count and window recorded on first use. With a window, each row carries the epoch (a
// sixteenth of the window) its keys were added in, merges keep epochs apart, and a whole epoch's
// rows are deleted once it has aged out.
import { CrawlsieveError } from "../index.workerd.js";
import { ROW_FINGERPRINTS, ShardCountError } from "./protocol.js";
import type { SqlStorage } from "./workers-types.js";

/** Rows below a full row that may pile up before they are merged. */
export const MERGE_AFTER = 64;

/** The stored rows of one object. */
export class FingerprintRows {
  /** Rows holding fewer than ROW_FINGERPRINTS fingerprints (the ones a merge would rewrite). */
  private partial = 0;
  /** The "shard/shards/window" already checked against the record (one read per object life, not per call). */
  private claimed: string | undefined;

  constructor(
    private readonly sql: SqlStorage,
    private readonly transaction: <T>(body: () => T) => T,
  ) {
    sql.exec("CREATE TABLE IF NOT EXISTS crawlsieve_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    sql.exec(
      "CREATE TABLE IF NOT EXISTS crawlsieve_fingerprints (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, fps BLOB NOT NULL, epoch INTEGER NOT NULL DEFAULT 0)",
    );
  }

  /** Fingerprints stored (the sum of every row's count). */
  count(): number {
    return Number(this.sql.exec("SELECT coalesce(sum(n), 0) AS total FROM crawlsieve_fingerprints").one().total);
  }

  /** Visits every stored row's packed fingerprints, oldest first. */
  each(visit: (packed: Uint8Array) => void): void {
    this.partial = 0;
    for (const row of this.sql.exec("SELECT n, fps FROM crawlsieve_fingerprints ORDER BY id")) {
      if (Number(row.n) < ROW_FINGERPRINTS) this.partial++;
      visit(new Uint8Array(row.fps as ArrayBuffer));
    }
  }

  /** Appends one row of packed fingerprints (at most ROW_FINGERPRINTS) added in `epoch`; merges small rows when they have piled up. */
  append(packed: Uint8Array, epoch = 0): void {
    if (packed.length === 0) return;
    this.sql.exec(
      "INSERT INTO crawlsieve_fingerprints (n, fps, epoch) VALUES (?, ?, ?)",
      packed.length / 16,
      blob(packed),
      epoch,
    );
    if (packed.length / 16 < ROW_FINGERPRINTS) this.partial++;
    if (this.partial > MERGE_AFTER) this.merge();
  }

  /** The oldest epoch stored, or undefined when there are no rows. */
  oldestEpoch(): number | undefined {
    const oldest = this.sql.exec("SELECT min(epoch) AS oldest FROM crawlsieve_fingerprints").one().oldest;
    return oldest === null || oldest === undefined ? undefined : Number(oldest);
  }

  /** Deletes the rows of epochs before `epoch`; how many rows went. */
  expireBefore(epoch: number): number {
    const gone = this.sql.exec("DELETE FROM crawlsieve_fingerprints WHERE epoch < ?", epoch);
    return (gone as unknown as { rowsWritten?: number }).rowsWritten ?? 0;
  }

  /** Rewrites the partial rows of each epoch as full rows and one remainder, in one transaction. */
  merge(): void {
    this.transaction(() => {
      const epochs = this.sql
        .exec("SELECT DISTINCT epoch FROM crawlsieve_fingerprints WHERE n < ?", ROW_FINGERPRINTS)
        .toArray()
        .map((row) => Number(row.epoch));
      this.partial = 0;
      for (const epoch of epochs) this.mergeEpoch(epoch);
    });
  }

  /** Merges one epoch's partial rows, holding one row being filled and one being read. */
  private mergeEpoch(epoch: number): void {
    // Ids first, then one row at a time: no statement runs while a cursor is still open.
    const ids = this.sql
      .exec("SELECT id FROM crawlsieve_fingerprints WHERE n < ? AND epoch = ? ORDER BY id", ROW_FINGERPRINTS, epoch)
      .toArray()
      .map((row) => Number(row.id));
    let buffer = new Uint8Array(16 * ROW_FINGERPRINTS);
    let filled = 0;
    for (const id of ids) {
      const packed = new Uint8Array(
        this.sql.exec("SELECT fps FROM crawlsieve_fingerprints WHERE id = ?", id).one().fps as ArrayBuffer,
      );
      for (let at = 0; at < packed.length; ) {
        const take = Math.min(packed.length - at, buffer.length - filled);
        buffer.set(packed.subarray(at, at + take), filled);
        filled += take;
        at += take;
        if (filled === buffer.length) {
          this.sql.exec(
            "INSERT INTO crawlsieve_fingerprints (n, fps, epoch) VALUES (?, ?, ?)",
            ROW_FINGERPRINTS,
            blob(buffer),
            epoch,
          );
          buffer = new Uint8Array(16 * ROW_FINGERPRINTS);
          filled = 0;
        }
      }
    }
    for (const id of ids) this.sql.exec("DELETE FROM crawlsieve_fingerprints WHERE id = ?", id);
    if (filled > 0)
      this.sql.exec(
        "INSERT INTO crawlsieve_fingerprints (n, fps, epoch) VALUES (?, ?, ?)",
        filled / 16,
        blob(buffer.subarray(0, filled)),
        epoch,
      );
    if (filled > 0) this.partial++;
  }

  /** Rows stored (for tests and the benchmark). */
  rows(): number {
    return Number(this.sql.exec("SELECT count(*) AS rows FROM crawlsieve_fingerprints").one().rows);
  }

  /** Deletes every fingerprint (the shard record stays). */
  clear(): void {
    this.sql.exec("DELETE FROM crawlsieve_fingerprints");
    this.partial = 0;
  }

  /**
   * Records this object's shard index, count, window (ms, 0 for none) and mode (0: plain, 1: the
   * exact window) on first use; afterwards refuses others: a ShardCountError, since a changed count
   * would send keys to objects that never saw them, or ERR_WINDOW_CHANGED, since stored epochs are
   * sixteenths of the first window and an exact window's rows are no plain set's.
   */
  claim(shard: number, shards: number, window = 0, mode = 0): void {
    if (this.claimed === `${shard}/${shards}/${window}/${mode}`) return;
    const recorded = new Map<string, number>();
    for (const row of this.sql.exec("SELECT key, value FROM crawlsieve_meta"))
      recorded.set(String(row.key), Number(row.value));
    const count = recorded.get("shards");
    const index = recorded.get("shard");
    const recordedWindow = recorded.get("window") ?? 0;
    const recordedMode = recorded.get("mode") ?? 0;
    if (count === undefined || index === undefined) {
      this.sql.exec(
        "INSERT OR REPLACE INTO crawlsieve_meta (key, value) VALUES ('shards', ?), ('shard', ?), ('window', ?), ('mode', ?)",
        shards,
        shard,
        window,
        mode,
      );
    } else if (count !== shards) {
      throw new ShardCountError(
        `this seen-set was created with ${count} shards; it cannot be opened with ${shards} (a changed count would lose keys)`,
        count,
        shards,
      );
    } else if (index !== shard) {
      throw new ShardCountError(`this object is shard ${index}, not shard ${shard}`, index, shard);
    } else if (recordedMode !== mode) {
      throw new CrawlsieveError(
        "ERR_WINDOW_CHANGED",
        recordedMode === 1
          ? "this seen-set was created as an exact window (durableWindowSet); open it with durableWindowSet"
          : "this seen-set was created without an exact window (durableSeenSet); open it with durableSeenSet",
      );
    } else if (recordedWindow !== window) {
      throw new CrawlsieveError(
        "ERR_WINDOW_CHANGED",
        `this seen-set was created with a window of ${recordedWindow} ms; it cannot be opened with ${window} ms`,
      );
    }
    this.claimed = `${shard}/${shards}/${window}/${mode}`;
  }
}

/** The exact bytes of a view as an ArrayBuffer, the type SQLite bindings take for a BLOB. */
function blob(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (bytes.slice().buffer as ArrayBuffer);
}
