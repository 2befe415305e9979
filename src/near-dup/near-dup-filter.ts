// A yes/no near-duplicate test at tens of bytes a text (LSHBloom, Khan et al. 2024): the MinHash
// band keys of a text (src/near-dup/minhash.ts, at their full 64 bits) go into one blocked Bloom
// filter per LSH band, and a text is a near-duplicate of something added before when any band
// filter already holds its key. No sketch is kept, so nothing is verified: what the index
// (MinHashIndex) checks by estimate, the filter takes from the S-curve of its layout, plus the
// band filters' false positives, sized by sizing/near-dup.ts so that all bands together stay
// within the planned rate.
import { DisposedError, FilterTooLargeError, FormatError, InvalidArgumentError } from "../errors.js";
import { concat, Kind, nestParts, unnestParts, writeContainer } from "../format/container.js";
import { fromStoredParams, payloadOf, readStored, type Recipe } from "../format/recipe.js";
import { bitFilterRecipe } from "../bloom/bit-filter.js";
import { BlockedBloomFilter } from "../bloom/blocked-bloom-filter.js";
import { optimalNearDupFilter, type NearDupSize } from "../sizing/near-dup.js";
import * as check from "../validate.js";
import { DEFAULT_SHINGLE } from "./features.js";
import { checkSketchParams, wideBandKeys, type SketchParams } from "./minhash.js";

/** A yes/no near-duplicate filter (NearDupFilter, or RedisNearDupFilter from `crawlsieve/redis`): per text 1 when a near-duplicate was added before; every text is recorded. */
export interface NearDupTextFilter {
  /** Records the texts; result[i] = 1 when a near-duplicate of texts[i] was recorded before. */
  addMany(texts: string[]): Uint8Array | Promise<Uint8Array>;
}

/** Options of NearDupFilter. */
export interface NearDupFilterOptions {
  /** Texts planned. */
  readonly items: number;
  /** False-positive rate of the whole test (all bands together) at `items`. */
  readonly fpRate: number;
  /** Least Jaccard similarity of word shingles meant as a near-duplicate, in (0, 1]; default 0.8. */
  readonly threshold?: number;
  /** Words per shingle, 1 to 16; default 3 (as MinHashIndex). */
  readonly shingle?: number;
  /** LSH bands and rows; default sizing.filterLayout(threshold) (MinHashIndex's lshLayout suits a verified index, not a filter). */
  readonly bands?: number;
  readonly rows?: number;
}

/** Band keys of texts, as the filter makes them: 2 u32 (low, high) a band a text, and which texts have no word. */
export interface BandKeys {
  /** Texts. */
  readonly count: number;
  /** Key of band b of text i: words 2 (i * bands + b) and the next, low word first. */
  readonly keys: Uint32Array;
  /** 1 for a text without a word (a near-duplicate of nothing, never recorded). */
  readonly empty: Uint8Array;
}

/** The bottom-k the sketch kernel computes beside the band keys: the filter never reads it, so the least allowed. */
const UNUSED_SKETCH = 8;
const PARAM_BYTES = 48;

/** Format v1, kind 13: the plan (threshold, fpRate, items, shingle, bands, rows) and the texts added; the payload nests each band as a blocked filter (kind 2). */
const RECIPE: Recipe<{ options: NearDupFilterOptions; added: number }> = {
  kind: Kind.NearDupFilter,
  what: "a near-duplicate filter",
  paramBytes: PARAM_BYTES,
  read: (params) => ({
    options: {
      threshold: params.getFloat64(0, true),
      fpRate: params.getFloat64(8, true),
      items: Number(params.getBigUint64(16, true)),
      shingle: params.getUint32(24, true),
      bands: params.getUint32(28, true),
      rows: params.getUint32(32, true),
    },
    added: Number(params.getBigUint64(40, true)),
  }),
};

/** @internal The sketch parameters of a filter's band keys (the bottom-k is unused: the least allowed). */
export function filterSketchParams(
  shingle: number,
  layout: { readonly bands: number; readonly rows: number },
): SketchParams {
  return checkSketchParams({ shingle, k: UNUSED_SKETCH, bands: layout.bands, rows: layout.rows });
}

