// One WebAssembly instance that dedups lines chunk by chunk (assembly/line-dedup.ts): the context
// block (line-context.ts), two input slots (one is read into while the other is worked), two output
// regions (one is written out while the other fills) and the seen-set, which lies last so it can
// grow in place. Exact mode keeps fingerprints in a bucketed table of compact slots
// (assembly/fingerprint-buckets.ts, src/exact/bucket-table.ts) that grows by 1.5x, by 1.2x from 1 GiB, one
// partition at a time. Approximate mode starts with a table of wide slots, exact and small enough
// to stay in cache, and when it fills moves its fingerprints into the first split-block Bloom
// filter (assembly/split-block.ts: one cache line and one SIMD test a line), sized from the lines
// still expected when known (stage-plan.ts); later stages, if any, are added without rehashing,
// the compound rate staying under fpRate.
// Exact mode under a memory budget: when the table can grow no further in this memory (4 GiB, or
// the budget), it is sealed and new keys go to tables in other memories (line-tables.ts), the
// engine working batches on the split path (split-path.ts); past the budget the tables freeze and
// lines not found in them are spilled (line-spill.ts) and resolved at the end.
import { CrawlsieveError, FilterTooLargeError } from "../errors.js";
import { optimalSplitBlockBloom } from "../sizing/bloom.js";
import { MAX_ARENA_BYTES, type Arena } from "../wasm/arena.js";
import { bucketsFor, COMPACT, LOG_PARTS, PARTS, partitionLimit, type SlotLayout, WIDE } from "../wasm/bucket-layout.js";
import { giveBackArena, takeArena } from "../wasm/arena-pool.js";
import { array, ArrayRegion } from "../wasm/array-region.js";
import type { KernelRecord } from "../wasm/record.js";
import { lineContext, lineSizes, stageRecord, type LineField } from "./line-context.js";
import { LongLineHasher } from "./long-line.js";
import { FIRST_STAGE_ITEMS, planStage } from "./stage-plan.js";
import { layOut } from "../wasm/regions.js";
import { LineTables } from "./line-tables.js";
import type { LineSpill, LineSpillFactory } from "./line-spill.js";
import { SplitPath } from "./split-path.js";
import { joinPieces } from "./join-pieces.js";
import { grownBuckets } from "../exact/bucket-table.js";
import { KeyedBatch } from "./keyed-batch.js";
import type { LineKeys } from "./keys/line-keys.js";

/** Fingerprints of the exact table: XXH3-128 (fast) or MD5. */
export type LineHash = "xxh128" | "md5";

/** Geometry and mode of a LineEngine. */
export interface LineEngineOptions {
  /** Exact (a fingerprint table) or approximate (split-block Bloom filters). */
  readonly mode: "exact" | "approx";
  readonly hash: LineHash;
  /** approx: the compound false-positive rate. */
  readonly fpRate: number;
  /** approx: distinct lines planned; one filter of that size (no growth) when given. */
  readonly items?: number;
  /** Bytes of each input slot after its head room. */
  readonly chunkBytes: number;
  /** Head room before the slot's data, where a line's beginning is carried. */
  readonly headBytes: number;
  /** Scalar newline scan instead of SIMD (tests run both). */
  readonly scalar?: boolean;
  /** approx without items: keys planned for the first stage (default 2^20; tests use small ones). */
  readonly stageItems?: number;
  /** exact: bytes all WebAssembly memories and spill buffers may take together (default: no limit but the platform's). */
  readonly memory?: number;
  /** exact: most bytes of one WebAssembly memory (default: 4 GiB less a page; tests use small ones to spread early). */
  readonly perMemory?: number;
  /** exact: where lines go once the budget is reached (without one, reaching it is an error). */
  readonly spill?: LineSpillFactory;
  /** exact: keep the fingerprint of every new line for the caller to persist (see freshDigests; a store on disk). */
  readonly fresh?: boolean;
  /** exact: keys the table is sized for at the start (a store's own keys); it grows past them. */
  readonly tableItems?: number;
  /** exact, with a spill: every line found new is spilled, to be decided at the end (a store larger than the budget). */
  readonly deferNew?: boolean;
  /** Lines are compared by these keys (a field, a JSON value, a canonical URL), not by their bytes; the line is printed as it came. */
  readonly keys?: LineKeys;
}

