// Where a persisted exact seen-set keeps its batches (a file on disk, an OPFS file, IndexedDB):
// the one interface its stores offer the seen-set (persisted-seen-set.ts). Every call is made under
// the set's lock: read() then write() (or abort()), one caller at a time.

import type { Arena } from "../wasm/arena.js";

/** What read() found: records (concatenated, see fingerprint-batches.ts) appended since this log last read. */
export interface LogRead {
  /** True when the log was cleared or started again since the last read, or this is the first: the table must be emptied before `records` are added. */
  readonly reset: boolean;
  readonly records: Uint8Array;
  /** True when the log holds more bytes after `records` (read in pieces): read again, after unread() of a record cut at the piece's end. */
  readonly more?: boolean;
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
  /** The store's kind, named in messages ("disk", "opfs", "indexeddb"). */
  readonly storage: string;
  /** How messages name this set's store (the file's path, for a file). */
  readonly name: string;
  /** True when a write is never left half done (a database row): a torn record is then corruption, not a stopped write. */
  readonly atomicWrites: boolean;
  /** What was appended since the last read (by any process or context). */
  read(): Promise<LogRead>;
  /** Applies a write and ends what read() began. */
  write(change: LogWrite): Promise<void>;
  /** Gives back the last `bytes` of what read() returned (a record cut at a piece's end), for the next read. */
  unread?(bytes: number): void;
  /** Ends what read() began without a change (after an error between the two). */
  abort(): Promise<void>;
  /** Releases the store. */
  close(): Promise<void>;
  /** @internal Releases the store, which may first use `spare`, memory its caller is done with (the disk file's compaction). */
  closeWith?(spare: Arena): Promise<void>;
}
