// Scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison 2007): a series of standard filters,
// stage i planned for initialItems * growth^i items at fpRate * (1 - r) * r^i, so the compound FP
// rate stays below fpRate however many items come. New keys go to the newest stage.
import { DisposedError, FilterTooLargeError, FormatError } from "../errors.js";
import { concat, Kind, nestParts, unnestParts, writeContainer } from "../format/container.js";
import { fromStoredParams, payloadOf, readStored, type Recipe } from "../format/recipe.js";
import * as check from "../validate.js";
import { BitFilter, bitFilterRecipe } from "./bit-filter.js";
import { BloomFilter } from "./bloom-filter.js";
import { countOf, eachBatch, keyList, keySpans, type Keys } from "../wasm/batch.js";
import { BATCH } from "../wasm/staging.js";

/** Options of ScalableBloomFilter. */
export interface ScalableBloomFilterOptions {
  /** Bound on the compound false-positive rate. */
  readonly fpRate: number;
  /** Items planned for the first stage (default 65536). */
  readonly initialItems?: number;
  /** Capacity factor between stages (default 2). */
  readonly growth?: number;
  /** FP-rate factor r between stages, 0 < r < 1 (default 0.5). */
  readonly tightening?: number;
}

const PARAM_BYTES = 32;
const DEFAULT_INITIAL = 1 << 16;

/** Format v1, kind 3: the options and the stage count; the payload nests each stage as a Bloom filter. */
const RECIPE: Recipe<{ options: ScalableBloomFilterOptions; stages: number }> = {
  kind: Kind.ScalableBloomFilter,
  what: "a scalable filter",
  paramBytes: PARAM_BYTES,
  read: (params) => ({
    options: {
      fpRate: params.getFloat64(0, true),
      initialItems: Number(params.getBigUint64(8, true)),
      growth: params.getUint32(16, true),
      tightening: params.getFloat64(20, true),
    },
    stages: params.getUint32(28, true),
  }),
};

/** A Bloom filter that grows a new stage when the current one is full, keeping the FP bound. */
export class ScalableBloomFilter {
  readonly fpRate: number;
  readonly initialItems: number;
  readonly growth: number;
  readonly tightening: number;
  private stages: BloomFilter[] = [];
  private disposed = false;
  private readonly present = new Uint8Array(BATCH);

  constructor(options: ScalableBloomFilterOptions) {
    const opts = check.options<ScalableBloomFilterOptions>("options", options);
    this.fpRate = check.probability("fpRate", opts.fpRate);
    this.initialItems = check.positiveInteger("initialItems", opts.initialItems ?? DEFAULT_INITIAL);
    this.growth = check.integerInRange("growth", opts.growth ?? 2, 2, 16);
    this.tightening = check.probability("tightening", opts.tightening ?? 0.5);
  }

  /** Adds a key; true when it was new to every stage. */
  add(key: string | Uint8Array): boolean {
    check.key("key", key);
    for (const stage of this.live()) if (stage.has(key)) return false;
    return this.writable().add(key);
  }

  /** True when some stage may hold the key; false is definite. */
  has(key: string | Uint8Array): boolean {
    check.key("key", key);
    for (const stage of this.live()) if (stage.has(key)) return true;
    return false;
  }

