// A time-windowed Bloom filter: a ring of L Bloom slices, one per granule (minute, hour, day or
// month, UTC). A key is "seen" when any live slice has it; otherwise it goes into the current
// slice. Slices older than the window are dropped whole (cleared and reused), whether or not any
// call came in between, because liveness is computed from the clock on every call.
// A slice is built when its granule first records a key (one WebAssembly instance each), so a
// long ring of short slices opens at once and holds memory only for the granules that had keys.
import { BitFilter, bitFilterRecipe } from "../bloom/bit-filter.js";
import { BloomFilter } from "../bloom/bloom-filter.js";
import { DisposedError, FilterTooLargeError, FormatError, InvalidArgumentError } from "../errors.js";
import { MAX_TOTAL_BYTES, resolveGeometry } from "../bloom/geometry.js";
import type { BitsGeometry } from "../bloom/partitioned-bits.js";
import { concat, Kind, nestParts, unnestParts, writeContainer } from "../format/container.js";
import { payloadOf, readStored, type Recipe } from "../format/recipe.js";
import * as check from "../validate.js";
import { countOf, eachBatch, keyList, type Keys } from "../wasm/batch.js";
import { BATCH } from "../wasm/staging.js";
import { granularity, granuleOf, granuleStart, GRANULARITY_CODES, type Granularity } from "./granularity.js";

/** Options of TimeWindowFilter. */
export interface TimeWindowFilterOptions {
  /** Length of one slice. */
  readonly granularity: Granularity;
  /** Slices in the window (L): the window is L granules long. */
  readonly slices: number;
  /** Keys planned per slice. */
  readonly itemsPerSlice: number;
  /** FP rate of one slice at its planned load; a query sees up to L slices: 1 - (1 - p)^L. */
  readonly fpRate: number;
  /** The clock, in milliseconds since the epoch (default Date.now); tests inject their own. */
  readonly now?: () => number;
}

const NONE = -Number.MAX_SAFE_INTEGER;
/**
 * Most slices in one ring. Each slice is a WebAssembly instance with its own memory, and V8 on
 * x64 reserves address space for each: a Node 20 process here made 12,620 before "Out of memory:
 * Cannot allocate Wasm memory" (test/time-window.test.ts names it). A week of minutes fits, with
 * room left for the process's other structures.
 */
export const MAX_WINDOW_SLICES = 10_080;

/** Checks the options and returns them with the granularity resolved; allocates nothing. */
function checkOptions(options: TimeWindowFilterOptions): TimeWindowFilterOptions {
  const opts = check.options<TimeWindowFilterOptions>("options", options);
  const unit = granularity(opts.granularity);
  const slices = check.positiveInteger("slices", opts.slices, MAX_WINDOW_SLICES);
  const itemsPerSlice = check.positiveInteger("itemsPerSlice", opts.itemsPerSlice);
  const fpRate = check.probability("fpRate", opts.fpRate);
  if (opts.now !== undefined && typeof opts.now !== "function")
    throw new InvalidArgumentError("now", opts.now, "a function returning milliseconds");
  // Every slice may come to exist: refuse a ring whose slices together outgrow an in-process filter.
  const { geometry } = resolveGeometry("standard", { items: itemsPerSlice, fpRate });
  const bytes = slices * ((geometry.slots * geometry.partitions) / 8);
  if (bytes > MAX_TOTAL_BYTES)
    throw new FilterTooLargeError(
      Math.ceil(bytes),
      `${slices} slices of ${itemsPerSlice} keys exceed the 1 TiB limit of one in-process filter`,
    );
  return { granularity: unit, slices, itemsPerSlice, fpRate, now: opts.now };
}

function describeGeometry(g: { slots: number; partitions: number; hashes: number }): string {
  return `${g.partitions} x ${g.slots} bits with ${g.hashes} hashes`;
}
const PARAM_BYTES = 32;

/**
 * Format v1, kind 5: granularity, slices, the slices' plan, then each ring slot's granule; the
 * payload nests each slice as a Bloom filter, whose geometry the plan must give.
 */
const RECIPE: Recipe<{ options: TimeWindowFilterOptions; slice: BitsGeometry; granules: number[] }> = {
  kind: Kind.TimeWindowFilter,
  what: "a time window",
  paramBytes: { minimum: PARAM_BYTES, of: (params) => PARAM_BYTES + 8 * params.getUint32(4, true) },
  read(params) {
    const code = params.getUint32(0, true);
    const unit = (Object.keys(GRANULARITY_CODES) as Granularity[]).find((name) => GRANULARITY_CODES[name] === code);
    if (unit === undefined) throw new FormatError(`unknown granularity code ${code}`, "ERR_BAD_PARAMS");
    const options = checkOptions({
      granularity: unit,
      slices: params.getUint32(4, true),
      itemsPerSlice: Number(params.getBigUint64(8, true)),
      fpRate: params.getFloat64(16, true),
    });
    const { geometry: slice } = resolveGeometry("standard", { items: options.itemsPerSlice, fpRate: options.fpRate });
    const granules = Array.from({ length: options.slices }, (_, i) => params.getFloat64(PARAM_BYTES + 8 * i, true));
    return { options, slice, granules };
  },
};