const NEWLINE = Uint8Array.of(0x0a);

/** A long line's bytes, "\n"-terminated (one is added to a last line without it), for the spill. */
function lineBytes(pieces: readonly Uint8Array[], terminated: boolean): readonly Uint8Array[] {
  return terminated ? pieces : [...pieces, NEWLINE];
}

/** Lines of one batch of the split path. */
const SPLIT_BATCH = 8192;
/** Fingerprints the fresh region holds (dedup --store): a split batch's, and more than a kernel group's. */
const FRESH_ROOM = 2 * SPLIT_BATCH;

const MAX_STAGES = 32;
const FIRST_BUCKETS = 4;

/** A chunk-at-a-time line deduplicator over one WebAssembly instance. */
export class LineEngine {
  readonly arena: Arena;
  readonly options: LineEngineOptions;
  /** The two input slots: head room (a carried line's beginning) then a chunk's data, at byte headBytes. */
  readonly inputs: readonly [ArrayRegion, ArrayRegion];
  /** The two output regions: kept lines, coalesced; the kernel fills one while the other's bytes may still be being written. */
  private readonly outs: readonly [ArrayRegion, ArrayRegion];
  /** Which output region the kernel appends to. */
  private outSlot: 0 | 1 = 0;
  /** The context block the kernels read their state from. */
  private readonly ctx: KernelRecord<LineField>;
  private readonly digestPtr: number;
  /** The Bloom stages' records (stageRecord says their fields). */
  private readonly stageRecords: ArrayRegion;
  private readonly seenPtr: number;
  private buckets = FIRST_BUCKETS;
  private stages = 0;
  private seenEnd: number;
  private long: LongLineHasher | undefined;
  /** Where the first filter stage begins (approx; after the exact phase's table, when there was one). */
  private filtersPtr = 0;
  /** Regions of the split path, in this memory before the table. */
  private readonly split: ConstructorParameters<typeof SplitPath>[2];
  /** The split path, once the table has left the one-call kernel (spread or frozen). */
  private path: SplitPath | undefined;
  private readonly spill: LineSpill | undefined;
  /** Where the fingerprints of new lines are kept for the caller (empty unless options.fresh). */
  private readonly fresh: ArrayRegion;
  /** Fingerprints of new lines moved out of a full fresh region, in order, until clearFresh(). */
  private freshAside: Uint8Array[] = [];
  /** A keyed dedup's key cutter (options.keys). */
  readonly keyed: KeyedBatch | undefined;

