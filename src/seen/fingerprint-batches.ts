// What the persisted exact seen-sets share (the Durable Object's SQLite rows, the browser's OPFS
// file or IndexedDB): a batch is checked and inserted into a FingerprintSet, and only the
// fingerprints it found new are written, one packed blob per batch. The blob as a checksummed
// record (for stores that can tear a write, a file) is defined here too, so every store writes
// the same bytes and a torn or corrupted tail is told apart the same way. A store that forgets
// single keys (the disk seen-set) writes the forgotten fingerprints as records of their own. A
// windowed store (disk/disk-window-set.ts) writes keys with their times, and its forgotten hosts
// and prefixes, as two more kinds of record in the same frame.
import { FingerprintSet } from "../exact/fingerprint-set.js";
import { ChecksumMismatchError, FormatError } from "../errors.js";
import { checksumBytes } from "../format/checksum.js";
import { selectFlagged } from "../wasm/batch.js";

/** The tombstones of a record of kind "tombstones" (src/window/ttl-rules.ts). */
export { decodeTombstones } from "../window/ttl-rules.js";

/** A batch after its check-and-insert: the flags (1: new) and the new fingerprints, packed in key order. */
export interface CheckedBatch {
  readonly flags: Uint8Array;
  readonly fresh: Uint8Array;
}

/** Checks and inserts packed 16-byte fingerprints; returns the flags and the new ones, which the caller must persist (or rebuild the set from its store). */
export function addFresh(set: Pick<FingerprintSet, "addFingerprints">, packed: Uint8Array): CheckedBatch {
  const flags = set.addFingerprints(packed);
  return { flags, fresh: selectFlagged(packed, flags) };
}

/** "CSFB": the magic of one record (crawlsieve fingerprint batch): fingerprints added. */
const RECORD_MAGIC = 0x42465343;
/** "CSFR": the magic of a record of fingerprints forgotten (removed). */
const FORGET_MAGIC = 0x52465343;
/** "CSFT": a record of timed keys: 20 bytes each, the fingerprint and its time (u32 LE seconds). */
const TIMED_MAGIC = 0x54465343;
/** "CSFH": a record of tombstones: its count is the bytes of the JSON [[pattern, second], ...] it holds. */
const TOMBSTONE_MAGIC = 0x48465343;
/** Bytes of one entry of each kind of record. */
const ENTRY_BYTES = new Map([
  [RECORD_MAGIC, 16],
  [FORGET_MAGIC, 16],
  [TIMED_MAGIC, 20],
  [TOMBSTONE_MAGIC, 1],
]);
/** Bytes of one timed entry: a fingerprint and its time. */
export const TIMED_ENTRY = 20;
/** Bytes before a record's fingerprints: magic, count. */
const RECORD_HEAD = 8;
/** Bytes after them: the checksum. */
const RECORD_TAIL = 8;

/** Most fingerprints one record holds: a larger batch is written as several records (1 MiB each). */
export const RECORD_FINGERPRINTS = 65_536;

/**
 * A batch as records: each the magic "CSFB" (u32 LE; "CSFR" for forgotten fingerprints, with
 * `forget`), a count n (u32 LE, at most
 * RECORD_FINGERPRINTS), n packed 16-byte XXH3-128 fingerprints, and the checksum of the format
 * (XXH64 chained, checksum.ts) over all before it, so a record cut short or changed after it was
 * written is recognised. The records of one batch are concatenated, to be written at once: into
 * `into` when it is large enough (the result is then a view of it), else into a new array.
 */
export function encodeRecords(fresh: Uint8Array, forget = false, into?: Uint8Array): Uint8Array {
  return frame(fresh, forget ? FORGET_MAGIC : RECORD_MAGIC, into);
}

/** Timed entries (TIMED_ENTRY bytes each: a fingerprint, then its time as u32 LE seconds) as records "CSFT". */
export function encodeTimedRecords(entries: Uint8Array): Uint8Array {
  return frame(entries, TIMED_MAGIC);
}

/** Tombstones ([pattern, second] pairs: a host or URL prefix forgotten, and when) as records "CSFH". */
export function encodeTombstones(tombstones: readonly (readonly [string, number])[]): Uint8Array {
  if (tombstones.length === 0) return new Uint8Array(0);
  return frame(new TextEncoder().encode(JSON.stringify(tombstones)), TOMBSTONE_MAGIC);
}

