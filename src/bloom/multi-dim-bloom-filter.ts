// The multi-dimensional Bloom filter of the source papers: S groups, each a pair of bit vectors
// V1 (N bits, k1 hashes) and V2 (N/k bits, k2 hashes); every key is set in every group. The
// membership rule is read two ways (see MultiDimRule) and both are offered; the benchmark
// (bench/multidim.bench.js) compares each with a standard filter of the same total bits.
// Kernel: assembly/multi-dim.ts.
import { FilterTooLargeError, FormatError, InvalidArgumentError } from "../errors.js";
import { Kind } from "../format/container.js";
import { readStored, type Recipe } from "../format/recipe.js";
import { multiDimFpRate, optimalMultiDim, type MultiDimRule } from "../sizing/multi-dim.js";
import * as check from "../validate.js";
import type { Kernels } from "../wasm/kernels.js";
import { BitRegion } from "./bit-region.js";
import type { PlannedLoad } from "./geometry.js";

/**
 * Options of MultiDimBloomFilter: an explicit shape ({ groups, bitsPerVector, hashes, ... }), or
 * a load ({ items, fpRate, groups?, rule?, secondHashes? }) for which the smallest shape is planned.
 */
export interface MultiDimBloomFilterOptions {
  /** Groups (S); 1 by default when sized from items and fpRate. */
  readonly groups?: number;
  /** Bits of V1 in each group (N), with hashes, instead of items + fpRate. */
  readonly bitsPerVector?: number;
  /** @deprecated since 0.2.0, removed in 0.3.0: bits of V1 in each group, now `bitsPerVector` (`.bits` is the total). */
  readonly bits?: number;
  /** Hashes into V1 (k1; the papers' k), with bitsPerVector. */
  readonly hashes?: number;
  /** Keys the filter is planned for, with fpRate, instead of an explicit shape. */
  readonly items?: number;
  /** Target FP rate after `items` keys under the rule, by the papers' formula. */
  readonly fpRate?: number;
  /** Hashes into V2 (k2; default k1); 0 leaves V2 out (a one-group filter is then a standard Bloom filter). */
  readonly secondHashes?: number;
  /** Bits of V2 (default floor(N / k1), at least 1; 0 when secondHashes is 0). */
  readonly secondBits?: number;
  /** "all" (default): present when every group holds the key; "any": when some group does. */
  readonly rule?: MultiDimRule;
}

const PARAM_BYTES = 48;
const RULES: readonly MultiDimRule[] = ["all", "any"];

/** Format v1, kind 7: the shape, the rule and the insert count; the payload is the bit region. */
const RECIPE: Recipe<{ options: MultiDimBloomFilterOptions; inserted: number }> = {
  kind: Kind.MultiDimBloomFilter,
  what: "a filter",
  paramBytes: PARAM_BYTES,
  read(view, payloadBytes) {
    const rule = RULES[view.getUint32(28, true)];
    if (rule === undefined) throw new FormatError(`unknown rule code ${view.getUint32(28, true)}`, "ERR_BAD_PARAMS");
    const options: MultiDimBloomFilterOptions = {
      groups: view.getUint32(0, true),
      hashes: view.getUint32(4, true),
      bitsPerVector: Number(view.getBigUint64(8, true)),
      secondBits: Number(view.getBigUint64(16, true)),
      secondHashes: view.getUint32(24, true),
      rule,
    };
    const { bytes: declared } = checkShape(options);
    if (payloadBytes !== declared)
      throw new FormatError(`payload of ${payloadBytes} bytes where ${declared} were declared`, "ERR_BAD_PARAMS");
    return { options, inserted: Number(view.getBigUint64(32, true)) };
  },
};
const MAX_TOTAL_BITS = 2 ** 34;

/** A checked shape, the bit region's bytes and the planned load. */
interface Shape {
  readonly groups: number;
  readonly bitsPerVector: number;
  readonly hashes: number;
  readonly secondHashes: number;
  readonly secondBits: number;
  readonly rule: MultiDimRule;
  readonly bytes: number;
  readonly planned: PlannedLoad;
}

