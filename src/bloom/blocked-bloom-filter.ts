// The cache-line-blocked Bloom filter: all k bits of a key in one 64-byte block.
import { Kind } from "../format/container.js";
import { BitFilter } from "./bit-filter.js";
import { resolveGeometry, type BloomFilterOptions } from "./geometry.js";

/**
 * A blocked Bloom filter: one cache miss per key. Sized so that its FP rate (a Poisson mixture over
 * block loads, see sizing) meets fpRate, which takes somewhat more bits than the standard filter.
 */
export class BlockedBloomFilter extends BitFilter {
  constructor(options: BloomFilterOptions) {
    const { geometry, plan } = resolveGeometry("blocked", options);
    super(geometry, plan);
  }

  protected get kind() {
    return Kind.BlockedBloomFilter;
  }

  /** Loads a filter written by serialize(); throws a FormatError subclass on bad bytes. */
  static deserialize(bytes: Uint8Array): BlockedBloomFilter {
    // Built through the base constructor with this class as new.target: no sizing from options.
    return BitFilter.load(bytes, Kind.BlockedBloomFilter, "blocked", (...args) => Reflect.construct(BitFilter, args, BlockedBloomFilter));
  }
}