  constructor(options: LineEngineOptions) {
    this.options = options;
    const arena = takeArena();
    this.arena = arena;
    const sizes = lineSizes(arena.k);
    const { headBytes, chunkBytes } = options;
    const exact = options.mode === "exact";
    const keyed = options.keys !== undefined;
    // Regions of a batch of scanned lines: the split path's (exact), and every keyed dedup's.
    const batch = exact || keyed ? SPLIT_BATCH : 0;
    // The seen-set lies last: it grows in place. Each input slot's head room lies just before its
    // data; an output region holds at most a carried head, a chunk and the "\n" added to a last line.
    const r = arena.place(
      {
        ctx: sizes.context,
        scratch: sizes.scratch,
        digest: 16,
        stages: array(sizes.stage, MAX_STAGES),
        counts: 4 * PARTS,
        in0: array(1, headBytes + chunkBytes),
        in1: array(1, headBytes + chunkBytes),
        out0: array(headBytes + chunkBytes + 64, 1),
        out1: array(headBytes + chunkBytes + 64, 1),
        records: array(arena.k.SPLIT_LINE_BYTES.value, batch),
        digests: array(16, batch),
        grouped: array(16, exact ? SPLIT_BATCH : 0),
        perm: array(4, exact ? SPLIT_BATCH : 0),
        starts: array(4, 257),
        gflags: array(1, exact ? SPLIT_BATCH : 0),
        absent: array(16, exact ? SPLIT_BATCH : 0),
        absentAt: array(4, exact ? SPLIT_BATCH : 0),
        flags: array(1, batch),
        keySpans: array(8, keyed ? SPLIT_BATCH : 0),
        // Decoded or canonical keys of a batch: past this they are fingerprinted a fill at a time.
        keyBytes: array(1, keyed ? 2 * (headBytes + chunkBytes) : 0),
        spillLen: array(4, 1),
        scanEnd: array(4, 1),
        kept: array(8, exact ? SPLIT_BATCH : 0),
        spillBytes: array(1, exact ? headBytes + chunkBytes + 64 : 0),
        spillRecords: array(arena.k.SPILL_RECORD_BYTES.value, exact ? SPLIT_BATCH : 0),
        spillGrouped: array(arena.k.SPILL_RECORD_BYTES.value, exact ? SPLIT_BATCH : 0),
        fresh: array(16, exact && options.fresh ? FRESH_ROOM : 0),
        seen: 0,
      },
      arena.base,
      "the line deduplicator",
    );
    this.ctx = lineContext(arena.k, r.ctx);
    this.digestPtr = r.digest;
    this.stageRecords = r.stages;
    this.inputs = [r.in0, r.in1];
    this.outs = [r.out0, r.out1];
    this.seenPtr = r.seen;
    this.seenEnd = r.seen;
    this.split = {
      records: r.records,
      digests: r.digests,
      grouped: r.grouped,
      perm: r.perm,
      starts: r.starts,
      gflags: r.gflags,
      flags: r.flags,
      absent: r.absent,
      absentAt: r.absentAt,
      spillLen: r.spillLen,
      scanEnd: r.scanEnd,
      kept: r.kept,
      spillBytes: r.spillBytes,
      spillRecords: r.spillRecords,
      spillGrouped: r.spillGrouped,
    };
    this.spill = exact ? options.spill?.(arena.k.SPILL_RECORD_BYTES.value, options.memory ?? Infinity) : undefined;
    if (options.keys !== undefined)
      this.keyed = new KeyedBatch(
        arena,
        this.ctx.ptr,
        options.keys,
        { records: r.records, digests: r.digests, flags: r.flags, keySpans: r.keySpans, keyBytes: r.keyBytes },
        () => this.longHasher,
      );
    this.set("mode", options.mode === "exact" ? 0 : 1);
    this.set("hash", options.hash === "xxh128" ? 1 : 0);
    this.set("out", r.out0.ptr);
    this.set("scratch", r.scratch);
    this.set("scalar", options.scalar ? 1 : 0);
    this.set("counts", r.counts);
    this.set("stagePtr", r.stages.ptr);
    this.fresh = r.fresh;
    if (r.fresh.length > 0) {
      this.set("fresh", r.fresh.ptr);
      this.set("freshCap", r.fresh.length);
    }
    if (options.mode === "exact" || options.items === undefined) {
      // Approx: the exact phase's table is sized once, for the lines it holds before the first stage.
      const buckets =
        options.mode === "exact"
          ? this.firstBuckets()
          : Math.max(FIRST_BUCKETS, bucketsFor(options.stageItems ?? FIRST_STAGE_ITEMS, WIDE));
      this.seenEnd = arena.place({ seen: PARTS * buckets * 64 }, this.seenPtr, "the line table").end;
      this.set("table", this.seenPtr);
      this.set("logParts", LOG_PARTS);
      this.set("slot", this.layout.bytes);
      this.setBuckets(buckets);
    } else {
      this.addStage();
    }
    // The split path from the first line: there a new line can be spilled and still be in the table.
    if (options.deferNew === true) {
      if (this.spill === undefined) throw new CrawlsieveError("ERR_INTERNAL", "deferring new lines needs a spill");
      this.leaveKernel();
    }
  }