  /** Adds many keys; result[i] = 1 when keys[i] was new. */
  addMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    return this.addStaged(keyList(keys));
  }

  /** Adds keys given as spans of one buffer (see BloomFilter.addSpans); result[i] = 1 when new. */
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.addStaged(keySpans(data, spans));
  }

  /** Tests many keys; result[i] = 1 when keys[i] may be present. */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    const list = keyList(keys);
    const out = new Uint8Array(countOf(list));
    if (this.live().length === 0) return out;
    const front = this.stages[0];
    const flags = new Uint8Array(BATCH);
    eachBatch(front.store.front.staging, list, (n, i) => {
      front.store.hashStaged(n);
      BitFilter.orPresent(front, n, this.stages, out.subarray(i, i + n), flags);
    });
    return out;
  }

  /** Keys accepted as new so far. */
  get count(): number {
    let total = 0;
    for (const stage of this.live()) total += stage.count;
    return total;
  }

  /** Stages allocated so far. */
  get stageCount(): number {
    return this.live().length;
  }

  /** Bytes of bit storage over all stages. */
  get byteLength(): number {
    let total = 0;
    for (const stage of this.live()) total += stage.byteLength;
    return total;
  }

  /** The FP rate the filter is designed never to exceed, however many keys come: the fpRate option. */
  designedFpRate(): number {
    return this.fpRate;
  }

  /** @deprecated Since 0.2.0: estimatedFpRate() (removed in the next minor version). */
  compoundFpRate(): number {
    return this.estimatedFpRate();
  }

  /** The FP rate now, from the fill of every stage: 1 - prod(1 - fill_i^k). */
  estimatedFpRate(): number {
    let keep = 1;
    for (const stage of this.live()) keep *= 1 - stage.estimatedFpRate();
    return 1 - keep;
  }

  /** The filter in serialization format v1 (stages nested, each with its own checksum). */
  serialize(): Uint8Array {
    const params = new Uint8Array(PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setFloat64(0, this.fpRate, true);
    view.setBigUint64(8, BigInt(this.initialItems), true);
    view.setUint32(16, this.growth, true);
    view.setFloat64(20, this.tightening, true);
    view.setUint32(28, this.live().length, true);
    const tooLarge = (bytes: number) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it");
    const payload = concat(nestParts(this.stages.map((stage) => stage.serialize())), tooLarge);
    return writeContainer(Kind.ScalableBloomFilter, params, payload, tooLarge);
  }

  /**
   * Loads a filter written by serialize(); throws a FormatError subclass on bad bytes. Each stage's
   * header is checked against the plan the parameters give for it before any stage is built.
   */
  static deserialize(bytes: Uint8Array): ScalableBloomFilter {
    const stored = readStored(bytes, RECIPE);
    const payload = payloadOf(stored);
    const filter = fromStoredParams(RECIPE.what, () => new ScalableBloomFilter(stored.params.options));
    const parts = unnestParts(payload, stored.params.stages, "stage");
    const stage = bitFilterRecipe(Kind.BloomFilter, "standard");
    parts.forEach((part, i) => {
      const { params: stored } = readStored(part, stage);
      const plan = filter.stagePlan(i);
      // Math.pow may differ in the last bit between engines: the rate is compared to 1e-9.
      if (
        stored.planned.items !== plan.items ||
        !(Math.abs(stored.planned.fpRate - plan.fpRate) <= 1e-9 * plan.fpRate)
      ) {
        throw new FormatError(
          `stage ${i} was planned for ${stored.planned.items} items at ${stored.planned.fpRate} where the parameters give ${plan.items} at ${plan.fpRate}`,
          "ERR_BAD_PARAMS",
        );
      }
    });
    try {
      for (const part of parts) filter.stages.push(BloomFilter.deserialize(part));
    } catch (error) {
      filter.dispose();
      throw error;
    }
    return filter;
  }

  /** Releases every stage; using the filter afterwards throws DisposedError. */
  dispose(): void {
    for (const stage of this.stages) stage.dispose();
    this.stages = [];
    this.disposed = true;
  }

  /**
   * Adds keys batch by batch: each batch is staged and hashed once in the first stage, tested
   * against the older stages, and set in the newest where no older stage had it. A batch never
   * holds more keys than the newest stage has room for, so stages fill to their plan.
   */
  private addStaged(keys: Keys): Uint8Array {
    const out = new Uint8Array(countOf(keys));
    const room = () => {
      const last = this.writable();
      return last.planned.items - last.count;
    };
    eachBatch(
      () => this.stages[0].store.front.staging,
      keys,
      (n, i) => {
        const last = this.writable();
        const front = this.stages[0];
        front.store.hashStaged(n);
        const present = this.present.subarray(0, n).fill(0);
        // out[i ..] is scratch until the newest stage writes the answers there.
        BitFilter.orPresent(front, n, this.stages.slice(0, -1), present, out.subarray(i, i + n));
        last.applyStaged(front, n, true, present, out, i);
      },
      room,
    );
    return out;
  }

  /** The newest stage, after opening a new one if it is full. */
  private writable(): BloomFilter {
    const last = this.live()[this.stages.length - 1];
    if (last !== undefined && last.count < last.planned.items) return last;
    const i = this.stages.length;
    this.stages.push(new BloomFilter(this.stagePlan(i)));
    return this.stages[i];
  }

  /** The load stage i is planned for: initialItems * growth^i items at fpRate (1 - r) r^i. */
  private stagePlan(i: number): { items: number; fpRate: number } {
    const p0 = this.fpRate * (1 - this.tightening);
    return {
      items: Math.min(Number.MAX_SAFE_INTEGER, this.initialItems * Math.pow(this.growth, i)),
      fpRate: Math.max(Number.MIN_VALUE, p0 * Math.pow(this.tightening, i)),
    };
  }

  /** The stages; throws DisposedError after dispose() (an empty list would silently be a new filter). */
  private live(): BloomFilter[] {
    if (this.disposed) throw new DisposedError("ScalableBloomFilter");
    return this.stages;
  }
}