/** Entries of the record kind `magic` cut into records of at most RECORD_FINGERPRINTS entries each (a tombstone record is whole). */
function frame(fresh: Uint8Array, magic: number, into?: Uint8Array): Uint8Array {
  const size = ENTRY_BYTES.get(magic)!;
  const perRecord = magic === TOMBSTONE_MAGIC ? Math.max(1, fresh.length) : RECORD_FINGERPRINTS;
  const count = fresh.length / size;
  const records = Math.ceil(count / perRecord);
  const bytes = fresh.length + records * (RECORD_HEAD + RECORD_TAIL);
  // Into the caller's buffer when it is large enough: fresh memory is slow to touch (page faults).
  const out = into !== undefined && into.length >= bytes ? into.subarray(0, bytes) : new Uint8Array(bytes);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let r = 0, at = 0; r < records; r++) {
    const part = fresh.subarray(size * r * perRecord, size * Math.min(count, (r + 1) * perRecord));
    view.setUint32(at, magic, true);
    view.setUint32(at + 4, part.length / size, true);
    out.set(part, at + RECORD_HEAD);
    const end = at + RECORD_HEAD + part.length;
    view.setBigUint64(end, checksumBytes(0n, out.subarray(at, end)), true);
    at = end + RECORD_TAIL;
  }
  return out;
}

/** What a record holds: fingerprints added or forgotten, timed keys, or tombstones. */
export type RecordKind = "add" | "forget" | "timed" | "tombstones";

const KINDS = new Map<number, RecordKind>([
  [RECORD_MAGIC, "add"],
  [FORGET_MAGIC, "forget"],
  [TIMED_MAGIC, "timed"],
  [TOMBSTONE_MAGIC, "tombstones"],
]);

/** One record read back: its packed fingerprints, added or (`forget`) forgotten; or its entries of another kind. */
export interface RecordBatch {
  /** The record's entries: 16-byte fingerprints, timed entries (TIMED_ENTRY bytes each) or the tombstones' JSON. */
  readonly fingerprints: Uint8Array;
  readonly forget: boolean;
  readonly kind: RecordKind;
}

/** Records read back: each record's fingerprints in order, how many bytes of good records there were, and whether a torn record followed them. */
export interface DecodedRecords {
  readonly batches: RecordBatch[];
  /** Bytes of whole, verified records from the start of the input. */
  readonly goodBytes: number;
  /** True when the input ends in a record cut short (a write the browser or machine stopped): its batch was never reported new. */
  readonly torn: boolean;
}

/**
 * Reads back concatenated records. A record that runs past the end of the input, or the last
 * one when its checksum fails, or a tail of zero bytes, is a torn write: reported, not thrown,
 * since its batch was never acknowledged. A bad record with whole records after it is corruption
 * of acknowledged keys: a typed error, never a silent loss. `where` names the store in messages.
 * With `piece`, the bytes are a piece of a longer log: a record running past their end is not
 * torn but continues after them (`goodBytes` says where it began), and nothing else at the end
 * is forgiven.
 */
export function decodeRecords(bytes: Uint8Array, where: string, piece = false): DecodedRecords {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const batches: RecordBatch[] = [];
  let at = 0;
  while (at < bytes.length) {
    const left = bytes.length - at;
    if (piece && left < RECORD_HEAD + RECORD_TAIL) return { batches, goodBytes: at, torn: false };
    const magic = left < RECORD_HEAD + RECORD_TAIL ? 0 : view.getUint32(at, true);
    const kind = KINDS.get(magic);
    if (kind === undefined) {
      // In a piece, zeros up to its end may be a torn tail that goes on: decided on the last piece.
      if (bytes.subarray(at).every((b) => b === 0) || left < RECORD_HEAD + RECORD_TAIL)
        return { batches, goodBytes: at, torn: !piece };
      throw new FormatError(`${where}: no record at byte ${at} (bad magic), with ${left} bytes after it`, "ERR_FORMAT");
    }
    const count = view.getUint32(at + 4, true);
    const limit = kind === "tombstones" ? 64 * RECORD_FINGERPRINTS : RECORD_FINGERPRINTS;
    if (count > limit)
      throw new FormatError(`${where}: the record at byte ${at} declares ${count} entries`, "ERR_FORMAT");
    const end = at + RECORD_HEAD + ENTRY_BYTES.get(magic)! * count + RECORD_TAIL;
    if (end > bytes.length) return { batches, goodBytes: at, torn: !piece };
    const stored = view.getBigUint64(end - RECORD_TAIL, true);
    const computed = checksumBytes(0n, bytes.subarray(at, end - RECORD_TAIL));
    if (stored !== computed) {
      if (end === bytes.length && !piece) return { batches, goodBytes: at, torn: true };
      throw new ChecksumMismatchError(stored, computed);
    }
    batches.push({
      fingerprints: bytes.subarray(at + RECORD_HEAD, end - RECORD_TAIL),
      forget: kind === "forget",
      kind,
    });
    at = end;
  }
  return { batches, goodBytes: at, torn: false };
}

/** Records (or any byte arrays) one after another in one array, to append with one write. */
export function concatRecords(records: Iterable<Uint8Array>): Uint8Array {
  const parts = [...records];
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
