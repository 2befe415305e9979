// The standard Bloom filter: k bits anywhere in m, by double hashing.
import { Kind } from "../format/container.js";
import { BitFilter } from "./bit-filter.js";
import { resolveGeometry, type BloomFilterOptions } from "./geometry.js";

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
    // Built through the base constructor with this class as new.target: no sizing from options.
    return BitFilter.load(bytes, Kind.BloomFilter, "standard", (...args) => Reflect.construct(BitFilter, args, BloomFilter));
  }
}
