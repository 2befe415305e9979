// The sliding alternative to TimeWindowFilter: an age-partitioned Bloom filter (Shtul, Baquero,
// Almeida 2020). k + l slices of m bits; a key goes into the k newest; it is present when k
// consecutive slices hold it. The ring shifts (the oldest slice is cleared and becomes the
// newest) after every `generation` inserts, or at every interval boundary of a clock, so keys
// expire one generation at a time instead of one whole window at a time. Kernel:
// assembly/age-partitioned.ts.
import { BitRegion } from "../bloom/bit-region.js";
import { FormatError, InvalidArgumentError } from "../errors.js";
import { Kind } from "../format/container.js";
import { fromStoredParams, readStored, type Recipe } from "../format/recipe.js";
import {
  agePartitionedFpRate,
  optimalAgePartitioned,
  windowPositiveRate,
  type AgePartitionedShape,
  type AgePartitionedSize,
} from "../sizing/age-partitioned.js";
import * as check from "../validate.js";
import { ArrayRegion } from "../wasm/array-region.js";
import type { Kernels } from "../wasm/kernels.js";
import { KernelRecord } from "../wasm/record.js";
import { granularity, granuleOf, GRANULARITY_CODES, type Granularity } from "./granularity.js";

/** Options of AgePartitionedFilter. */
export interface AgePartitionedFilterOptions {
  /**
   * Counting mode: the window in inserts; every key among the last `items` inserts is reported.
   * Interval mode: inserts expected per interval (the generation).
   */
  readonly items: number;
  /** FP rate when the current generation is full. */
  readonly fpRate: number;
  /** Slices per key (k); chosen for least memory when omitted. */
  readonly hashes?: number;
  /** Extra slices (l): keys live l to l + 1 generations. Counting mode: default k. Interval mode: required (the window in intervals). */
  readonly slack?: number;
  /** Interval mode: shift at every boundary of this granularity (UTC) instead of after a count of inserts. */
  readonly interval?: Granularity;
  /** The clock for interval mode, in ms since the epoch (default Date.now). */
  readonly now?: () => number;
}

const PARAM_BYTES = 64;
// deserialize() passes the stored shape under this key, so a file never depends on how a later
// version sizes new filters.
const STORED_SHAPE = Symbol("stored shape");

/** Format v1, kind 6: the stored shape, interval, ring state and plan; the payload is the slices' bits. */
const RECIPE: Recipe<{ planned: AgePartitionedFilterOptions; front: number; fill: number; granule: number }> = {
  kind: Kind.AgePartitionedFilter,
  what: "a filter",
  paramBytes: PARAM_BYTES,
  read(view, payloadBytes) {
    const code = view.getUint32(24, true);
    const interval =
      code === 0
        ? undefined
        : (Object.keys(GRANULARITY_CODES) as Granularity[]).find((name) => GRANULARITY_CODES[name] === code);
    if (code !== 0 && interval === undefined) throw new FormatError(`unknown interval code ${code}`, "ERR_BAD_PARAMS");
    const shape = {
      hashes: view.getUint32(0, true),
      slack: view.getUint32(4, true),
      generation: Number(view.getBigUint64(8, true)),
      sliceBits: Number(view.getBigUint64(16, true)),
    };
    if (
      !(
        shape.hashes >= 1 &&
        shape.hashes <= 64 &&
        shape.slack >= 1 &&
        shape.slack <= 1024 &&
        shape.generation >= 1 &&
        Number.isSafeInteger(shape.generation) &&
        shape.sliceBits >= 1 &&
        shape.sliceBits <= 2 ** 32
      )
    ) {
      throw new FormatError(
        `k = ${shape.hashes}, l = ${shape.slack}, g = ${shape.generation}, m = ${shape.sliceBits} is not a filter this version can hold`,
        "ERR_BAD_PARAMS",
      );
    }
    const declared = describeShape(shape).bytes;
    if (payloadBytes !== declared)
      throw new FormatError(`payload of ${payloadBytes} bytes where ${declared} were declared`, "ERR_BAD_PARAMS");
    const planned = {
      items: Number(view.getBigUint64(48, true)),
      fpRate: view.getFloat64(56, true),
      slack: shape.slack,
      interval,
      [STORED_SHAPE]: shape,
    };
    return {
      planned,
      front: view.getUint32(28, true),
      fill: view.getUint32(32, true),
      granule: view.getFloat64(40, true),
    };
  },
};
const NO_GRANULE = -Number.MAX_SAFE_INTEGER;
const MODE = { test: 0, seen: 1, add: 2 } as const;