  /** Works lines of [ptr, ptr + len) until done or the seen-set must grow; returns bytes consumed and whether it stopped to grow. */
  work(ptr: number, len: number, final: boolean): { consumed: number; mustGrow: boolean } {
    if (this.path !== undefined) return { consumed: this.path.work(ptr, len, final), mustGrow: false };
    if (this.keyed !== undefined) return this.workKeyed(this.keyed, ptr, len, final);
    for (let consumed = 0; ; ) {
      consumed += this.arena.k.lineDedup(this.ctx.ptr, ptr + consumed, len - consumed, final ? 1 : 0) >>> 0;
      const status = this.get("status");
      if (status !== 2) return { consumed, mustGrow: status === 1 };
      this.freshRoom(FRESH_ROOM);
    }
  }

  /**
   * work() of a keyed dedup on the engine's own seen-set: a batch of lines is scanned, its keys cut
   * and fingerprinted (keyed-batch.ts), decided (assembly/line-keys.ts) and its kept lines copied
   * out (lineEmit). When the seen-set must grow, the lines decided so far are emitted and the rest
   * are scanned again after the growth.
   */
  private workKeyed(
    keyed: KeyedBatch,
    ptr: number,
    len: number,
    final: boolean,
  ): { consumed: number; mustGrow: boolean } {
    const k = this.arena.k;
    const s = this.split;
    let done = 0;
    for (;;) {
      const n =
        k.lineScan(
          this.ctx.ptr,
          ptr + done,
          len - done,
          final ? 1 : 0,
          SPLIT_BATCH,
          s.records.ptr,
          0,
          s.scanEnd.ptr,
        ) >>> 0;
      if (n === 0) return { consumed: done, mustGrow: false };
      const consumed = s.scanEnd.view(this.arena.u8, Uint32Array)[0];
      keyed.prepare(n);
      const decided = k.keyDedup(this.ctx.ptr, s.digests.ptr, s.flags.ptr, 0, n) >>> 0;
      this.freshRoom(decided);
      s.spillLen.fill(this.arena.u8);
      k.lineEmit(this.ctx.ptr, s.records.ptr, s.digests.ptr, s.flags.ptr, decided, decided, 0, 0, 0, s.spillLen.ptr);
      keyed.line += decided;
      if (decided < n) {
        // The first line not decided starts where the records say.
        const start = s.records.view(this.arena.u8, Uint32Array, decided, 1)[0];
        return { consumed: done + start - (ptr + done), mustGrow: true };
      }
      done += consumed;
    }
  }

  /** The hasher of lines longer than the head room (made when first needed), for a line fingerprinted as it streams by. */
  get longHasher(): LongLineHasher {
    return (this.long ??= new LongLineHasher(this.options.mode === "approx", this.options.hash === "xxh128"));
  }

  /**
   * Tests-and-sets a line longer than a chunk, given in pieces (its "\n" included when
   * terminated): 1 new, 0 seen, 2 the seen-set must grow first (then call again), 3 spilled
   * (past the memory budget: it comes out of resolved() at the end).
   */
  dedupLong(pieces: readonly Uint8Array[], terminated: boolean): number {
    if (this.keyed !== undefined) return this.dedupLongKeyed(this.keyed, pieces, terminated);
    const digest = this.longHasher.digest(pieces, terminated);
    return this.dedupDigest(digest, () => lineBytes(pieces, terminated));
  }

  /** dedupLong by the line's key; a line without one is printed (keep, not recorded) or dropped. */
  private dedupLongKeyed(keyed: KeyedBatch, pieces: readonly Uint8Array[], terminated: boolean): number {
    const key = keyed.long(pieces, terminated);
    let fresh: number;
    if (key === "keep" && this.path !== undefined) {
      // Past the budget it may have to wait with the spilled lines, to keep its place in the output.
      this.split.digests.fill(this.arena.u8, 0, 0, 1);
      fresh = this.path.long(() => lineBytes(pieces, terminated), this.countLine, true);
    } else if (typeof key === "string") {
      fresh = key === "keep" ? 1 : 0;
      this.countLine(fresh);
    } else {
      // A copy: the hasher's view is reused, and the retry after growth tests the same key.
      fresh = this.dedupDigest(key.slice(), () => lineBytes(pieces, terminated));
    }
    if (fresh !== 2) keyed.line++;
    return fresh;
  }

