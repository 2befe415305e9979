// One WebAssembly instance that dedups lines chunk by chunk (assembly/line-dedup.ts): the context
// block (line-context.ts), two input slots (one is read into while the other is worked), two output
// regions (one is written out while the other fills) and the seen-set, which lies last so it can grow in place. Exact mode keeps 128-bit fingerprints in a bucketed table (assembly/fingerprint-buckets.ts)
// that grows by 1.5x, one partition at a time. Approximate mode starts with that table, exact and
// small enough to stay in cache, and when it fills moves its fingerprints into the first
// split-block Bloom filter (assembly/split-block.ts: one cache line and one SIMD test a line),
// sized from the lines still expected when known (stage-plan.ts); later stages, if any, are
// added without rehashing, the compound rate staying under fpRate.
import { FilterTooLargeError } from "../errors.js";
import { optimalSplitBlockBloom } from "../sizing/bloom.js";
import { Arena } from "../wasm/arena.js";
import { array, type ArrayRegion } from "../wasm/array-region.js";
import type { KernelRecord } from "../wasm/record.js";
import { lineContext, lineSizes, stageRecord, type LineField } from "./line-context.js";
import { LongLineHasher } from "./long-line.js";
import { FIRST_STAGE_ITEMS, planStage } from "./stage-plan.js";

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
}

const MAX_STAGES = 32;
/** Partitions of the exact table: growth works one at a time, so its scratch is 1/64 of the table. */
const LOG_PARTS = 6;
const PARTS = 1 << LOG_PARTS;
const FIRST_BUCKETS = 4;
/** Keys a partition may hold per slot before the table grows (4 slots a bucket). */
const MAX_LOAD = 0.85;
const GROWTH = 1.5;

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

  constructor(options: LineEngineOptions) {
    this.options = options;
    const arena = new Arena();
    this.arena = arena;
    const sizes = lineSizes(arena.k);
    const { headBytes, chunkBytes } = options;
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
    this.set("mode", options.mode === "exact" ? 0 : 1);
    this.set("hash", options.hash === "xxh128" ? 1 : 0);
    this.set("out", r.out0.ptr);
    this.set("scratch", r.scratch);
    this.set("scalar", options.scalar ? 1 : 0);
    this.set("counts", r.counts);
    this.set("stagePtr", r.stages.ptr);
    if (options.mode === "exact" || options.items === undefined) {
      // Approx: the exact phase's table is sized once, for the lines it holds before the first stage.
      const buckets = options.mode === "exact" ? FIRST_BUCKETS : Math.max(FIRST_BUCKETS, Math.ceil((options.stageItems ?? FIRST_STAGE_ITEMS) / PARTS / 4 / MAX_LOAD));
      this.seenEnd = arena.place({ seen: PARTS * buckets * 64 }, this.seenPtr, "the line table").end;
      this.set("table", this.seenPtr);
      this.set("logParts", LOG_PARTS);
      this.setBuckets(buckets);
    } else {
      this.addStage();
    }
  }

  /** Works lines of [ptr, ptr + len) until done or the seen-set must grow; returns bytes consumed and whether it stopped to grow. */
  work(ptr: number, len: number, final: boolean): { consumed: number; mustGrow: boolean } {
    const consumed = this.arena.k.lineDedup(this.ctx.ptr, ptr, len, final ? 1 : 0) >>> 0;
    return { consumed, mustGrow: this.get("status") === 1 };
  }

  /**
   * Tests-and-sets a line longer than a chunk, given in pieces (its "\n" included when
   * terminated): 1 new, 0 seen, 2 the seen-set must grow first (then call again).
   */
  dedupLong(pieces: readonly Uint8Array[], terminated: boolean): number {
    this.long ??= new LongLineHasher(this.options.mode === "approx", this.options.hash === "xxh128");
    this.arena.u8.set(this.long.digest(pieces, terminated), this.digestPtr);
    return this.arena.k.digestDedup(this.ctx.ptr, this.digestPtr);
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

  /** Lines worked and lines kept so far. */
  get counts(): { lines: number; unique: number } {
    return { lines: this.get("lines"), unique: this.get("unique") };
  }

  /** Bytes of the seen-set (table or filters). */
  get seenBytes(): number {
    return this.seenEnd - this.seenPtr;
  }

  /** Bytes of WebAssembly memory held (the long-line instance's included). */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength + (this.long?.byteLength ?? 0);
  }

  /** What --stats reports of the seen-set. */
  describe(): Record<string, unknown> {
    if (this.options.mode === "exact") {
      const keys = this.counts.unique;
      return { table: "buckets", hash: this.options.hash, slots: PARTS * this.buckets * 4, tableBytes: this.seenBytes, bytesPerKey: keys > 0 ? Number((this.seenBytes / keys).toFixed(2)) : null };
    }
    if (this.stages === 0) return { filter: "blocked", stages: 0, table: "buckets", tableBytes: this.seenBytes };
    return { filter: "blocked", stages: this.stages, filterBytes: this.seenEnd - this.filtersPtr };
  }

  /** Grows the seen-set: the table by 1.5x in place, or a new filter stage (sized with the lines still expected, when known). May grow memory. */
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
    this.set("limit", Math.min(buckets * 4 - 1, Math.floor(buckets * 4 * MAX_LOAD)));
  }

  private growTable(): void {
    const next = Math.max(this.buckets + 1, Math.ceil(this.buckets * GROWTH));
    // Growth works through a scratch copy of one old partition placed after the new table.
    const { scratch } = this.arena.place({ table: PARTS * next * 64, scratch: this.buckets * 64 }, this.seenPtr, "the line table");
    this.arena.k.bucketsGrow(this.seenPtr, LOG_PARTS, this.buckets, next, scratch);
    this.seenEnd = scratch; // the table ends where its scratch begins
    this.setBuckets(next);
  }

  private addStage(remainingLines?: number): void {
    const { items, fpRate } = this.options;
    if (this.stages === MAX_STAGES) throw new FilterTooLargeError(this.seenEnd, `the filter has reached ${MAX_STAGES} stages`);
    const i = this.stages;
    // With items given there is one stage that never fills.
    const plan = items !== undefined ? { items, fpRate } : planStage(i, { fpRate, firstItems: this.options.stageItems ?? FIRST_STAGE_ITEMS, unique: this.counts.unique, remainingLines });
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