/** Near-duplicate yes/no test over one Bloom filter per LSH band; in memory, in every runtime. */
export class NearDupFilter {
  /** Least Jaccard similarity meant as a near-duplicate. */
  readonly threshold: number;
  /** The plan: bands, rows, each band filter's size, bytes a text. */
  readonly plan: NearDupSize;
  /** What the band keys are made with (k is unused by the filter). */
  readonly params: SketchParams;
  private filters: BlockedBloomFilter[];
  private added = 0;

  /** Sizes the filter from { items, fpRate, threshold } (see sizing.optimalNearDupFilter); `loaded` is deserialize's. */
  constructor(
    options: NearDupFilterOptions,
    loaded?: { readonly parts: readonly Uint8Array[]; readonly added: number },
  ) {
    const opts = check.options<NearDupFilterOptions>("options", options);
    this.plan = optimalNearDupFilter({
      items: opts.items as number,
      fpRate: opts.fpRate as number,
      threshold: opts.threshold ?? 0.8,
      bands: opts.bands,
      rows: opts.rows,
    });
    this.threshold = this.plan.threshold;
    this.params = filterSketchParams(opts.shingle ?? DEFAULT_SHINGLE, this.plan);
    if (loaded === undefined) {
      this.filters = Array.from(
        { length: this.plan.bands },
        () => new BlockedBloomFilter({ items: this.plan.items, fpRate: this.plan.bandFpRate }),
      );
      return;
    }
    this.filters = [];
    this.added = loaded.added;
    try {
      for (const part of loaded.parts) this.filters.push(BlockedBloomFilter.deserialize(part));
    } catch (error) {
      this.dispose();
      throw error;
    }
  }

  /** LSH bands (one filter each). */
  get bands(): number {
    return this.plan.bands;
  }

  /** Rows (one-permutation bins) a band. */
  get rows(): number {
    return this.plan.rows;
  }

  /** Texts recorded so far (texts without a word are never recorded). */
  get count(): number {
    this.live();
    return this.added;
  }

  /** Bytes of bit storage over all bands. */
  get byteLength(): number {
    return this.live().reduce((total, f) => total + f.byteLength, 0);
  }

  /** Adds a text; true when a near-duplicate was added before (it may be a false positive). */
  add(text: string): boolean {
    return this.addMany([text])[0] === 1;
  }

  /** True when a near-duplicate may have been added; false is definite for pairs sharing a band. */
  has(text: string): boolean {
    return this.hasMany([text])[0] === 1;
  }

  /**
   * Records every text and answers, per text, 1 when a near-duplicate was added before it
   * (earlier texts of the batch included: a batch answers as the same adds one by one).
   */
  addMany(texts: readonly string[]): Uint8Array {
    return this.addKeys(this.bandKeys(texts));
  }

  /** Answers as addMany without recording anything: 1 when a near-duplicate may have been added. */
  hasMany(texts: readonly string[]): Uint8Array {
    return this.hasKeys(this.bandKeys(texts));
  }

  /** The band keys of texts (for adding them elsewhere, or here later with addKeys). */
  bandKeys(texts: readonly string[]): BandKeys {
    this.live();
    return { count: texts.length, ...wideBandKeys(texts, this.params) };
  }

  /** addMany for keys made by bandKeys with these params. */
  addKeys(keys: BandKeys): Uint8Array {
    const answers = this.eachBand(keys, (filter, data, spans) => filter.addSpans(data, spans), 0);
    for (let i = 0; i < keys.count; i++) if (keys.empty[i] === 0) this.added++;
    return answers;
  }

  /** hasMany for keys made by bandKeys with these params. */
  hasKeys(keys: BandKeys): Uint8Array {
    return this.eachBand(keys, (filter, data, spans) => filter.hasSpans(data, spans), 1);
  }

  /** The whole test's designed rate at the planned load: 1 - prod over bands (1 - each band's designed rate). */
  designedFpRate(): number {
    return 1 - this.live().reduce((keep, f) => keep * (1 - f.designedFpRate()), 1);
  }

  /** The whole test's rate now, from the fill of every band: 1 - prod (1 - fill_b^k). */
  estimatedFpRate(): number {
    return 1 - this.live().reduce((keep, f) => keep * (1 - f.estimatedFpRate()), 1);
  }

