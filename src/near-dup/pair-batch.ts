// Candidate pairs of sketches estimated in batches: a structure queues pairs of slots of its
// sketch region, each with a tag, and one call of the estimatePairs kernel serves a batch of them.
// MinHashIndex and MinHashSpill's verifier both verify through it, and the comparison of an
// estimate with the threshold has its one home here too.
import type { Arena } from "../wasm/arena.js";
import { array, type ArrayRegion } from "../wasm/array-region.js";
import { Accumulator } from "../wasm/batch.js";

/** Pairs estimated at once. */
const PAIR_BATCH = 4096;

/** The regions a structure places for its pair batches: the pairs (two u32 slots each) and their estimates (f64). */
export const PAIR_REGIONS = { pairs: array(8, PAIR_BATCH), out: array(8, PAIR_BATCH) };

/**
 * Whether an estimate reaches the threshold; with a small tolerance, so that an exact estimate
 * equal to the threshold (4/5 against 0.8) is not lost to the division's rounding.
 */
export function reaches(similarity: number, threshold: number): boolean {
  return similarity >= threshold - 1e-12;
}

/** Where the sketches are now: the arena, the address of slot 0, and k (a slot is 4 (k + 1) bytes). */
export interface SketchSlots {
  readonly arena: Arena;
  readonly ptr: number;
  readonly k: number;
}

/** Pairs of sketch slots gathered and estimated a batch at a time; `done` gets each with its tag and estimate. */
export class PairBatch {
  private readonly pairs = new Uint32Array(2 * PAIR_BATCH);
  private readonly tags = new Uint32Array(PAIR_BATCH);
  private readonly batch = new Accumulator(PAIR_BATCH, (n) => this.estimate(n));

  constructor(
    /** The regions placed from PAIR_REGIONS. */
    private readonly regions: { readonly pairs: ArrayRegion; readonly out: ArrayRegion },
    /** The sketches, asked at each batch (memory may have grown since the last). */
    private readonly sketches: () => SketchSlots,
    private readonly done: (tag: number, x: number, y: number, similarity: number) => void,
  ) {}

  /** Queues the pair of slots (`x`, `y`); `done` hears it at the next flush, or when the batch is full. */
  push(tag: number, x: number, y: number): void {
    const i = this.batch.at;
    this.pairs[2 * i] = x;
    this.pairs[2 * i + 1] = y;
    this.tags[i] = tag;
    this.batch.added();
  }

  /** Estimates the pairs still queued. */
  flush(): void {
    this.batch.flush();
  }

  private estimate(n: number): void {
    const { arena, ptr, k } = this.sketches();
    this.regions.pairs.copyIn(arena.u8, this.pairs.subarray(0, 2 * n));
    arena.k.estimatePairs(ptr, k, this.regions.pairs.ptr, n, this.regions.out.ptr);
    const estimates = this.regions.out.view(arena.u8, Float64Array, 0, n);
    for (let i = 0; i < n; i++) this.done(this.tags[i], this.pairs[2 * i], this.pairs[2 * i + 1], estimates[i]);
  }
}
