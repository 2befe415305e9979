// FP rate of the multi-dimensional Bloom filter: S groups, each a vector V1 of n1 bits with k1
// positions and a vector V2 of n2 bits with k2 positions, every key set in every group. After n
// keys a vector of b bits with k positions has a given bit set with probability
// 1 - (1 - 1/b)^(kn) (the exact expectation, which matters at the source's N = 150 bits), so a
// group holds an absent key with f = (1 - (1 - 1/n1)^(k1 n))^k1 (1 - (1 - 1/n2)^(k2 n))^k2.
// Two membership rules: present when every group holds the key (f^S), or when any does
// (1 - (1 - f)^S).
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";

/** How a multi-dimensional filter combines its groups' answers. */
export type MultiDimRule = "all" | "any";

/** The shape of a multi-dimensional Bloom filter and its load. */
export interface MultiDimShape {
  /** Groups (S). */
  readonly groups: number;
  /** Bits of V1 in each group (N), as MultiDimBloomFilter names it. */
  readonly bitsPerVector?: number;
  /** @deprecated since 0.2.0, removed in 0.3.0: bits of V1 in each group, now `bitsPerVector`. */
  readonly bits?: number;
  /** Positions in V1 (k1). */
  readonly hashes: number;
  /** Bits of V2 in each group (N / k by default). */
  readonly secondBits: number;
  /** Positions in V2 (k2). */
  readonly secondHashes: number;
  /** Keys inserted (n). */
  readonly items: number;
  /** "all": present when every group holds the key; "any": when some group does. */
  readonly rule: MultiDimRule;
}

/** The expected FP rate of a multi-dimensional Bloom filter after `items` keys. */
export function multiDimFpRate(shape: MultiDimShape): number {
  const { groups, hashes, secondBits, secondHashes, items, rule } = shape;
  check.positiveInteger("groups", groups);
  if (shape.bitsPerVector !== undefined && shape.bits !== undefined)
    throw new InvalidArgumentError("shape", shape, "bitsPerVector or its deprecated alias bits, not both");
  const bits =
    shape.bits !== undefined
      ? check.positiveInteger("bits", shape.bits)
      : check.positiveInteger("bitsPerVector", shape.bitsPerVector);
  const vector = (b: number, k: number) => (k === 0 ? 1 : Math.pow(-Math.expm1(k * items * Math.log1p(-1 / b)), k));
  const group = vector(bits, hashes) * vector(secondBits, secondHashes);
  if (rule === "all") return Math.pow(group, groups);
  if (rule === "any") return -Math.expm1(groups * Math.log1p(-group));
  check.oneOf("rule", rule, ["all", "any"]);
  return NaN;
}

/** The best k for a standard filter of m bits holding n keys, and its FP rate (exact expectation). */
export function bestStandardBloom(bits: number, items: number): { hashes: number; fpRate: number } {
  let best = { hashes: 1, fpRate: 1 };
  for (let hashes = 1; hashes <= 64; hashes++) {
    const fpRate = Math.pow(-Math.expm1(hashes * items * Math.log1p(-1 / bits)), hashes);
    if (fpRate < best.fpRate) best = { hashes, fpRate };
  }
  return best;
}

/** A multi-dimensional filter's shape planned for a load: per-group V1 bits and hashes, V2 bits and hashes. */
export interface MultiDimPlan {
  readonly bitsPerVector: number;
  readonly hashes: number;
  readonly secondBits: number;
  readonly secondHashes: number;
  /** The FP rate the formula gives at `items` keys (at most the target). */
  readonly fpRate: number;
}

/**
 * The smallest shape (total bits S (N + N2)) meeting `fpRate` after `items` keys, for a given
 * number of groups and rule; V2 is N / k1 bits with k2 = k1 (the papers' choice) unless
 * `secondHashes` is 0. For each k1 the FP rate falls as N grows, so N is found by bisection.
 */
export function optimalMultiDim(load: {
  items: number;
  fpRate: number;
  groups: number;
  rule: MultiDimRule;
  secondHashes?: number;
  maxBitsPerVector: number;
}): MultiDimPlan | undefined {
  const { items, fpRate, groups, rule, maxBitsPerVector } = load;
  let best: (MultiDimPlan & { total: number }) | undefined;
  for (let hashes = 1; hashes <= 64; hashes++) {
    const secondHashes = load.secondHashes ?? hashes;
    const shapeOf = (n: number) => {
      const secondBits = secondHashes === 0 ? 0 : Math.max(1, Math.floor(n / hashes));
      return { groups, bitsPerVector: n, hashes, secondBits, secondHashes, items, rule };
    };
    if (multiDimFpRate(shapeOf(maxBitsPerVector)) > fpRate) continue;
    let lo = 1;
    let hi = maxBitsPerVector;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (multiDimFpRate(shapeOf(mid)) <= fpRate) hi = mid;
      else lo = mid + 1;
    }
    const shape = shapeOf(lo);
    const total = groups * (shape.bitsPerVector + shape.secondBits);
    if (best === undefined || total < best.total)
      best = {
        bitsPerVector: lo,
        hashes,
        secondBits: shape.secondBits,
        secondHashes,
        fpRate: multiDimFpRate(shape),
        total,
      };
  }
  if (best === undefined) return undefined;
  const { total: _total, ...plan } = best;
  return plan;
}
