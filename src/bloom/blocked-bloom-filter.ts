// The cache-line-blocked Bloom filter: all k bits of a key in one 64-byte block.
import { Kind } from "../format/container.js";
import { BitFilter } from "./bit-filter.js";
import { resolveGeometry, type BloomFilterOptions, type PlannedLoad } from "./geometry.js";
import type { BitsGeometry } from "./partitioned-bits.js";

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
    return BitFilter.load(bytes, Kind.BlockedBloomFilter, "blocked", (...args) =>
      Reflect.construct(BitFilter, args, BlockedBloomFilter),
    );
  }

  /** @internal An empty filter of an exact geometry (the shared filter copies its shards in). */
  static fromGeometry(geometry: BitsGeometry, plan: PlannedLoad, inserted: number): BlockedBloomFilter {
    return Reflect.construct(BitFilter, [geometry, plan, inserted], BlockedBloomFilter) as BlockedBloomFilter;
  }
}
