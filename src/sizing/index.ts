// The public `sizing` namespace: the math of every structure's size and false-positive rate,
// gathered from the files of this folder (Bloom family, age-partitioned, multi-dimensional).
/**
 * The math of every structure's size and false-positive rate: Bloom family, age-partitioned, multi-dimensional, LSH layouts and the near-duplicate filter.
 * @module
 */
export * from "./bloom.js";
export {
  agePartitionedFpRate,
  optimalAgePartitioned,
  type AgePartitionedShape,
  type AgePartitionedSize,
} from "./age-partitioned.js";
export {
  multiDimFpRate,
  bestStandardBloom,
  optimalMultiDim,
  type MultiDimPlan,
  type MultiDimShape,
  type MultiDimRule,
} from "./multi-dim.js";
export { lshLayout, filterLayout, bandHitRate, MAX_BINS, MAX_FILTER_BANDS } from "./lsh.js";
export { optimalNearDupFilter, type NearDupPlan, type NearDupSize } from "./near-dup.js";
