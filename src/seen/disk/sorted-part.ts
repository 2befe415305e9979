// The sorted part of a compacted seen-set file (log-compaction.ts): its first `count`
// fingerprints, in table order, in full records of RECORD_FINGERPRINTS (the last one short), so
// record i lies at a fixed place and a key can be looked up without reading the file whole. The
// first fingerprint of each record is read into an index (16 bytes a record: 1,526 reads at 1e8
// keys); a key may lie only in the last record whose first fingerprint is not after it, and that
// record and the next are read, each verified (magic, count, checksum, and its first fingerprint
// against the index). Two verified neighbours bound the key, so a damaged index or record is an
// error, never a key wrongly missed. Keys are looked up a batch at a time: mark() notes the
// records they need, eachMarked() reads those in file order, neighbours in one read. The part
// holds a descriptor of its own, so the file it was read from stays readable when another process
// renames a compaction in its place.
import { closeSync } from "node:fs";
import { FormatError } from "../../errors.js";
import { readAt } from "../../files/file-range.js";
import { decodeRecords, RECORD_FINGERPRINTS } from "../fingerprint-batches.js";

/** Bytes of a full record: magic and count, its fingerprints, the checksum. */
const RECORD_BYTES = 16 * RECORD_FINGERPRINTS + 16;
/** Most records one read takes. */
const READ_RECORDS = 4;
/** Words of a fingerprint's place in table order (orderWords), most significant first: partition (the high word's top 6 bits), low word (2), the high word's other bits (2). */
export const ORDER_WORDS = 5;

/** Writes the place in table order of the fingerprint at `at` of `view` to `into` from `to` (ORDER_WORDS words). */
export function orderWords(view: DataView, at: number, into: Uint32Array, to: number): void {
  const hi = view.getUint32(at + 12, true);
  into[to] = hi >>> 26;
  into[to + 1] = view.getUint32(at + 4, true);
  into[to + 2] = view.getUint32(at, true);
  into[to + 3] = hi & 0x3ffffff;
  into[to + 4] = view.getUint32(at + 8, true);
}

/** Whether the place at `a` of `order` is after the one at `b` of `key` (ORDER_WORDS words each). */
export function placeAfter(order: Uint32Array, a: number, key: Uint32Array, b: number): boolean {
  for (let w = 0; w < ORDER_WORDS; w++) {
    if (order[a + w] !== key[b + w]) return order[a + w] > key[b + w];
  }
  return false;
}