  /** The filter in serialization format v1 (each band nested as a blocked filter with its own checksum). */
  serialize(): Uint8Array {
    const { threshold, fpRate, items, bands, rows } = this.plan;
    const params = new Uint8Array(PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setFloat64(0, threshold, true);
    view.setFloat64(8, fpRate, true);
    view.setBigUint64(16, BigInt(items), true);
    view.setUint32(24, this.params.shingle, true);
    view.setUint32(28, bands, true);
    view.setUint32(32, rows, true);
    view.setBigUint64(40, BigInt(this.added), true);
    const tooLarge = (bytes: number) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it");
    return writeContainer(
      Kind.NearDupFilter,
      params,
      concat(nestParts(this.live().map((f) => f.serialize())), tooLarge),
      tooLarge,
    );
  }

  /** Loads a filter written by serialize(); every band's header is checked against the plan before any band is built. */
  static deserialize(bytes: Uint8Array): NearDupFilter {
    const stored = readStored(bytes, RECIPE);
    const payload = payloadOf(stored);
    const { options, added } = stored.params;
    const plan = fromStoredParams(RECIPE.what, () =>
      optimalNearDupFilter({ ...options, threshold: options.threshold as number }),
    );
    const parts = unnestParts(payload, plan.bands, "band");
    const band = bitFilterRecipe(Kind.BlockedBloomFilter, "blocked");
    parts.forEach((part, b) => {
      const { geometry, planned } = readStored(part, band).params;
      // Math.log1p may differ in the last bit between engines: the rate is compared to 1e-9.
      if (planned.items !== plan.items || !(Math.abs(planned.fpRate - plan.bandFpRate) <= 1e-9 * plan.bandFpRate)) {
        throw new FormatError(
          `band ${b} was planned for ${planned.items} items at ${planned.fpRate} where the parameters give ${plan.items} at ${plan.bandFpRate}`,
          "ERR_BAD_PARAMS",
        );
      }
      if (geometry.slots * geometry.partitions * 512 !== plan.band.bits || geometry.hashes !== plan.band.hashes) {
        throw new FormatError(
          `band ${b} holds ${geometry.slots * geometry.partitions * 512} bits and ${geometry.hashes} hashes where the plan gives ${plan.band.bits} and ${plan.band.hashes}`,
          "ERR_BAD_PARAMS",
        );
      }
    });
    return fromStoredParams(RECIPE.what, () => new NearDupFilter(options, { parts, added }));
  }

  /** Releases every band; any later call throws DisposedError. */
  dispose(): void {
    for (const f of this.filters) f.dispose();
    this.filters = [];
  }

  /**
   * Runs `op` on each band over that band's keys of the texts that have words (8-byte spans of
   * the keys' bytes, in text order, so a text meets the keys of earlier texts of the batch), and
   * ORs per text the band's answer equal to `hit` (0 from an add: the key was there; 1 from a test).
   */
  private eachBand(
    keys: BandKeys,
    op: (filter: BlockedBloomFilter, data: Uint8Array, spans: Float64Array) => Uint8Array,
    hit: number,
  ): Uint8Array {
    const filters = this.live();
    const { count, empty } = keys;
    const bands = this.plan.bands;
    if (keys.keys.length !== 2 * bands * count || empty.length !== count) {
      throw new InvalidArgumentError(
        "keys",
        keys.keys.length,
        `${2 * bands * count} words for ${count} texts of ${bands} bands (band keys made by bandKeys() of a filter with these params)`,
      );
    }
    const data = new Uint8Array(keys.keys.buffer, keys.keys.byteOffset, keys.keys.byteLength);
    const texts: number[] = [];
    for (let i = 0; i < count; i++) if (empty[i] === 0) texts.push(i);
    const spans = new Float64Array(2 * texts.length);
    const out = new Uint8Array(count);
    filters.forEach((filter, b) => {
      texts.forEach((i, j) => {
        spans[2 * j] = 8 * (i * bands + b);
        spans[2 * j + 1] = 8 * (i * bands + b) + 8;
      });
      const answers = op(filter, data, spans);
      texts.forEach((i, j) => (out[i] |= answers[j] === hit ? 1 : 0));
    });
    return out;
  }

  private live(): BlockedBloomFilter[] {
    if (this.filters.length === 0) throw new DisposedError("NearDupFilter");
    return this.filters;
  }
}
