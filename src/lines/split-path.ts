// Exact line dedup once the table has left the engine's one-call kernel: spread over several
// memories (line-tables.ts), or frozen at the memory budget with the lines it cannot decide
// spilled (line-spill.ts). A batch of lines is scanned and fingerprinted in the engine's memory,
// its fingerprints answered by the tables, and the kept lines copied out by the kernels of
// assembly/line-split.ts; lines not decided go to the spill with a record each, grouped by the
// low byte of the fingerprint, and are resolved at the end (resolved()).
import { CrawlsieveError, FilterTooLargeError } from "../errors.js";
import type { Arena } from "../wasm/arena.js";
import type { ArrayRegion } from "../wasm/array-region.js";
import type { BatchRegions, LineTables } from "./line-tables.js";
import type { LineSpill } from "./line-spill.js";
import { selectFlagged } from "../wasm/batch.js";
import { KeySieve } from "./key-sieve.js";
import type { KeyedBatch } from "./keyed-batch.js";

/** Regions of the engine's memory the split path works in, besides the batch's. */
export interface SplitRegions extends BatchRegions {
  readonly records: ArrayRegion;
  readonly spillBytes: ArrayRegion;
  /** The spill region's length (one u32), and where a scan ended (one u32). */
  readonly spillLen: ArrayRegion;
  readonly scanEnd: ArrayRegion;
  /** Spill indexes kept from a batch of records (f64). */
  readonly kept: ArrayRegion;
  readonly spillRecords: ArrayRegion;
  readonly spillGrouped: ArrayRegion;
}

/** Bits of the spill's partition: the low byte of the fingerprint's low word. */
const SPILL_BITS = 8;
/** The spill index of a store's key set aside (spillKeys), and of a key it forgot: never a line's. */
const STORED = -1;
const FORGOTTEN = -2;

/** The batch-at-a-time path of exact line dedup. */
export class SplitPath {
  /** Lines spilled so far (the next spill index). */
  spilled = 0;
  /** Spilled lines kept at the end (first occurrences). */
  keptSpilled = 0;

  constructor(
    private readonly arena: Arena,
    private readonly ctx: number,
    private readonly r: SplitRegions,
    readonly tables: LineTables,
    private readonly spill: LineSpill | undefined,
    private readonly batch: number,
    /** Called before a batch's kept lines are emitted: room for that many fingerprints in the fresh region (dedup --store). */
    private readonly freshRoom: (n: number) => void,
    /** Makes the spill a store's keys wait in until the end (dedup --store past the budget). */
    private readonly keySpill?: () => LineSpill,
    /** Every line found new is spilled (and still taken into the tables, so its repeats are not): a store too large for the budget decides them all at the end. */
    private readonly defer = false,
    /** A keyed dedup's key cutter: the lines' keys are fingerprinted instead of the lines. */
    private readonly keyed?: KeyedBatch,
  ) {}

  /** The filter a store's keys pass before they are set aside (sieveKeys). */
  private sieve: KeySieve | undefined;
  /** A store's keys read at the end (spillKeys), and those set aside. */
  keysRead = 0;
  keysSetAside = 0;

  /** A store's keys (and keys it forgot), in the store's order, each partition read before its spilled lines are resolved (see spillKeys). */
  private keys: LineSpill | undefined;
  /** Told the fingerprints of the kept spilled lines a window of output at a time, before any line of it is given back: a store makes them durable before they are printed. */
  onKept: ((fingerprints: readonly Uint8Array[]) => void) | undefined;