  /** Counts a long line decided outside the kernels (it counts the others): one line, `unique` of it new. */
  private readonly countLine = (unique: number): void => {
    this.set("lines", this.get("lines") + 1);
    this.set("unique", this.get("unique") + unique);
  };

  /** The next input begins: its lines are counted from 1 in errors. */
  endInput(): void {
    if (this.keyed !== undefined) this.keyed.line = 0;
  }

  /**
   * Tests-and-sets a long line by its fingerprint (longHasher's); `bytes` gives the line's bytes,
   * "\n"-terminated, should it have to be spilled. Answers as dedupLong.
   */
  dedupDigest(digest: Uint8Array, bytes: () => Iterable<Uint8Array>): number {
    let fresh: number;
    if (this.path !== undefined) {
      this.arena.u8.set(digest, this.split.digests.ptr);
      fresh = this.path.long(bytes, this.countLine);
    } else {
      this.arena.u8.set(digest, this.digestPtr);
      fresh = this.arena.k.digestDedup(this.ctx.ptr, this.digestPtr);
    }
    if (fresh === 1 && this.fresh.length > 0) {
      this.freshRoom(1);
      const n = this.get("freshLen");
      this.fresh.copyIn(this.arena.u8, digest, n);
      this.set("freshLen", n + 1);
    }
    return fresh;
  }

  /**
   * The fingerprints of the lines found new since clearFresh() (options.fresh), packed, as a view
   * valid until memory grows: what a store must make durable before those lines are printed.
   */
  freshDigests(): Uint8Array {
    const inRegion = this.fresh.bytes(this.arena.u8, 0, this.get("freshLen"));
    if (this.freshAside.length === 0) return inRegion;
    return joinPieces([...this.freshAside, inRegion]);
  }

  /** Forgets the fingerprints freshDigests() gave (they are persisted). */
  clearFresh(): void {
    this.set("freshLen", 0);
    this.freshAside = [];
  }

  /** Makes room for `n` more fingerprints in the fresh region (dedup --store): when it has less, its fingerprints are copied aside. */
  private freshRoom(n: number): void {
    const len = this.get("freshLen");
    if (this.fresh.length === 0 || len + n <= this.fresh.length) return;
    this.freshAside.push(this.fresh.bytes(this.arena.u8, 0, len).slice());
    this.set("freshLen", 0);
  }

  /**
   * Inserts packed fingerprints (a store's keys, from its file or other writers) without counting
   * them as lines, until the tables freeze at the memory budget; returns false when they did (the
   * rest are not taken). May grow the table and so memory: no read or write into it may be under way.
   */
  addFingerprints(packed: Uint8Array): boolean {
    return this.eachBatch(packed, (piece) => {
      for (let rest = piece; ; ) {
        const n = rest.length / 16;
        if (this.path !== undefined) return !this.path.tables.frozen && this.path.tables.probe(n, "dedup") === n;
        const done =
          this.arena.k.setAddMany(
            this.seenPtr,
            LOG_PARTS,
            this.buckets,
            this.get("counts"),
            partitionLimit(this.buckets, COMPACT),
            this.split.digests.ptr,
            n,
            this.split.flags.ptr,
            COMPACT.bytes,
          ) >>> 0;
        if (done === n) return true;
        rest = rest.subarray(16 * done);
        this.growTable();
        // The rest goes to the front of the digest region, where the next call (or the split path) reads.
        this.split.digests.copyIn(this.arena.u8, rest);
      }
    });
  }

