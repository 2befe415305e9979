// One WebAssembly instance that dedups lines chunk by chunk (assembly/line-dedup.ts): the context
// block, two input slots (one is read into while the other is worked), an output region and the seen-set, which lies last so it can grow in
// place. Exact mode keeps 128-bit fingerprints in a bucketed table (assembly/fingerprint-buckets.ts)
// that grows by 1.5x, one partition at a time. Approximate mode starts with that table, exact and
// small enough to stay in cache, and when it fills moves its fingerprints into the first blocked
// Bloom filter, sized from the lines still expected when known (stage-plan.ts); later stages, if
// any, are added without rehashing, the compound rate staying under fpRate.
import { FilterTooLargeError } from "../errors.js";
import { optimalBlockedBloom } from "../sizing/bloom.js";
import { Arena, alignUp, MAX_ARENA_BYTES } from "../wasm/arena.js";
import { FIRST_STAGE_ITEMS, planStage } from "./stage-plan.js";

/** Fingerprints of the exact table: XXH3-128 (fast) or MD5. */
export type LineHash = "xxh128" | "md5";

/** Geometry and mode of a LineEngine. */
export interface LineEngineOptions {
  /** Exact (a fingerprint table) or approximate (blocked Bloom filters). */
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
  /** approx without items: keys planned for the first stage (default 2^16; tests use small ones). */
  readonly stageItems?: number;
}

// Context block offsets, as in assembly/line-dedup.ts.
const C_MODE = 0;
const C_HASH = 4;
const C_OUT = 8;
const C_OUT_LEN = 12;
const C_SCRATCH = 16;
const C_SCALAR = 20;
const C_STATUS = 24;
const C_LINES = 32;
const C_UNIQUE = 40;
const C_TABLE = 48;
const C_LOG_PARTS = 52;
const C_BUCKETS = 56;
const C_LIMIT = 60;
const C_COUNTS = 64;
const C_STAGES = 68;
const C_STAGE_PTR = 72;