  /**
   * Sets packed fingerprints aside as a store's keys (`forget`: keys it forgot), to be taken into
   * each partition's tables before its spilled lines are resolved: past the budget a store's keys
   * cannot all stay in memory, and lines not found in the frozen tables may be among them.
   */
  spillKeys(packed: Uint8Array, forget: boolean): void {
    const k = this.arena.k;
    const r = this.r;
    const size = r.spillRecords.size;
    this.keys ??= this.keySpill?.();
    if (this.keys === undefined) throw noSpill();
    this.keysRead += packed.length / 16;
    for (let at = 0; at < packed.length; at += 16 * this.batch) {
      const piece = packed.subarray(at, Math.min(packed.length, at + 16 * this.batch));
      const kept = this.sieve?.sieve(piece) ?? piece;
      const n = kept.length / 16;
      if (n === 0) continue;
      this.keysSetAside += n;
      // Records of fingerprint and index, made in place: the fingerprints spread out, then the index of each.
      r.digests.copyIn(this.arena.u8, kept);
      k.gather(r.digests.ptr, n, 16, r.spillRecords.ptr, size, 16);
      const indexes = r.spillRecords.view(this.arena.u8, Float64Array, 0, n);
      const step = size / 8;
      for (let i = k.SPILL_RECORD_INDEX.value / 8; i < indexes.length; i += step)
        indexes[i] = forget ? FORGOTTEN : STORED;
      k.groupBy(r.spillRecords.ptr, n, size, 0, 0, SPILL_BITS, r.spillGrouped.ptr, r.perm.ptr, r.starts.ptr);
      const u8 = this.arena.u8;
      this.keys.append(
        new Uint8Array(0),
        r.spillGrouped.bytes(u8, 0, n),
        r.starts.view(u8, Uint32Array, 0, this.keys.partitions + 1),
      );
    }
  }

  /**
   * Fills a filter with the spilled lines' fingerprints, in the largest table's memory (free from
   * now until the resolution clears it; a memory of its own when that is too small), so that
   * spillKeys sets aside only a store's keys that may equal one of them (key-sieve.ts). False,
   * and every key set aside, when it has too little room.
   */
  sieveKeys(): boolean {
    const spill = this.spill;
    if (spill === undefined || this.spilled === 0) return false;
    const size = this.r.spillRecords.size;
    const sieve = KeySieve.over(
      this.tables.spareMemory(KeySieve.bytesFor(this.spilled, this.batch, size)),
      this.spilled,
      this.batch,
      size,
    );
    if (sieve === undefined) return false;
    this.eachSpilled((chunk) => sieve.add(chunk, size));
    this.sieve = sieve;
    return true;
  }

  /** Shows the spilled lines' records (`size` bytes each, the fingerprint first) to `visit`, at most a batch at a time. */
  eachSpilled(visit: (records: Uint8Array, size: number) => void): void {
    const spill = this.spill;
    if (spill === undefined) return;
    const size = this.r.spillRecords.size;
    for (let p = 0; p < spill.partitions; p++) {
      if (spill.count(p) === 0) continue;
      for (const chunk of spill.records(p, this.batch, true)) visit(chunk, size);
    }
  }

  /** Removes the store keys' files, if any. */
  closeKeys(): void {
    this.keys?.close();
  }

  /** Takes partition p's store keys (spillKeys) into the emptied tables, adding and forgetting in the store's order. */
  private takeKeys(p: number): void {
    const keys = this.keys;
    if (keys === undefined || keys.count(p) === 0) return;
    const k = this.arena.k;
    const r = this.r;
    const size = r.spillRecords.size;
    for (const chunk of keys.records(p, this.batch, true)) {
      const n = chunk.length / size;
      const at = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      // Runs of added and of forgotten keys, each through the tables in one call.
      for (let from = 0; from < n; ) {
        const forget = at.getFloat64(from * size + k.SPILL_RECORD_INDEX.value, true) === FORGOTTEN;
        let to = from + 1;
        while (to < n && (at.getFloat64(to * size + k.SPILL_RECORD_INDEX.value, true) === FORGOTTEN) === forget) to++;
        r.spillRecords.copyIn(this.arena.u8, chunk.subarray(from * size, to * size));
        k.gather(r.spillRecords.ptr, to - from, size, r.digests.ptr, 16, 16);
        if (forget) this.tables.remove(to - from);
        else this.tables.probe(to - from, "resolve");
        from = to;
      }
    }
  }