  /** Removes packed fingerprints (keys a store forgot). */
  removeFingerprints(packed: Uint8Array): void {
    this.eachBatch(packed, (_, n) => {
      if (this.path !== undefined) this.path.tables.remove(n);
      else
        this.arena.k.setRemoveMany(
          this.seenPtr,
          LOG_PARTS,
          this.buckets,
          this.get("counts"),
          this.split.digests.ptr,
          n,
          this.split.flags.ptr,
          COMPACT.bytes,
        );
      return true;
    });
  }

  /** Whether every new line is spilled (options.deferNew). */
  get defersNew(): boolean {
    return this.options.deferNew === true;
  }

  /** Builds the filter store keys pass before they are set aside (SplitPath.sieveKeys); false when there is none. */
  sieveStoreKeys(): boolean {
    return this.path?.sieveKeys() ?? false;
  }

  /** Shows the spilled lines' records (`size` bytes each, the fingerprint first) to `visit` (SplitPath.eachSpilled). */
  eachSpilled(visit: (records: Uint8Array, size: number) => void): void {
    this.path?.eachSpilled(visit);
  }

  /** Lines spilled so far (past the memory budget), to be decided at the end. */
  get spilledLines(): number {
    return this.path?.spilled ?? 0;
  }

  /**
   * Sets a store's keys aside (`forget`: keys it forgot), in the store's order, for the spilled
   * lines to be resolved against at the end: past the budget they cannot all be in the tables.
   */
  spillStoreKeys(packed: Uint8Array, forget: boolean): void {
    if (this.path === undefined)
      throw new CrawlsieveError("ERR_INTERNAL", "a store's keys are set aside only once lines were spilled");
    this.path.spillKeys(packed, forget);
  }

  /** Told the fingerprints of each spill partition's kept lines as resolved() decides them, before any is given back. */
  set onKept(hook: ((fingerprints: readonly Uint8Array[]) => void) | undefined) {
    if (this.path !== undefined) this.path.onKept = hook;
  }

  /** Empties the seen-set (a store was cleared), keeping its size. */
  clearSeen(): void {
    if (this.path !== undefined) return this.path.tables.clear();
    this.arena.u8.fill(0, this.seenPtr, this.seenEnd);
    new ArrayRegion(this.get("counts"), 4, PARTS).fill(this.arena.u8);
  }

  /** Copies packed fingerprints into the batch's digest region a batch at a time, calling `each` with each batch until it returns false; returns whether all went. */
  private eachBatch(packed: Uint8Array, each: (piece: Uint8Array, n: number) => boolean): boolean {
    if (this.options.mode !== "exact")
      throw new CrawlsieveError("ERR_INTERNAL", "fingerprints go into the exact table only");
    for (let at = 0; at < packed.length; at += 16 * SPLIT_BATCH) {
      const piece = packed.subarray(at, Math.min(packed.length, at + 16 * SPLIT_BATCH));
      this.split.digests.copyIn(this.arena.u8, piece);
      if (!each(piece, piece.length / 16)) return false;
    }
    return true;
  }

  /** Buckets a partition of the first exact table: room for options.tableItems, within one memory and the budget. */
  private firstBuckets(): number {
    const items = this.options.tableItems ?? 0;
    const wanted = bucketsFor(items * 1.05, COMPACT);
    const room = Math.min(
      Math.min(MAX_ARENA_BYTES, this.options.perMemory ?? MAX_ARENA_BYTES) - this.seenPtr,
      (this.options.memory ?? Infinity) / 2,
    );
    // At most room / 1.6: the table can still grow once in place (at most 1.5x, and a partition's scratch).
    return Math.max(FIRST_BUCKETS, Math.min(wanted, Math.floor(room / (1.6 * PARTS * 64))));
  }

  /** The kept bytes waiting in the current output region, as a view valid until memory grows. */
  output(): Uint8Array {
    return this.outs[this.outSlot].bytes(this.arena.u8).subarray(0, this.get("outLen"));
  }