/** How many of the `count` places in `order` (ascending, ORDER_WORDS words each) are not after `key`: the index of the first one after it. */
export function placesNotAfter(order: Uint32Array, count: number, key: Uint32Array): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (placeAfter(order, ORDER_WORDS * mid, key, 0)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The sorted part of a seen-set file, open for look-ups. */
export class SortedPart {
  /** Each record's first fingerprint as it was read (packed), and its place in table order (ORDER_WORDS a record). */
  private readonly firsts: Uint8Array;
  private readonly order: Uint32Array;
  /** Records a marked key may lie in (1), to be read by eachMarked. */
  private readonly marks: Uint8Array;
  private readonly key = new Uint32Array(ORDER_WORDS);
  /** Records read, and their fingerprints, by eachMarked. */
  recordsRead = 0;
  keysRead = 0;

  private constructor(
    private readonly fd: number,
    /** The file, as messages name it. */
    readonly where: string,
    /** Where the first record begins. */
    private readonly start: number,
    /** Fingerprints in the sorted part. */
    readonly count: number,
  ) {
    const records = Math.ceil(count / RECORD_FINGERPRINTS);
    this.firsts = new Uint8Array(16 * records);
    this.order = new Uint32Array(ORDER_WORDS * records);
    this.marks = new Uint8Array(records);
  }

  /** The sorted part of the file open as `fd` (`size` bytes), `count` fingerprints from byte `start` on; a typed error naming `where` when the file is shorter than that. */
  static read(fd: number, where: string, start: number, count: number, size: number): SortedPart {
    const part = new SortedPart(fd, where, start, count);
    if (part.end > size)
      throw new FormatError(
        `${where} is ${size} bytes, shorter than the ${count} sorted fingerprints its header counts (${part.end} bytes): it was damaged`,
        "ERR_STORE_CORRUPT",
      );
    const view = new DataView(part.firsts.buffer);
    for (let i = 0; i < part.marks.length; i++) {
      const into = part.firsts.subarray(16 * i, 16 * i + 16);
      if (readAt(fd, into, start + i * RECORD_BYTES + 8) < 16)
        throw new FormatError(`${where} ended inside its sorted part`, "ERR_TRUNCATED");
      orderWords(view, 16 * i, part.order, ORDER_WORDS * i);
    }
    return part;
  }

  /** Byte just past the sorted part: where the records appended since its compaction begin. */
  get end(): number {
    const full = Math.floor(this.count / RECORD_FINGERPRINTS);
    const rest = this.count % RECORD_FINGERPRINTS;
    return this.start + full * RECORD_BYTES + (rest > 0 ? 16 * rest + 16 : 0);
  }

  /** Records in the sorted part. */
  get records(): number {
    return this.marks.length;
  }

  /** Marks the records the fingerprints at the start of each `stride`-byte entry of `entries` may lie in (the last record whose first is not after it, and the next). */
  mark(entries: Uint8Array, stride: number): void {
    const view = new DataView(entries.buffer, entries.byteOffset, entries.byteLength);
    const records = this.marks.length;
    for (let at = 0; at + 16 <= entries.length; at += stride) {
      orderWords(view, at, this.key, 0);
      // The least record whose first fingerprint is after the key; the one before may hold it.
      const lo = placesNotAfter(this.order, records, this.key);
      if (lo > 0) this.marks[lo - 1] = 1;
      if (lo < records) this.marks[lo] = 1;
    }
  }

  /** Reads the marked records in file order, each verified, and gives their fingerprints (packed) to `visit`; the marks are cleared. */
  eachMarked(visit: (fingerprints: Uint8Array) => void): void {
    const records = this.marks.length;
    let buffer = new Uint8Array(0);
    for (let i = 0; i < records; ) {
      if (this.marks[i] === 0) {
        i++;
        continue;
      }
      let to = i + 1;
      while (to < records && to - i < READ_RECORDS && this.marks[to] === 1) to++;
      const from = this.start + i * RECORD_BYTES;
      const bytes = Math.min(this.end, this.start + to * RECORD_BYTES) - from;
      if (buffer.length < bytes) buffer = new Uint8Array(READ_RECORDS * RECORD_BYTES);
      const into = buffer.subarray(0, bytes);
      if (readAt(this.fd, into, from) < bytes)
        throw new FormatError(`${this.where} ended inside its sorted part`, "ERR_TRUNCATED");
      const { batches, torn } = this.decode(into, i);
      if (torn || batches.length !== to - i) throw this.damaged(i);
      batches.forEach((batch, j) => {
        const r = i + j;
        const expected = Math.min(RECORD_FINGERPRINTS, this.count - r * RECORD_FINGERPRINTS);
        if (batch.forget || batch.fingerprints.length !== 16 * expected || !this.startsWithFirst(batch.fingerprints, r))
          throw this.damaged(r);
        visit(batch.fingerprints);
        this.recordsRead++;
        this.keysRead += expected;
      });
      this.marks.fill(0, i, to);
      i = to;
    }
  }

  /** Marks every record (to read the part whole through eachMarked). */
  markAll(): void {
    this.marks.fill(1);
  }

  /** Reads the sorted fingerprints [from, from + n), all in one record, into `into` as they are on disk (unverified: the caller checks them against what it verified). */
  readFingerprints(from: number, n: number, into: Uint8Array): Uint8Array {
    const record = Math.floor(from / RECORD_FINGERPRINTS);
    if (n < 1 || from + n > this.count || Math.floor((from + n - 1) / RECORD_FINGERPRINTS) !== record)
      throw new RangeError(`fingerprints ${from} to ${from + n} are not in one record of ${this.count}`);
    const bytes = into.subarray(0, 16 * n);
    if (
      readAt(this.fd, bytes, this.start + record * RECORD_BYTES + 8 + 16 * (from % RECORD_FINGERPRINTS)) < bytes.length
    )
      throw new FormatError(`${this.where} ended inside its sorted part`, "ERR_TRUNCATED");
    return bytes;
  }

  /** Closes the part's descriptor. */
  close(): void {
    closeSync(this.fd);
  }

  /** Whether `fingerprints` begin with record r's first fingerprint as the index read it. */
  private startsWithFirst(fingerprints: Uint8Array, r: number): boolean {
    for (let b = 0; b < 16; b++) if (fingerprints[b] !== this.firsts[16 * r + b]) return false;
    return true;
  }

  /** The records of `bytes`, read from record `first` on, each checked; a damaged one is an error naming the file and the record. */
  private decode(bytes: Uint8Array, first: number): ReturnType<typeof decodeRecords> {
    try {
      return decodeRecords(bytes, this.where, false);
    } catch (error) {
      throw Object.assign(this.damaged(first), { cause: error });
    }
  }

  private damaged(record: number): FormatError {
    return new FormatError(
      `${this.where}: record ${record} of its sorted part (byte ${this.start + record * RECORD_BYTES}) is not the record its compaction wrote: the file was damaged`,
      "ERR_STORE_CORRUPT",
    );
  }
}
