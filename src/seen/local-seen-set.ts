// SeenSets kept in this process: exact (FingerprintSet), Bloom (ScalableBloomFilter) and windowed
// (ExactWindowSet, exact-window-seen-set.ts; or the Bloom TimeWindowFilter). Each call does its work synchronously before its promise is returned, so
// two calls made in one tick are already ordered: the first to add a key is the one that sees it new.
import { ScalableBloomFilter } from "../bloom/scalable-bloom-filter.js";
import { FingerprintSet } from "../exact/fingerprint-set.js";
import { DisposedError, InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { MAX_WINDOW_SLICES, TimeWindowFilter } from "../window/time-window-filter.js";
import { durationMs, windowRing } from "./duration.js";
import type { SeenBackend, SeenKey, SeenSet } from "./seen-set.js";
import type { MemorySeenSpec, WindowSeenSpec } from "./seen-spec.js";
import { ExactWindowSeenSet } from "./exact-window-seen-set.js";
import { ttlSeconds } from "../window/ttl-rules.js";

/** What a local structure offers: synchronous batches, bytes and disposal. */
interface LocalStructure {
  addMany(keys: readonly SeenKey[]): Uint8Array;
  hasMany(keys: readonly SeenKey[]): Uint8Array;
  removeMany?(keys: readonly SeenKey[]): Uint8Array;
  serialize(): Uint8Array;
  dispose(): void;
}

const DEFAULT_FP_RATE = 1e-6;
const DEFAULT_ITEMS = 1e6;

/** A SeenSet over a structure in this process; `make` builds an empty one (for clear()). */
class LocalSeenSet<S extends LocalStructure> implements SeenSet {
  private structure: S | undefined;
  private added = 0;
  readonly removeMany?: (keys: readonly SeenKey[]) => Promise<Uint8Array>;

  constructor(
    readonly backend: SeenBackend,
    readonly exact: boolean,
    structure: S,
    private readonly make: () => S,
    private readonly count: (s: S) => number | undefined,
  ) {
    this.structure = structure;
    if (structure.removeMany !== undefined) {
      this.removeMany = async (keys) => {
        const removed = this.live().removeMany!(keys);
        for (const flag of removed) this.added -= flag;
        return removed;
      };
    }
  }

  async addMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    const fresh = this.live().addMany(keys);
    for (const flag of fresh) this.added += flag;
    return fresh;
  }

  async hasMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    return this.live().hasMany(keys);
  }

  async size(): Promise<number> {
    return this.count(this.live()) ?? this.added;
  }

  async clear(): Promise<void> {
    const old = this.live();
    this.structure = this.make();
    this.added = 0;
    old.dispose();
  }

  serialize(): Uint8Array {
    return this.live().serialize();
  }

  async close(): Promise<void> {
    this.structure?.dispose();
    this.structure = undefined;
  }

  private live(): S {
    if (this.structure === undefined) throw new DisposedError(`the ${this.backend} seen-set`);
    return this.structure;
  }
}

/** An in-memory SeenSet: exact by default, a scalable Bloom filter with `exact: false`. */
export function memorySeenSet(spec: MemorySeenSpec): SeenSet {
  const exact = spec.exact ?? true;
  if (typeof exact !== "boolean") throw new InvalidArgumentError("exact", spec.exact, "true or false");
  const items = check.positiveInteger("items", spec.items ?? (exact ? 4096 : DEFAULT_ITEMS));
  if (exact) {
    if (spec.fpRate !== undefined)
      throw new InvalidArgumentError(
        "fpRate",
        spec.fpRate,
        "no fpRate: an exact set has no false positives (use exact: false for a Bloom filter)",
      );
    const make = () => new FingerprintSet({ items });
    const set = spec.bytes === undefined ? make() : FingerprintSet.deserialize(spec.bytes);
    return new LocalSeenSet("memory", true, set, make, (s) => s.size);
  }
  const fpRate = check.probability("fpRate", spec.fpRate ?? DEFAULT_FP_RATE);
  const make = () => new ScalableBloomFilter({ fpRate, initialItems: items });
  const filter = spec.bytes === undefined ? make() : ScalableBloomFilter.deserialize(spec.bytes);
  return new LocalSeenSet(
    "memory",
    false,
    bloomAdapter(filter),
    () => bloomAdapter(make()),
    (s) => s.filter.count,
  );
}

/** A scalable Bloom filter as a local structure (it has no removeMany). */
function bloomAdapter(filter: ScalableBloomFilter) {
  return {
    filter,
    addMany: (keys: readonly SeenKey[]) => filter.addMany(keys),
    hasMany: (keys: readonly SeenKey[]) => filter.hasMany(keys),
    serialize: () => filter.serialize(),
    dispose: () => filter.dispose(),
  };
}

/** An in-memory SeenSet where a key is new again `window` after it was added: exact, or (exact: false) a Bloom window. */
export function windowSeenSet(spec: WindowSeenSpec): SeenSet {
  const exact = spec.exact ?? true;
  if (typeof exact !== "boolean") throw new InvalidArgumentError("exact", spec.exact, "true or false");
  if (exact) {
    for (const name of ["granularity", "fpRate"] as const)
      if (spec[name] !== undefined)
        throw new InvalidArgumentError(
          name,
          spec[name],
          `no ${name}: it is the Bloom window's (exact: false); the exact one keeps each key's time`,
        );
    ttlSeconds("window", spec.window); // named as the spec names it
    const options = {
      ttl: spec.window,
      ttlMap: spec.ttlMap,
      semantics: spec.semantics,
      items: spec.items,
      now: spec.now,
    };
    return new ExactWindowSeenSet(options, spec.bytes);
  }
  for (const name of ["ttlMap", "semantics"] as const)
    if (spec[name] !== undefined)
      throw new InvalidArgumentError(
        name,
        spec[name],
        `no ${name} with exact: false: the Bloom window has one window for every key`,
      );
  const ms = durationMs("window", spec.window);
  const { granularity, slices } = windowRing(ms, spec.granularity, MAX_WINDOW_SLICES, spec.window);
  const items = check.positiveInteger("items", spec.items ?? DEFAULT_ITEMS);
  const fpRate = check.probability("fpRate", spec.fpRate ?? DEFAULT_FP_RATE);
  // `items` is the window's keys: each slice is sized for its share, at the rate that makes a
  // query over all L slices false-"seen" at fpRate (1 - (1 - p)^L = fpRate). Sizing every slice
  // for the whole window's keys made a week of minutes reserve 36.5 GB.
  const options = {
    granularity,
    slices,
    itemsPerSlice: Math.ceil(items / slices),
    fpRate: -Math.expm1(Math.log1p(-fpRate) / slices),
    now: spec.now,
  };
  const adapt = (filter: TimeWindowFilter) => ({
    addMany: (keys: readonly SeenKey[]) => invert(filter.seenMany(keys)),
    hasMany: (keys: readonly SeenKey[]) => filter.hasMany(keys),
    serialize: () => filter.serialize(),
    dispose: () => filter.dispose(),
  });
  const make = () => adapt(new TimeWindowFilter(options));
  const start = spec.bytes === undefined ? make() : adapt(TimeWindowFilter.deserialize(spec.bytes, spec.now));
  return new LocalSeenSet("window", false, start, make, () => undefined);
}

/** 1 - flags, in place. */
export function invert(flags: Uint8Array): Uint8Array {
  for (let i = 0; i < flags.length; i++) flags[i] ^= 1;
  return flags;
}