/** Checks the options (planning a shape from items and fpRate) and computes the bit region's size, allocating nothing. */
function checkShape(options: MultiDimBloomFilterOptions): Shape {
  const opts = check.options<MultiDimBloomFilterOptions>("options", options);
  if (opts.bitsPerVector !== undefined && opts.bits !== undefined)
    throw new InvalidArgumentError("options", options, "bitsPerVector or its deprecated alias bits, not both");
  const explicit = opts.bitsPerVector !== undefined || opts.bits !== undefined || opts.hashes !== undefined;
  if (explicit && (opts.items !== undefined || opts.fpRate !== undefined))
    throw new InvalidArgumentError(
      "options",
      options,
      "either { items, fpRate } or { bitsPerVector, hashes }, not both",
    );
  const groups = explicit || opts.groups !== undefined ? check.positiveInteger("groups", opts.groups, 4096) : 1;
  const rule = opts.rule === undefined ? "all" : check.oneOf("rule", opts.rule, RULES);
  if (!explicit)
    return {
      ...checkShape({ ...planShape(opts, groups, rule), groups, rule }),
      planned: { items: opts.items as number, fpRate: opts.fpRate as number },
    };
  const bitsPerVector =
    opts.bits !== undefined
      ? check.positiveInteger("bits", opts.bits, 2 ** 32)
      : check.positiveInteger("bitsPerVector", opts.bitsPerVector, 2 ** 32);
  const hashes = check.positiveInteger("hashes", opts.hashes, 64);
  const secondHashes =
    opts.secondHashes === undefined ? hashes : check.integerInRange("secondHashes", opts.secondHashes, 0, 64);
  const secondBits =
    secondHashes === 0
      ? check.integerInRange("secondBits", opts.secondBits ?? 0, 0, 0)
      : opts.secondBits === undefined
        ? Math.max(1, Math.floor(bitsPerVector / hashes))
        : check.positiveInteger("secondBits", opts.secondBits, 2 ** 32);
  const totalBits = groups * (bitsPerVector + secondBits);
  if (totalBits > MAX_TOTAL_BITS)
    throw new FilterTooLargeError(
      Math.ceil(totalBits / 8),
      `${totalBits} bits exceed the 2^34 bits one instance holds`,
    );
  return {
    groups,
    bitsPerVector,
    hashes,
    secondHashes,
    secondBits,
    rule,
    bytes: Math.ceil(totalBits / 512) * 64,
    planned: { items: 0, fpRate: 0 },
  };
}

/** The smallest explicit shape for { items, fpRate } (refused when even 2^32 bits per vector miss the target). */
function planShape(opts: Partial<MultiDimBloomFilterOptions>, groups: number, rule: MultiDimRule) {
  const items = check.positiveInteger("items", opts.items);
  const fpRate = check.probability("fpRate", opts.fpRate);
  const secondHashes =
    opts.secondHashes === undefined ? undefined : check.integerInRange("secondHashes", opts.secondHashes, 0, 64);
  const plan = optimalMultiDim({ items, fpRate, groups, rule, secondHashes, maxBitsPerVector: 2 ** 32 });
  if (plan === undefined)
    throw new InvalidArgumentError(
      "fpRate",
      fpRate,
      `a rate ${groups} group(s) of at most 2^32 bits can reach for ${items} keys under rule "${rule}"`,
    );
  return {
    bitsPerVector: plan.bitsPerVector,
    hashes: plan.hashes,
    secondBits: plan.secondBits,
    secondHashes: plan.secondHashes,
  };
}

/** S groups of two Bloom vectors each, every key in every group. */
export class MultiDimBloomFilter {
  readonly groups: number;
  readonly bitsPerVector: number;
  readonly hashes: number;
  readonly secondBits: number;
  readonly secondHashes: number;
  readonly rule: MultiDimRule;
  /** The load the filter was sized for ({ items: 0, fpRate: 0 } for an explicit shape, and after deserialize: format v1 does not record it). */
  readonly planned: PlannedLoad;
  private readonly region: BitRegion;
  private inserted = 0;

  constructor(options: MultiDimBloomFilterOptions) {
    const shape = checkShape(options);
    this.groups = shape.groups;
    this.bitsPerVector = shape.bitsPerVector;
    this.hashes = shape.hashes;
    this.secondHashes = shape.secondHashes;
    this.secondBits = shape.secondBits;
    this.rule = shape.rule;
    this.planned = shape.planned;
    this.region = new BitRegion(shape.bytes);
  }

