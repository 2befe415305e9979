// The counting Bloom filter: packed saturating counters instead of bits, so keys can be removed.
import { InvalidArgumentError } from "../errors.js";
import { Kind } from "../format/container.js";
import { counterOverflowBound } from "../sizing/bloom.js";
import * as check from "../validate.js";
import { keyList } from "../wasm/batch.js";
import { BitFilter } from "./bit-filter.js";
import { resolveGeometry, type BloomFilterOptions } from "./geometry.js";

/** Options of CountingBloomFilter: those of BloomFilter plus the counter width. */
export interface CountingBloomFilterOptions extends BloomFilterOptions {
  /** Explicit number of counters (m), with hashes, instead of items + fpRate (the name Deduplicator uses too). */
  readonly counters?: number;
  /** @deprecated since 0.2.0, removed in 0.3.0: the number of counters, now `counters`. */
  readonly bits?: number;
  /** Bits per counter: 2, 4 (default) or 8. Two 4-bit counters share a byte. */
  readonly counterBits?: number;
}

/**
 * A counting Bloom filter: m counters of 2, 4 or 8 bits (sized like BloomFilter), saturating at
 * 2^b - 1. A saturated counter never moves again, so removing keys that were added never causes
 * a false negative (removing a never-added key can: see remove);
 * `sizing.counterOverflowBound` gives the chance that any counter saturates at the planned load.
 */
export class CountingBloomFilter extends BitFilter {
  constructor(options: CountingBloomFilterOptions) {
    const opts = check.options<CountingBloomFilterOptions>("options", options);
    const counterBits = opts.counterBits ?? 4;
    if (![2, 4, 8].includes(counterBits)) throw new InvalidArgumentError("counterBits", opts.counterBits, "2, 4 or 8");
    // `counters` is the name; `bits` its deprecated alias. Both given is ambiguous, even when equal.
    if (opts.counters !== undefined && opts.bits !== undefined)
      throw new InvalidArgumentError("options", options, "counters or its deprecated alias bits, not both");
    const sizing =
      opts.counters === undefined
        ? opts
        : {
            ...opts,
            bits: check.positiveInteger("counters", opts.counters, Number.MAX_SAFE_INTEGER),
            counters: undefined,
          };
    const { geometry, plan } = resolveGeometry("counting", sizing, counterBits);
    super(geometry, plan);
  }

  /** Number of counters (m). */
  get counters(): number {
    return super.bits;
  }

  /** @deprecated since 0.2.0, removed in 0.3.0: the number of counters, now `counters`. */
  override get bits(): number {
    return super.bits;
  }

  protected get kind() {
    return Kind.CountingBloomFilter;
  }

  /** Bits per counter. */
  get counterBits(): number {
    return this.store.geometry.counterBits ?? 4;
  }

  /**
   * Removes one occurrence of a key; false (and no change) when some counter of it is 0.
   * Precondition: the key was added. A filter cannot tell a never-added key that tests positive (a
   * false positive) from an added one, and removing it lowers other keys' counters, which can
   * cause false negatives. Where that cannot be ruled out, use Deduplicator.remove, which checks
   * the exact fingerprint table first.
   */
  remove(key: string | Uint8Array): boolean {
    const removed = this.store.viaBatch(check.key("key", key), "remove") === 1;
    if (removed) this.inserted--;
    return removed;
  }

  /** Removes many keys (same precondition as remove); result[i] = 1 when keys[i] tested present and was removed. */
  removeMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    return this.run(keyList(keys), "remove");
  }

  /** An upper bound of how many times the key was added (its smallest counter; 0 means absent). */
  multiplicity(key: string | Uint8Array): number {
    return this.store.viaBatch(check.key("key", key), "min");
  }

  /** The bound P(some counter reaches 2^b) <= m (e ln 2 / 2^b)^(2^b) at the planned load. */
  overflowBound(): number {
    return counterOverflowBound({ counters: this.counters, counterBits: this.counterBits });
  }

  /** Loads a filter written by serialize(); throws a FormatError subclass on bad bytes. */
  static deserialize(bytes: Uint8Array): CountingBloomFilter {
    // Built through the base constructor with this class as new.target: no sizing from options.
    return BitFilter.load(bytes, Kind.CountingBloomFilter, "counting", (...args) =>
      Reflect.construct(BitFilter, args, CountingBloomFilter),
    );
  }
}