  /** Works the lines of [ptr, ptr + len) (with `final`, a last line without "\n" too); returns bytes consumed. */
  work(ptr: number, len: number, final: boolean): number {
    const k = this.arena.k;
    const r = this.r;
    let done = 0;
    for (;;) {
      const n =
        k.lineScan(
          this.ctx,
          ptr + done,
          len - done,
          final ? 1 : 0,
          this.batch,
          r.records.ptr,
          this.keyed === undefined ? r.digests.ptr : 0,
          r.scanEnd.ptr,
        ) >>> 0;
      if (n === 0) return done;
      const consumed = r.scanEnd.view(this.arena.u8, Uint32Array)[0];
      const has = this.keyed?.prepare(n);
      const probed = has === undefined ? this.tables.probe(n, "dedup") : this.probeKeyed(n, has);
      const spillFrom = this.defer ? 0 : probed;
      if (spillFrom < n && this.spill === undefined) throw noSpill();
      r.spillLen.fill(this.arena.u8);
      this.freshRoom(n);
      const spilled =
        k.lineEmit(
          this.ctx,
          r.records.ptr,
          r.digests.ptr,
          r.flags.ptr,
          n,
          spillFrom,
          r.spillBytes.ptr,
          r.spillRecords.ptr,
          this.spilled,
          r.spillLen.ptr,
        ) >>> 0;
      if (spilled > 0) this.hand(spilled, r.spillLen.view(this.arena.u8, Uint32Array)[0]);
      if (this.keyed !== undefined) this.keyed.line += n;
      done += consumed;
    }
  }

  /**
   * probe() of a keyed batch in which some lines lack their key (has[i] = 0): only the others'
   * fingerprints go to the tables, packed to the front of the digest region and put back after;
   * the lines without keep the flags KeyedBatch gave them. Returns the spill's start in the batch.
   */
  private probeKeyed(n: number, has: Uint8Array, mode: "dedup" | "resolve" = "dedup"): number {
    const r = this.r;
    const places: number[] = [];
    for (let i = 0; i < n; i++) if (has[i] === 1) places.push(i);
    const u8 = this.arena.u8;
    // Copies of the batch's fingerprints and flags, to put back in line order after the probe.
    const digests = new Uint8Array(16 * n);
    digests.set(r.digests.bytes(u8, 0, n));
    const flags = new Uint8Array(n);
    flags.set(r.flags.bytes(u8, 0, n));
    // Resolving, a line kept without its key is kept again.
    if (mode === "resolve") for (let i = 0; i < n; i++) if (has[i] === 0) flags[i] = 1;
    const m = places.length;
    for (let j = 0; j < m; j++) r.digests.copyIn(u8, digests.subarray(16 * places[j], 16 * places[j] + 16), j);
    const probed = m === 0 ? 0 : this.tables.probe(m, mode);
    const answers = r.flags.bytes(this.arena.u8, 0, m).slice();
    for (let j = 0; j < m; j++) flags[places[j]] = answers[j];
    r.digests.copyIn(this.arena.u8, digests);
    r.flags.copyIn(this.arena.u8, flags);
    return probed >= m ? n : places[probed];
  }

  /**
   * Tests-and-sets the fingerprint in the digest region's first slot for a line too long for a
   * chunk: 1 new, 0 seen, 3 spilled (`bytes` gives its bytes, "\n"-terminated, for the spill;
   * called only then, and appended piece by piece, so a long line is never joined).
   */
  long(bytes: () => Iterable<Uint8Array>, count: (unique: number) => void, pass = false): number {
    const k = this.arena.k;
    // A line kept without its key (all-zero fingerprint) is not looked up: printed, or spilled where new lines are.
    const probed = pass ? (this.tables.frozen ? 0 : 1) : this.tables.probe(1, "dedup");
    const spillFrom = this.defer ? 0 : probed;
    const flag = pass ? 1 : this.arena.u8[this.r.flags.ptr];
    if (flag === 0) return (count(0), 0);
    if (spillFrom > 0) return (count(1), 1);
    if (this.spill === undefined) throw noSpill();
    count(0);
    const record = new Uint8Array(this.r.spillRecords.size);
    record.set(this.r.digests.bytes(this.arena.u8, 0, 1));
    new DataView(record.buffer).setFloat64(k.SPILL_RECORD_INDEX.value, this.spilled, true);
    const none = new Uint32Array(this.spill.partitions + 1);
    for (const piece of bytes()) this.spill.append(piece, record.subarray(0, 0), none);
    const starts = new Uint32Array(this.spill.partitions + 1);
    // The partition is the digest's first byte, as groupBy takes it (little-endian low word).
    for (let p = record[0] + 1; p < starts.length; p++) starts[p] = 1;
    this.spill.append(new Uint8Array(0), record, starts);
    this.spilled++;
    return 3;
  }