  /** Bits over all groups: S (N + N2); the bits of one V1 are `bitsPerVector`. */
  get bits(): number {
    return this.groups * (this.bitsPerVector + this.secondBits);
  }

  /** Adds that reported a new key. */
  get count(): number {
    return this.inserted;
  }

  /** Adds a key to every group; true when it was not present under the rule. */
  add(key: string | Uint8Array): boolean {
    return this.addMany([check.key("key", key)])[0] === 1;
  }

  /** True when the key may be present under the rule. */
  has(key: string | Uint8Array): boolean {
    return this.region.runOne(key, this.kernel(false)) === 1;
  }

  /** add() for many keys; result[i] = 1 when keys[i] was new. */
  addMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    const { flags, total } = this.region.runKeys(keys, this.kernel(true));
    this.inserted += total;
    return flags.map((present) => present ^ 1);
  }

  /** has() for many keys. */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    return this.region.runKeys(keys, this.kernel(false)).flags;
  }

  /** @deprecated Since 0.2.0: designedFpRate(items) (removed in the next minor version); without `items`, the rate at the keys added, as it always was. */
  expectedFpRate(items = this.inserted): number {
    return this.designedFpRate(items);
  }

  /** The FP rate the filter is designed for: the papers' formula at its planned load, or after `items` keys (NaN with neither: an explicit shape, or a deserialized filter). */
  designedFpRate(items?: number): number {
    if (items === undefined && this.planned.items === 0) return Number.NaN;
    return multiDimFpRate({
      groups: this.groups,
      bitsPerVector: this.bitsPerVector,
      hashes: this.hashes,
      secondBits: this.secondBits,
      secondHashes: this.secondHashes,
      items: items ?? this.planned.items,
      rule: this.rule,
    });
  }

  /** Estimated FP rate now, from the bits set: per group the fill of V1 to the power k1 times V2's to the power k2, combined by the rule. */
  estimatedFpRate(): number {
    const k = this.region.arena.k;
    const { bitsPtr } = this.region;
    const width = this.bitsPerVector + this.secondBits;
    // Misses multiply: every group must hold the key ("all"), or every group must miss it ("any").
    let product = 1;
    for (let g = 0; g < this.groups; g++) {
      const start = g * width;
      const v1 = k.popcountRange(bitsPtr, start, start + this.bitsPerVector) / this.bitsPerVector;
      const v2 =
        this.secondHashes === 0
          ? 1
          : k.popcountRange(bitsPtr, start + this.bitsPerVector, start + width) / this.secondBits;
      const held = Math.pow(v1, this.hashes) * Math.pow(v2, this.secondHashes);
      product *= this.rule === "all" ? held : 1 - held;
    }
    return this.rule === "all" ? product : 1 - product;
  }

  /** The filter in serialization format v1. */
  serialize(): Uint8Array {
    const params = new Uint8Array(PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setUint32(0, this.groups, true);
    view.setUint32(4, this.hashes, true);
    view.setBigUint64(8, BigInt(this.bitsPerVector), true);
    view.setBigUint64(16, BigInt(this.secondBits), true);
    view.setUint32(24, this.secondHashes, true);
    view.setUint32(28, RULES.indexOf(this.rule), true);
    view.setBigUint64(32, BigInt(this.inserted), true);
    return this.region.serialize(Kind.MultiDimBloomFilter, params);
  }

  /** Loads a filter written by serialize(); the declared size is checked against the payload before the region is allocated. */
  static deserialize(bytes: Uint8Array): MultiDimBloomFilter {
    const stored = readStored(bytes, RECIPE);
    const filter = new MultiDimBloomFilter(stored.params.options);
    try {
      filter.region.load(stored);
    } catch (error) {
      filter.dispose();
      throw error;
    }
    filter.inserted = stored.params.inserted;
    return filter;
  }

  /** Releases the filter's memory. */
  dispose(): void {
    this.region.dispose();
  }

  private kernel(add: boolean) {
    const { bitsPtr } = this.region;
    const rule = this.rule === "all" ? 0 : 1;
    return (k: Kernels, h: number, n: number, out: number) =>
      k.multiDimBatch(
        bitsPtr,
        this.groups,
        this.bitsPerVector,
        this.hashes,
        this.secondBits,
        this.secondHashes,
        rule,
        h,
        n,
        add ? 1 : 0,
        out,
      );
  }
}