const CTX_BYTES = 128;
const SCRATCH_BYTES = 2048;
const MAX_STAGES = 32;
const STAGE_BYTES = 32;
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
  /** Where each of the two input slots' data begins (its head room lies just before). */
  readonly dataPtrs: readonly [number, number];
  readonly outPtr: number;
  readonly digestPtr: number;
  private readonly ctx: number;
  private readonly stagesPtr: number;
  private readonly seenPtr: number;
  private buckets = FIRST_BUCKETS;
  private stages = 0;
  private seenEnd: number;
  /** Where the first filter stage begins (approx; after the table of the exact phase, when there was one). */
  private filtersPtr = 0;

  constructor(options: LineEngineOptions) {
    this.options = options;
    const arena = new Arena();
    this.arena = arena;
    this.ctx = arena.base;
    const scratch = this.ctx + CTX_BYTES;
    this.digestPtr = scratch + SCRATCH_BYTES;
    this.stagesPtr = alignUp(this.digestPtr + 16, 64);
    const counts = this.stagesPtr + MAX_STAGES * STAGE_BYTES;
    const first = alignUp(counts + 4 * PARTS + options.headBytes, 64);
    const second = alignUp(first + options.chunkBytes + options.headBytes, 64);
    this.dataPtrs = [first, second];
    this.outPtr = alignUp(second + options.chunkBytes, 64);
    this.seenPtr = alignUp(this.outPtr + options.headBytes + options.chunkBytes + 64, 64);
    this.seenEnd = this.seenPtr;
    arena.reserve(this.seenPtr);
    const u32 = arena.u32;
    u32[(this.ctx + C_MODE) >> 2] = options.mode === "exact" ? 0 : 1;
    u32[(this.ctx + C_HASH) >> 2] = options.hash === "xxh128" ? 1 : 0;
    u32[(this.ctx + C_OUT) >> 2] = this.outPtr;
    u32[(this.ctx + C_SCRATCH) >> 2] = scratch;
    u32[(this.ctx + C_SCALAR) >> 2] = options.scalar ? 1 : 0;
    u32[(this.ctx + C_COUNTS) >> 2] = counts;
    u32[(this.ctx + C_STAGE_PTR) >> 2] = this.stagesPtr;
    if (options.mode === "exact" || options.items === undefined) {
      // Approx: the exact phase's table is sized once, for the keys it takes before the first stage.
      const buckets = options.mode === "exact" ? FIRST_BUCKETS : Math.max(FIRST_BUCKETS, Math.ceil((options.stageItems ?? FIRST_STAGE_ITEMS) / PARTS / 4 / MAX_LOAD));
      this.seenEnd = this.seenPtr + PARTS * buckets * 64;
      arena.reserve(this.seenEnd);
      this.arena.u32[(this.ctx + C_TABLE) >> 2] = this.seenPtr;
      this.arena.u32[(this.ctx + C_LOG_PARTS) >> 2] = LOG_PARTS;
      this.setBuckets(buckets);
    } else {
      this.addStage();
    }
  }

  /** Works lines of [ptr, ptr + len) until done or the seen-set must grow; returns bytes consumed and whether it stopped to grow. */
  work(ptr: number, len: number, final: boolean): { consumed: number; mustGrow: boolean } {
    const consumed = this.arena.k.lineDedup(this.ctx, ptr, len, final ? 1 : 0) >>> 0;
    return { consumed, mustGrow: this.arena.u32[(this.ctx + C_STATUS) >> 2] === 1 };
  }

  /** Tests-and-sets the fingerprint at digestPtr (see LongLine): 1 new, 0 seen, 2 must grow. */
  digestDedup(): number {
    return this.arena.k.digestDedup(this.ctx, this.digestPtr);
  }

  /** Bytes waiting in the output region. */
  get outLength(): number {
    return this.arena.u32[(this.ctx + C_OUT_LEN) >> 2];
  }

  /** Empties the output region (after its bytes were written). */
  clearOutput(): void {
    this.arena.u32[(this.ctx + C_OUT_LEN) >> 2] = 0;
  }

  /** Lines worked and lines kept so far. */
  get counts(): { lines: number; unique: number } {
    const view = new DataView(this.arena.u8.buffer);
    return { lines: Number(view.getBigUint64(this.ctx + C_LINES, true)), unique: Number(view.getBigUint64(this.ctx + C_UNIQUE, true)) };
  }

  /** Bytes of the seen-set (table or filters). */
  get seenBytes(): number {
    return this.seenEnd - this.seenPtr;
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength;
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

  private setBuckets(buckets: number): void {
    this.buckets = buckets;
    const u32 = this.arena.u32;
    u32[(this.ctx + C_BUCKETS) >> 2] = buckets;
    u32[(this.ctx + C_LIMIT) >> 2] = Math.min(buckets * 4 - 1, Math.floor(buckets * 4 * MAX_LOAD));
  }

  private growTable(): void {
    const next = Math.max(this.buckets + 1, Math.ceil(this.buckets * GROWTH));
    const end = this.seenPtr + PARTS * next * 64;
    // Growth works through a scratch copy of one old partition placed after the new table.
    const scratchEnd = end + this.buckets * 64;
    if (scratchEnd > MAX_ARENA_BYTES) throw new FilterTooLargeError(scratchEnd, "the fingerprint table has outgrown one WebAssembly memory");
    this.arena.reserve(scratchEnd);
    this.arena.k.bucketsGrow(this.seenPtr, LOG_PARTS, this.buckets, next, end);
    this.seenEnd = end;
    this.setBuckets(next);
  }

  private addStage(remainingLines?: number): void {
    const { items, fpRate } = this.options;
    if (this.stages === MAX_STAGES) throw new FilterTooLargeError(this.seenEnd, `the filter has reached ${MAX_STAGES} stages`);
    const i = this.stages;
    // With items given there is one stage that never fills.
    const plan = items !== undefined ? { items, fpRate } : planStage(i, { fpRate, firstItems: this.options.stageItems ?? FIRST_STAGE_ITEMS, unique: this.counts.unique, remainingLines });
    const planned = plan.items;
    const size = optimalBlockedBloom(plan);
    const blocks = Math.ceil(size.bits / 512);
    const bits = alignUp(this.seenEnd, 64);
    const end = bits + blocks * 64;
    if (end > MAX_ARENA_BYTES) throw new FilterTooLargeError(end, "the Bloom filter stages have outgrown one WebAssembly memory");
    this.arena.reserve(end);
    this.arena.u8.fill(0, bits, end);
    if (i === 0) {
      this.filtersPtr = bits;
      // The exact phase's fingerprints move into the first stage (none when items was given).
      if (items === undefined) this.arena.k.bucketsToBlocked(this.seenPtr, PARTS * this.buckets * 64, bits, blocks, size.hashes);
    }
    const record = this.stagesPtr + i * STAGE_BYTES;
    const view = new DataView(this.arena.u8.buffer);
    view.setUint32(record, bits, true);
    view.setUint32(record + 4, size.hashes, true);
    view.setFloat64(record + 8, blocks, true);
    // The first stage starts with the exact phase's keys in it.
    view.setFloat64(record + 16, i === 0 && items === undefined ? this.counts.unique : 0, true);
    view.setFloat64(record + 24, items !== undefined ? Infinity : planned, true);
    this.stages = i + 1;
    this.seenEnd = end;
    this.arena.u32[(this.ctx + C_STAGES) >> 2] = this.stages;
  }
}