/**
 * A sliding-window filter. Counting mode: a key inserted is reported present for at least the
 * next l g inserts and not after (l + 1) g (g the generation), barring false positives. Interval
 * mode: present through the l interval boundaries after its insert, gone after the (l + 1)th. A
 * clock that moves backwards shifts nothing: keys go into the newest slices as if still in the
 * latest interval seen.
 */
export class AgePartitionedFilter {
  /** The sizing the filter was built with. */
  readonly size: AgePartitionedSize;
  /** The shift interval (interval mode), or undefined (counting mode). */
  readonly interval: Granularity | undefined;
  private readonly region: BitRegion;
  /** The ring's slices in storage order (the newest is at the state's front index). */
  private readonly ring: ArrayRegion;
  /** The kernel's state: the newest slice's index and the inserts into the current generation. */
  private readonly state: KernelRecord<"front" | "fill">;
  private readonly clock: () => number;
  private granule = NO_GRANULE;
  private readonly planned: { items: number; fpRate: number };

  constructor(options: AgePartitionedFilterOptions) {
    const opts = check.options<AgePartitionedFilterOptions>("options", options);
    const items = check.positiveInteger("items", opts.items);
    const fpRate = check.probability("fpRate", opts.fpRate);
    this.interval = opts.interval === undefined ? undefined : granularity(opts.interval);
    if (this.interval !== undefined && opts.slack === undefined)
      throw new InvalidArgumentError("slack", opts.slack, "the window in intervals (required with interval)");
    if (opts.now !== undefined && typeof opts.now !== "function")
      throw new InvalidArgumentError("now", opts.now, "a function returning milliseconds");
    this.clock = opts.now ?? Date.now;
    this.planned = { items, fpRate };
    const slack = opts.slack === undefined ? undefined : check.positiveInteger("slack", opts.slack, 1024);
    const stored = (options as { [STORED_SHAPE]?: AgePartitionedShape })[STORED_SHAPE];
    // Interval mode plans one generation per interval: the window holds `slack` of them.
    this.size =
      stored === undefined
        ? optimalAgePartitioned({
            items: this.interval === undefined ? items : items * slack!,
            fpRate,
            hashes: opts.hashes,
            slack,
          })
        : describeShape(stored);
    const sliceBytes = Math.ceil(this.size.sliceBits / 512) * 64;
    this.region = new BitRegion(sliceBytes * this.slices, (k) => k.AGED_STATE_BYTES.value);
    this.ring = new ArrayRegion(this.region.bitsPtr, sliceBytes, this.slices);
    const k = this.region.arena.k;
    this.state = new KernelRecord(this.region.statePtr, { front: k.AGED_FRONT, fill: k.AGED_FILL });
  }

  /** Slices in the ring (k + l). */
  get slices(): number {
    return this.size.hashes + this.size.slack;
  }

  /** Bytes of the slices. */
  get byteLength(): number {
    return this.region.bytes;
  }

  /** True when the key is in the window; otherwise inserts it and returns false. */
  seen(key: string | Uint8Array, now?: number): boolean {
    this.advance(now);
    return this.region.runOne(key, this.kernel(MODE.seen)) === 1;
  }

  /** Inserts the key (refreshing its age even when present); true when it was not present. */
  add(key: string | Uint8Array, now?: number): boolean {
    this.advance(now);
    return this.region.runOne(key, this.kernel(MODE.add)) === 0;
  }

  /** True when the key is in the window (it might be a false positive). */
  has(key: string | Uint8Array, now?: number): boolean {
    this.advance(now);
    return this.region.runOne(key, this.kernel(MODE.test)) === 1;
  }

  /** seen() for many keys in order; result[i] = 1 when keys[i] was in the window. */
  seenMany(keys: readonly (string | Uint8Array)[], now?: number): Uint8Array {
    this.advance(now);
    return this.region.runKeys(keys, this.kernel(MODE.seen)).flags;
  }

  /** add() for many keys; result[i] = 1 when keys[i] was new. */
  addMany(keys: readonly (string | Uint8Array)[], now?: number): Uint8Array {
    this.advance(now);
    return this.region.runKeys(keys, this.kernel(MODE.add)).flags.map((flag) => flag ^ 1);
  }

  /** has() for many keys; result[i] = 1 when keys[i] may be in the window. */
  hasMany(keys: readonly (string | Uint8Array)[], now?: number): Uint8Array {
    this.advance(now);
    return this.region.runKeys(keys, this.kernel(MODE.test)).flags;
  }

  /** seen() for keys given as spans of one buffer. */
  seenSpans(data: Uint8Array, spans: ArrayLike<number>, now?: number): Uint8Array {
    this.advance(now);
    return this.region.runSpans(data, spans, this.kernel(MODE.seen)).flags;
  }

