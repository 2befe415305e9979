// FP rate of the multi-dimensional Bloom filter: S groups, each a vector V1 of n1 bits with k1
// positions and a vector V2 of n2 bits with k2 positions, every key set in every group. After n
// keys a vector of b bits with k positions has a given bit set with probability
// 1 - (1 - 1/b)^(kn) (the exact expectation, which matters at the source's N = 150 bits), so a
// group holds an absent key with f = (1 - (1 - 1/n1)^(k1 n))^k1 (1 - (1 - 1/n2)^(k2 n))^k2.
// Two membership rules: present when every group holds the key (f^S), or when any does
// (1 - (1 - f)^S).
import * as check from "../validate.js";

/** How a multi-dimensional filter combines its groups' answers. */
export type MultiDimRule = "all" | "any";

/** The shape of a multi-dimensional Bloom filter and its load. */
export interface MultiDimShape {
  /** Groups (S). */
  readonly groups: number;
  /** Bits of V1 in each group (N). */
  readonly bits: number;
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
  const { groups, bits, hashes, secondBits, secondHashes, items, rule } = shape;
  check.positiveInteger("groups", groups);
  const vector = (b: number, k: number) => (k === 0 ? 1 : Math.pow(-Math.expm1(k * items * Math.log1p(-1 / b)), k));
  const group = vector(check.positiveInteger("bits", bits), hashes) * vector(secondBits, secondHashes);
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
