// The standard Bloom filter: k bits anywhere in m, by double hashing.
import { Kind } from "../format/container.js";
import { BitFilter } from "./bit-filter.js";
import { resolveGeometry, type BloomFilterOptions, type PlannedLoad } from "./geometry.js";
import type { BitsGeometry } from "./partitioned-bits.js";

/**
 * A standard Bloom filter sized from { items, fpRate } (m = -n ln p / (ln 2)^2, k = round(m/n ln 2)).
 * `has` answering true may be a false positive; false is definite.
 */
export class BloomFilter extends BitFilter {
  constructor(options: BloomFilterOptions) {
    const { geometry, plan } = resolveGeometry("standard", options);
    super(geometry, plan);
  }

  protected get kind() {
    return Kind.BloomFilter;
  }

  /** Loads a filter written by serialize(); throws a FormatError subclass on bad bytes. */
  static deserialize(bytes: Uint8Array): BloomFilter {
    return BitFilter.load(bytes, Kind.BloomFilter, "standard", (...args) => BloomFilter.fromGeometry(...args));
  }

  /** @internal An empty filter of an exact geometry (the shared filter copies its shards in). */
  static fromGeometry(geometry: BitsGeometry, plan: PlannedLoad, inserted: number): BloomFilter {
    // Built through the base constructor with this class as new.target: no sizing from options.
    return Reflect.construct(BitFilter, [geometry, plan, inserted], BloomFilter) as BloomFilter;
  }
}