  /**
   * Hands the current output region over (its bytes stay as they are until the next swap but one)
   * and points the kernel at the other one, emptied.
   */
  swapOutput(): void {
    this.outSlot ^= 1;
    this.set("out", this.outs[this.outSlot].ptr);
    this.set("outLen", 0);
  }

  /** Lines worked and lines kept so far (spilled lines count as kept once resolved). */
  get counts(): { lines: number; unique: number } {
    return { lines: this.get("lines"), unique: this.get("unique") + (this.path?.keptSpilled ?? 0) };
  }

  /** The spilled lines' first occurrences, in input order, once the input has ended (none when nothing was spilled). */
  resolved(): Iterable<Uint8Array> {
    return this.path?.resolved() ?? [];
  }

  /** Removes the spill's files, if any. */
  close(): void {
    this.spill?.close();
    this.path?.closeKeys();
  }

  /** Closes and gives the instance back for reuse; nothing may use the engine after. */
  release(): void {
    this.close();
    giveBackArena(this.arena);
  }

  /** Closes and hands the instance, with the own table's memory touched already, to the caller; nothing may use the engine after. */
  releaseArena(): Arena {
    this.close();
    return this.arena;
  }

  /** Bytes of the seen-set (table or filters). */
  get seenBytes(): number {
    return this.seenEnd - this.seenPtr;
  }

