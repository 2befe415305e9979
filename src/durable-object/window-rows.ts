// A windowed Durable Object's log in its SQLite storage: each batch's records (the disk window's
// checksummed CSFT timed keys, CSFR removals and CSFH tombstones, fingerprint-batches.ts) appended
// as one BLOB row, read back in order by the log driver as any BatchLog. Only the object writes
// its rows, so a read after the first gives nothing new; a write is a SQLite statement, never
// torn. Rows pile up one a batch: rewrite() replaces them with the records of what is still held.
import type { BatchLog, LogRead, LogWrite } from "../seen/batch-log.js";
import type { SqlStorage } from "./workers-types.js";

/** Bytes of rows one read returns at most before it says there are more (a row is never cut). */
const PIECE_BYTES = 8 << 20;

/** The rows of one windowed object, as a BatchLog. */
export class WindowRows implements BatchLog {
  readonly storage = "durable-object";
  readonly name = "the Durable Object's window rows";
  readonly atomicWrites = true;
  /** The id of the last row read or written; -1: the next read takes every row (a reset). */
  private last = -1;
  /** Bytes given back by unread(), read first next time. */
  private pending: Uint8Array = new Uint8Array(0);
  /** Rows and bytes stored, once counted: every write of this object goes through here. */
  private counted: { rows: number; bytes: number } | undefined;
  /** What the last read returned. */
  private lastRead: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly sql: SqlStorage,
    private readonly transaction: <T>(body: () => T) => T,
  ) {
    sql.exec(
      "CREATE TABLE IF NOT EXISTS crawlsieve_window_log (id INTEGER PRIMARY KEY AUTOINCREMENT, bytes BLOB NOT NULL)",
    );
  }

  /** The rows after the last one read, in pieces of about PIECE_BYTES (`more` while rows are left). */
  async read(): Promise<LogRead> {
    const reset = this.last < 0;
    if (reset) this.pending = new Uint8Array(0);
    const parts: Uint8Array[] = this.pending.length > 0 ? [this.pending] : [];
    let bytes = this.pending.length;
    let more = false;
    for (const row of this.sql.exec(
      "SELECT id, bytes FROM crawlsieve_window_log WHERE id > ? ORDER BY id",
      Math.max(0, this.last),
    )) {
      if (bytes >= PIECE_BYTES) {
        more = true;
        break;
      }
      const part = new Uint8Array(row.bytes as ArrayBuffer);
      parts.push(part);
      bytes += part.length;
      this.last = Number(row.id);
    }
    if (this.last < 0) this.last = 0;
    this.pending = new Uint8Array(0);
    const records = new Uint8Array(bytes);
    parts.reduce((at, part) => (records.set(part, at), at + part.length), 0);
    this.lastRead = records;
    return { reset, records, more };
  }

  /** Keeps the last `bytes` of the last read for the next one (a record cut at a piece's end). */
  unread(bytes: number): void {
    this.pending = this.lastRead.slice(this.lastRead.length - bytes);
  }

  /** Clears and appends (a row is never torn, so `keep` is refused). */
  async write(change: LogWrite): Promise<void> {
    if (change.keep !== undefined)
      throw Object.assign(new Error("a SQLite row cannot be torn"), { code: "ERR_FORMAT" });
    if (change.clear === true) {
      this.sql.exec("DELETE FROM crawlsieve_window_log");
      this.last = 0;
      this.counted = { rows: 0, bytes: 0 };
    }
    if (change.append !== undefined && change.append.length > 0) this.insert(change.append);
  }

  /** The next read takes every row again. */
  async abort(): Promise<void> {
    this.last = -1;
    this.counted = undefined;
  }

  /** Nothing to release: the storage is the object's. */
  async close(): Promise<void> {}

  /** Rows stored (counted once, then kept as rows are written). */
  rows(): number {
    return this.tally().rows;
  }

  /** Bytes stored (counted once, then kept as rows are written). */
  bytes(): number {
    return this.tally().bytes;
  }

  /** Replaces every row by `rows` (whole records each), in one transaction; the next read gives nothing new. */
  rewrite(rows: readonly Uint8Array[]): void {
    try {
      this.transaction(() => {
        this.sql.exec("DELETE FROM crawlsieve_window_log");
        this.last = 0;
        this.counted = { rows: 0, bytes: 0 };
        for (const row of rows) if (row.length > 0) this.insert(row);
      });
    } catch (error) {
      // Rolled back: what was read before stands, but it is read (and counted) whole again to be sure.
      this.last = -1;
      this.counted = undefined;
      throw error;
    }
  }

  /** Appends one row and remembers its id as read. */
  private insert(bytes: Uint8Array): void {
    const blob =
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
    const before = this.tally();
    this.sql.exec("INSERT INTO crawlsieve_window_log (bytes) VALUES (?)", blob);
    this.last = Number(this.sql.exec("SELECT last_insert_rowid() AS id").one().id);
    this.counted = { rows: before.rows + 1, bytes: before.bytes + bytes.length };
  }

  /** The rows and bytes stored, counted from the table the first time. */
  private tally(): { rows: number; bytes: number } {
    this.counted ??= (() => {
      const row = this.sql
        .exec("SELECT count(*) AS n, coalesce(sum(length(bytes)), 0) AS total FROM crawlsieve_window_log")
        .one();
      return { rows: Number(row.n), bytes: Number(row.total) };
    })();
    return this.counted;
  }
}