  /** Resolves the spill (first occurrence of each fingerprint, in spill order) and yields the kept lines. */
  *resolved(): Generator<Uint8Array> {
    const spill = this.spill;
    if (spill === undefined || this.spilled === 0) return;
    const k = this.arena.k;
    const r = this.r;
    const size = r.spillRecords.size;
    for (let p = 0; p < spill.partitions; p++) {
      const records = spill.count(p);
      if (records === 0) continue;
      let kept = 0;
      // First in tables sized for the partition's records; should its lines not fit (a table's
      // share larger than planned), again in the whole tables.
      for (const planned of [records, Infinity]) {
        try {
          this.tables.resolveWith(planned + (this.keys?.count(p) ?? 0));
          this.takeKeys(p);
          kept = 0;
          let first = true;
          for (const chunk of spill.records(p, this.batch)) {
            const n = chunk.length / size;
            r.spillRecords.copyIn(this.arena.u8, chunk);
            k.gather(r.spillRecords.ptr, n, size, r.digests.ptr, 16, 16);
            // A keyed dedup's lines kept without their key (all-zero fingerprints) are kept again, and not recorded.
            const has = this.keyed === undefined ? undefined : keyedOf(r.digests.bytes(this.arena.u8, 0, n));
            if (has === undefined) this.tables.probe(n, "resolve");
            else this.probeKeyed(n, has, "resolve");
            // A store's: the kept lines' fingerprints beside their indexes, in the same order, told to it as they are given back.
            const fingerprints =
              this.onKept === undefined
                ? undefined
                : selectFlagged(r.digests.bytes(this.arena.u8, 0, n), r.flags.bytes(this.arena.u8, 0, n));
            const m = k.spillKept(r.spillRecords.ptr, r.flags.ptr, n, r.kept.ptr) >>> 0;
            spill.keep(p, r.kept.view(this.arena.u8, Float64Array, 0, m).slice(), first, fingerprints);
            first = false;
            kept += m;
          }
          break;
        } catch (error) {
          if (!(error instanceof CrawlsieveError && error.code === "ERR_SPILL_TOO_LARGE") || planned === Infinity)
            throw error;
        }
      }
      this.keptSpilled += kept;
    }
    // The store hears only keys: a line kept without its key is not recorded.
    const onKept = this.onKept;
    yield* spill.output(
      onKept === undefined || this.keyed === undefined ? onKept : (pieces) => onKept(pieces.map(keyedOnly)),
    );
  }

  /** Groups a batch's spill records by partition and hands them and the spilled lines' bytes over. */
  private hand(spilled: number, bytes: number): void {
    const k = this.arena.k;
    const r = this.r;
    const spill = this.spill!;
    k.groupBy(
      r.spillRecords.ptr,
      spilled,
      r.spillRecords.size,
      0,
      0,
      SPILL_BITS,
      r.spillGrouped.ptr,
      r.perm.ptr,
      r.starts.ptr,
    );
    const u8 = this.arena.u8;
    spill.append(
      r.spillBytes.bytes(u8, 0, bytes),
      r.spillGrouped.bytes(u8, 0, spilled),
      r.starts.view(u8, Uint32Array, 0, spill.partitions + 1),
    );
    this.spilled += spilled;
  }
}

/** has[i] = 1 for each fingerprint that is not all zero (a line with its key), or undefined when every one is. */
function keyedOf(digests: Uint8Array): Uint8Array | undefined {
  const words = new Uint32Array(digests.buffer, digests.byteOffset, digests.byteLength / 4);
  let has: Uint8Array | undefined;
  for (let i = 0; i < words.length / 4; i++) {
    if ((words[4 * i] | words[4 * i + 1] | words[4 * i + 2] | words[4 * i + 3]) !== 0) continue;
    has ??= new Uint8Array(words.length / 4).fill(1);
    has[i] = 0;
  }
  return has;
}

/** Packed fingerprints without the all-zero ones (lines kept without their key). */
function keyedOnly(packed: Uint8Array): Uint8Array {
  const has = keyedOf(packed);
  if (has === undefined) return packed;
  const out = new Uint8Array(packed.length);
  let n = 0;
  for (let i = 0; i < has.length; i++) if (has[i] === 1) out.set(packed.subarray(16 * i, 16 * i + 16), 16 * n++);
  return out.subarray(0, 16 * n);
}

function noSpill(): FilterTooLargeError {
  return new FilterTooLargeError(
    0,
    "the exact line table reached its memory budget and there is no spill to disk (give more memory, or in Node a spill: fileSpill())",
  );
}