  /** Bytes of WebAssembly memory held (the long-line instance's included). */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength + (this.long?.byteLength ?? 0) + (this.path?.tables.shardBytes ?? 0);
  }

  /** What --stats reports of the seen-set. */
  describe(): Record<string, unknown> {
    if (this.options.mode === "exact") {
      const keys = this.counts.unique;
      const tables = this.path?.tables;
      const path = this.path;
      const spread =
        path === undefined
          ? {}
          : {
              memories: path.tables.count,
              frozen: path.tables.frozen,
              spilledLines: path.spilled,
              spilledKept: path.keptSpilled,
            };
      // A store too large for the budget: its keys read at the end, and those that could equal a spilled line.
      const store =
        path === undefined || path.keysRead === 0
          ? {}
          : { storeKeysRead: path.keysRead, storeKeysSetAside: path.keysSetAside };
      // Over several memories: the shards' memories count as table; with lines spilled, not every distinct line is in it.
      const tableBytes = this.seenBytes + (tables?.shardBytes ?? 0);
      const bytesPerKey = keys > 0 && (this.path?.spilled ?? 0) === 0 ? Number((tableBytes / keys).toFixed(2)) : null;
      return {
        table: "buckets",
        hash: this.options.hash,
        slots: PARTS * this.buckets * COMPACT.perBucket,
        slotBytes: COMPACT.bytes,
        tableBytes,
        bytesPerKey,
        ...spread,
        ...(this.defersNew ? { deferred: true } : {}),
        ...store,
      };
    }
    if (this.stages === 0) return { filter: "blocked", stages: 0, table: "buckets", tableBytes: this.seenBytes };
    return { filter: "blocked", stages: this.stages, filterBytes: this.seenEnd - this.filtersPtr };
  }

  /** Grows the seen-set: the table in place (grownBuckets), or a new filter stage (sized with the lines still expected, when known). May grow memory. */
  grow(remainingLines?: number): void {
    if (this.options.mode === "exact") this.growTable();
    else this.addStage(remainingLines);
  }

  private get(field: LineField): number {
    return this.ctx.get(this.arena.u8, field);
  }

  private set(field: LineField, value: number): void {
    this.ctx.set(this.arena.u8, field, value);
  }

  private setBuckets(buckets: number): void {
    this.buckets = buckets;
    this.set("buckets", buckets);
    this.set("limit", partitionLimit(buckets, this.layout));
  }

  /** The own table's slots: compact for exact dedup, wide for approximate dedup's exact phase (its filter takes the whole fingerprint). */
  private get layout(): SlotLayout {
    return this.options.mode === "exact" ? COMPACT : WIDE;
  }

  private growTable(): void {
    const next = grownBuckets(this.buckets);
    // Growth past one memory or the budget: spread over several memories, or freeze and spill.
    const { end } = layOut(this.seenPtr, { table: PARTS * next * 64, scratch: this.buckets * 64 });
    const perMemory = Math.min(MAX_ARENA_BYTES, this.options.perMemory ?? MAX_ARENA_BYTES);
    if (end > perMemory || end - this.arena.k.memory.buffer.byteLength > this.available()) {
      this.leaveKernel();
      return;
    }
    // Growth works through a scratch copy of one old partition placed after the new table.
    const { scratch } = this.arena.place(
      { table: PARTS * next * 64, scratch: this.buckets * 64 },
      this.seenPtr,
      "the line table",
    );
    this.arena.k.bucketsGrow(this.seenPtr, LOG_PARTS, this.buckets, next, scratch, COMPACT.bytes);
    this.seenEnd = scratch; // the table ends where its scratch begins
    this.setBuckets(next);
  }

  /** Bytes the budget leaves for more table: the budget less every memory held and the spill's buffers. */
  private available(): number {
    return (this.options.memory ?? Infinity) - this.byteLength - (this.spill?.bufferBytes ?? 0);
  }

  /** Moves to the split path: the table is sealed and shards take new keys if the budget allows, else the table freezes. */
  private leaveKernel(): void {
    const own = () => ({
      arena: this.arena,
      ptr: this.seenPtr,
      counts: this.get("counts"),
      buckets: this.buckets,
      limit: partitionLimit(this.buckets, COMPACT),
    });
    const perMemory = Math.min(MAX_ARENA_BYTES, this.options.perMemory ?? MAX_ARENA_BYTES);
    const tables = new LineTables(own, this.split, { perMemory, available: () => this.available() }, SPLIT_BATCH);
    const keySpill =
      this.options.spill === undefined
        ? undefined
        : () => this.options.spill!(this.arena.k.SPILL_RECORD_BYTES.value, this.options.memory ?? Infinity);
    this.path = new SplitPath(
      this.arena,
      this.ctx.ptr,
      this.split,
      tables,
      this.spill,
      SPLIT_BATCH,
      (n) => this.freshRoom(n),
      keySpill,
      this.options.deferNew === true,
      this.keyed,
    );
    tables.spread();
  }

  private addStage(remainingLines?: number): void {
    const { items, fpRate } = this.options;
    if (this.stages === MAX_STAGES)
      throw new FilterTooLargeError(this.seenEnd, `the filter has reached ${MAX_STAGES} stages`);
    const i = this.stages;
    // With items given there is one stage that never fills.
    const plan =
      items !== undefined
        ? { items, fpRate }
        : planStage(i, {
            fpRate,
            firstItems: this.options.stageItems ?? FIRST_STAGE_ITEMS,
            unique: this.counts.unique,
            remainingLines,
          });
    const planned = plan.items;
    const size = optimalSplitBlockBloom(plan);
    const blocks = Math.ceil(size.bits / 512);
    const { bits, end } = this.arena.place({ bits: blocks * 64 }, this.seenEnd, "the Bloom filter stages");
    this.arena.u8.fill(0, bits, end);
    if (i === 0) {
      this.filtersPtr = bits;
      // The exact phase's fingerprints move into the first stage (none when items was given).
      if (items === undefined) this.arena.k.bucketsToBlocked(this.seenPtr, PARTS * this.buckets * 64, bits, blocks);
    }
    const record = stageRecord(this.arena.k, this.stageRecords.at(i));
    const u8 = this.arena.u8;
    record.set(u8, "bits", bits);
    record.set(u8, "blocks", blocks);
    // The first stage starts with the exact phase's keys in it.
    record.set(u8, "keys", i === 0 && items === undefined ? this.counts.unique : 0);
    record.set(u8, "capacity", items !== undefined ? Infinity : planned);
    this.stages = i + 1;
    this.seenEnd = end;
    this.set("stages", this.stages);
  }
}