/**
 * Per-key expiry without clearing everything. Guarantee: a key seen at time t is reported seen at
 * every time in [t, t + window - granularity], and not seen (barring the FP rate) after
 * t + window. A clock that moves backwards sees only slices inside its own window; slices stamped
 * in its future are not consulted, and are dropped when their ring position is needed again.
 */
export class TimeWindowFilter {
  readonly granularity: Granularity;
  readonly slices: number;
  readonly itemsPerSlice: number;
  readonly fpRate: number;
  private readonly clock: () => number;
  /** One slot a granule; a slot is empty until its granule records a key. */
  private ring: (BloomFilter | undefined)[];
  private disposed = false;
  private readonly granules: number[];

  /** `restored` (internal) holds the slices deserialize() built, so nothing is sized twice. */
  constructor(options: TimeWindowFilterOptions, /* deserialize() only */ restored?: (BloomFilter | undefined)[]) {
    const opts = checkOptions(options);
    this.granularity = opts.granularity;
    this.slices = opts.slices;
    this.itemsPerSlice = opts.itemsPerSlice;
    this.fpRate = opts.fpRate;
    this.clock = opts.now ?? Date.now;
    this.granules = new Array<number>(this.slices).fill(NONE);
    this.ring = restored ?? new Array<BloomFilter | undefined>(this.slices).fill(undefined);
  }

  /** True when the key was seen within the window; otherwise records it now and returns false. */
  seen(key: string | Uint8Array, now?: number): boolean {
    return this.seenMany([check.key("key", key)], now)[0] === 1;
  }

  /** Records the key in the current slice, refreshing it when it was seen earlier in the window; true when it was not in the window. */
  add(key: string | Uint8Array, now?: number): boolean {
    return this.addMany([check.key("key", key)], now)[0] === 1;
  }

  /** True when the key was seen within the window (records nothing). */
  has(key: string | Uint8Array, now?: number): boolean {
    return this.hasMany([check.key("key", key)], now)[0] === 1;
  }

  /** seen() for many keys at one instant, in order (a repeat inside the batch counts as seen). */
  seenMany(keys: readonly (string | Uint8Array)[], now?: number): Uint8Array {
    return this.batch(keyList(keys), this.instant(now), "seen");
  }

  /** add() for many keys at one instant; result[i] = 1 when keys[i] was new to the window (a repeat inside the batch is not). */
  addMany(keys: readonly (string | Uint8Array)[], now?: number): Uint8Array {
    return this.batch(keyList(keys), this.instant(now), "add");
  }

  /** has() for many keys at one instant. */
  hasMany(keys: readonly (string | Uint8Array)[], now?: number): Uint8Array {
    return this.batch(keyList(keys), this.instant(now), "test");
  }

  /** When the window that `now` sees begins (the oldest live slice's start). */
  windowStart(now?: number): number {
    return granuleStart(this.granularity, granuleOf(this.granularity, this.instant(now)) - this.slices + 1);
  }

  /** Bytes of bit storage over the slices built so far (a slice is built when its granule first records a key). */
  get byteLength(): number {
    return this.live().reduce((sum, slice) => sum + (slice?.byteLength ?? 0), 0);
  }

  /** The FP rate the window is designed for: a query over L slices at their planned load, 1 - prod(1 - p_i). */
  designedFpRate(): number {
    return 1 - Math.pow(1 - this.fpRate, this.slices);
  }
  /** @deprecated Since 0.2.0: designedFpRate() (removed in the next minor version). */
  combinedFpRate(): number {
    return this.designedFpRate();
  }

  /** The FP rate now, from the fill of the slices inside the window at `now`: 1 - prod(1 - fill_i^k). */
  estimatedFpRate(now?: number): number {
    const ring = this.live();
    let keep = 1;
    for (const s of this.advance(this.instant(now), false).live) keep *= 1 - ring[s]!.estimatedFpRate();
    return 1 - keep;
  }

  /** The window in serialization format v1: parameters with each slot's granule, then each slice. */
  serialize(): Uint8Array {
    const params = new Uint8Array(PARAM_BYTES + 8 * this.slices);
    const view = new DataView(params.buffer);
    view.setUint32(0, GRANULARITY_CODES[this.granularity], true);
    view.setUint32(4, this.slices, true);
    view.setBigUint64(8, BigInt(this.itemsPerSlice), true);
    view.setFloat64(16, this.fpRate, true);
    this.granules.forEach((g, i) => view.setFloat64(PARAM_BYTES + 8 * i, g, true));
    const tooLarge = (bytes: number) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it");
    // An empty slot is written as an empty slice (built once), so the format is as before.
    let empty: Uint8Array | undefined;
    const emptySlice = () => {
      if (empty !== undefined) return empty;
      const slice = this.makeSlice();
      empty = slice.serialize();
      slice.dispose();
      return empty;
    };
    const payload = concat(nestParts(this.live().map((slice) => slice?.serialize() ?? emptySlice())), tooLarge);
    return writeContainer(Kind.TimeWindowFilter, params, payload, tooLarge);
  }