  /** The FP rate the filter is designed for: theory when the current generation is full, its worst moment (the sizing's fpRate). */
  designedFpRate(): number {
    return this.size.fpRate;
  }

  /** Estimated FP rate now, from the bits set in each slice (the same window rule as designedFpRate, with measured fills). */
  estimatedFpRate(now?: number): number {
    this.advance(now);
    const { arena } = this.region;
    const front = this.state.get(arena.u8, "front");
    // A slice's padding past sliceBits is never set, so its popcount over sliceBits is its fill.
    const fills = Array.from(
      { length: this.slices },
      (_, age) =>
        arena.k.popcountBytes(this.ring.at((front + age) % this.slices), this.ring.size) / this.size.sliceBits,
    );
    return windowPositiveRate(this.size.hashes, fills);
  }

  /** Shifts the ring by one generation now (counting mode shifts by itself; this forces one). */
  shift(): void {
    const arena = this.region.arena;
    arena.k.agedShift(this.ring.ptr, this.ring.size, this.slices, this.state.ptr);
  }

  /** The filter in serialization format v1. */
  serialize(): Uint8Array {
    const arena = this.region.arena;
    const params = new Uint8Array(PARAM_BYTES);
    const view = new DataView(params.buffer);
    const { hashes, slack, generation, sliceBits } = this.size;
    view.setUint32(0, hashes, true);
    view.setUint32(4, slack, true);
    view.setBigUint64(8, BigInt(generation), true);
    view.setBigUint64(16, BigInt(sliceBits), true);
    view.setUint32(24, this.interval === undefined ? 0 : GRANULARITY_CODES[this.interval], true);
    view.setUint32(28, this.state.get(arena.u8, "front"), true);
    view.setUint32(32, this.state.get(arena.u8, "fill"), true);
    view.setFloat64(40, this.granule, true);
    view.setBigUint64(48, BigInt(this.planned.items), true);
    view.setFloat64(56, this.planned.fpRate, true);
    return this.region.serialize(Kind.AgePartitionedFilter, params);
  }

  /** Loads a filter written by serialize(), with the clock to use from now on (interval mode). */
  static deserialize(bytes: Uint8Array, now?: () => number): AgePartitionedFilter {
    const stored = readStored(bytes, RECIPE);
    const { planned, front, fill, granule } = stored.params;
    const filter = fromStoredParams(RECIPE.what, () => new AgePartitionedFilter({ ...planned, now }));
    if (front >= filter.slices) throw new FormatError(`newest slice ${front} of ${filter.slices}`, "ERR_BAD_PARAMS");
    filter.region.load(stored);
    const arena = filter.region.arena;
    filter.state.set(arena.u8, "front", front);
    filter.state.set(arena.u8, "fill", fill);
    filter.granule = granule;
    return filter;
  }

  /** Releases the filter's memory. */
  dispose(): void {
    this.region.dispose();
  }

  private kernel(mode: number) {
    const { ptr, size } = this.ring;
    const statePtr = this.state.ptr;
    const { sliceBits, hashes } = this.size;
    const generation = this.interval === undefined ? this.size.generation : 0;
    return (k: Kernels, h: number, n: number, out: number) =>
      k.agedBatch(ptr, size, sliceBits, hashes, this.slices, generation, statePtr, h, n, mode, out);
  }

  /** Interval mode: shifts once per interval boundary passed since the last call (at most a full ring). */
  private advance(now: number | undefined): void {
    if (this.interval === undefined) {
      if (now !== undefined)
        throw new InvalidArgumentError(
          "now",
          now,
          "no time (this filter shifts by count; give `interval` to shift by time)",
        );
      return;
    }
    const t = now ?? this.clock();
    if (typeof t !== "number" || !Number.isFinite(t))
      throw new InvalidArgumentError("now", t, "a finite time in milliseconds");
    const g = granuleOf(this.interval, t);
    if (this.granule === NO_GRANULE) this.granule = g;
    if (g <= this.granule) return;
    const shifts = Math.min(g - this.granule, this.slices);
    for (let i = 0; i < shifts; i++) this.shift();
    this.granule = g;
  }
}

function describeShape(shape: AgePartitionedShape): AgePartitionedSize {
  const slices = shape.hashes + shape.slack;
  return {
    ...shape,
    bits: slices * shape.sliceBits,
    bytes: slices * Math.ceil(shape.sliceBits / 512) * 64,
    fpRate: agePartitionedFpRate(shape),
    retainsAtLeast: shape.slack * shape.generation,
    retainsAtMost: (shape.slack + 1) * shape.generation,
  };
}