  /**
   * Loads a window written by serialize(), with the clock to use from now on. Every slice's header
   * is checked against the window's parameters before any slice is built, so forged parameters
   * cost no memory; what is built is at most the size of the bytes given. A slice with no bit
   * set is left unbuilt until its slot records a key (it answers nothing either way).
   */
  static deserialize(bytes: Uint8Array, now?: () => number): TimeWindowFilter {
    const stored = readStored(bytes, RECIPE);
    const { options, slice: expected, granules } = stored.params;
    const payload = payloadOf(stored);
    const parts = unnestParts(payload, options.slices, "slice");
    const sliceRecipe = bitFilterRecipe(Kind.BloomFilter, "standard");
    parts.forEach((part, i) => {
      const { geometry } = readStored(part, sliceRecipe).params;
      if (
        geometry.slots !== expected.slots ||
        geometry.partitions !== expected.partitions ||
        geometry.hashes !== expected.hashes
      ) {
        throw new FormatError(
          `slice ${i} is ${describeGeometry(geometry)} where the window's parameters make ${describeGeometry(expected)}`,
          "ERR_BAD_PARAMS",
        );
      }
    });
    const ring: (BloomFilter | undefined)[] = [];
    try {
      for (const part of parts)
        ring.push(
          payloadOf(readStored(part, sliceRecipe)).some((byte) => byte !== 0)
            ? BloomFilter.deserialize(part)
            : undefined,
        );
    } catch (error) {
      for (const slice of ring) slice?.dispose();
      throw error;
    }
    const filter = new TimeWindowFilter({ ...options, now }, ring);
    granules.forEach((g, i) => (filter.granules[i] = g));
    return filter;
  }

  /** Releases every slice. */
  dispose(): void {
    for (const slice of this.ring) slice?.dispose();
    this.ring = [];
    this.disposed = true;
  }

  private live(): (BloomFilter | undefined)[] {
    if (this.disposed) throw new DisposedError("TimeWindowFilter");
    return this.ring;
  }

  private makeSlice(): BloomFilter {
    return new BloomFilter({ items: this.itemsPerSlice, fpRate: this.fpRate });
  }

  private instant(now: number | undefined): number {
    const t = now ?? this.clock();
    if (typeof t !== "number" || !Number.isFinite(t))
      throw new InvalidArgumentError("now", t, "a finite time in milliseconds");
    return t;
  }

  /**
   * Brings the ring to time t: when recording, the current granule's slot is (re)claimed; the
   * slots live for t are those whose granule is inside t's window. Expiry needs no timer.
   */
  private advance(t: number, claim: boolean): { current: number; live: number[] } {
    const ring = this.live();
    const g = granuleOf(this.granularity, t);
    const slot = ((g % this.slices) + this.slices) % this.slices;
    if (claim) {
      // The slot's first key: its slice is built now (or reused, cleared, from an older granule).
      const slice = ring[slot];
      if (slice === undefined) ring[slot] = this.makeSlice();
      else if (this.granules[slot] !== g) slice.clear();
      this.granules[slot] = g;
    }
    const live: number[] = [];
    for (let i = 0; i < this.slices; i++) {
      const granule = this.granules[i];
      // An unbuilt slot (an empty slice loaded from bytes) holds nothing to consult.
      if (granule <= g && granule > g - this.slices && ring[i] !== undefined) live.push(i);
    }
    return { current: slot, live };
  }

  private batch(keys: Keys, t: number, mode: "seen" | "add" | "test"): Uint8Array {
    const record = mode !== "test";
    const { current, live } = this.advance(t, record);
    const ring = this.live();
    const out = new Uint8Array(countOf(keys));
    if (live.length === 0) return out;
    const front = ring[live[0]]!;
    // When recording, the current slice answers through its set below, not as an older slice.
    const older = live.filter((s) => !(record && s === current)).map((s) => ring[s]!);
    const present = new Uint8Array(BATCH);
    const flags = new Uint8Array(BATCH);
    eachBatch(front.store.front.staging, keys, (n, i) => {
      front.store.hashStaged(n);
      present.fill(0, 0, n);
      BitFilter.orPresent(front, n, older, present, flags);
      if (mode === "seen") {
        // The current slice answers through its set: a key already there reports "not new".
        ring[current]!.applyStaged(front, n, true, present.subarray(0, n), flags, 0);
        for (let j = 0; j < n; j++) out[i + j] = present[j] | (flags[j] ^ 1);
      } else if (mode === "add") {
        // Every key goes into the current slice (its age refreshed); new = in no older slice and not yet in this one.
        ring[current]!.applyStaged(front, n, true, undefined, flags, 0);
        for (let j = 0; j < n; j++) out[i + j] = (present[j] ^ 1) & flags[j];
      } else {
        out.set(present.subarray(0, n), i);
      }
    });
    return out;
  }
}
