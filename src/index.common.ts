// The job doors of the main entry, the same in every runtime; the entry files add init() and
// their runtime's own. Parts for extenders are on subpaths (crawlsieve/backend, /near-dup, /threads).
export { BloomFilter } from "./bloom/bloom-filter.js";
export { BlockedBloomFilter } from "./bloom/blocked-bloom-filter.js";
export { ScalableBloomFilter, type ScalableBloomFilterOptions } from "./bloom/scalable-bloom-filter.js";
export { CountingBloomFilter, type CountingBloomFilterOptions } from "./bloom/counting-bloom-filter.js";
export { Deduplicator, type DeduplicatorOptions, type DedupStats } from "./exact/imp-cb.js";
export type { StoreDeduplicatorOptions } from "./seen/lmdb/store-deduplicator.js";
export { FingerprintSet, type FingerprintSetOptions } from "./exact/fingerprint-set.js";
export { TimeWindowFilter, type TimeWindowFilterOptions } from "./window/time-window-filter.js";
export type { Granularity } from "./window/granularity.js";
export { AgePartitionedFilter, type AgePartitionedFilterOptions } from "./window/age-partitioned-filter.js";
export { MultiDimBloomFilter, type MultiDimBloomFilterOptions } from "./bloom/multi-dim-bloom-filter.js";
export type { FingerprintStore, StoreChanges, StoreView } from "./seen/lmdb/fingerprint-store.js";
export type { BloomFilterOptions, PlannedLoad } from "./bloom/geometry.js";
export { md5, md5Hex, md5Many, Md5 } from "./hash/md5.js";
export { xxh64 } from "./hash/xxh64.js";
export { xxh128 } from "./hash/xxh128.js";
export { LineDeduplicator, dedupLines, type LineDeduplicatorOptions } from "./lines/line-deduplicator.js";
export type { LineHash } from "./lines/line-engine.js";
export type { LineSpill, LineSpillFactory } from "./lines/line-spill.js";
export * as sizing from "./sizing/index.js";
export { optimalBloom } from "./sizing/bloom.js";
export {
  CrawlsieveError,
  InvalidArgumentError,
  FormatError,
  TruncatedInputError,
  ChecksumMismatchError,
  UnsupportedVersionError,
  FilterTooLargeError,
  NotInitializedError,
  DisposedError,
  StorageQuotaError,
} from "./errors.js";
export { FORMAT_VERSION } from "./format/container.js";
export { canonicalizeUrl, type CanonicalizeOptions, type W3libRules } from "./url/canonicalize.js";
export { TRACKING_PARAMETERS, type ExtraNormalizations } from "./url/extras.js";
export {
  requestFingerprint,
  type RequestLike,
  type FingerprintOptions,
  type FingerprintAlgorithm,
} from "./url/fingerprint.js";
export { sha1, sha1Hex } from "./hash/sha1.js";
export { simhash, hammingDistance, type SimHashOptions, type WeightedFeature } from "./near-dup/simhash.js";
export type { FeatureOptions } from "./near-dup/features.js";
export {
  NearDupIndex,
  nearDupGroups,
  type NearDupIndexOptions,
  type NearMatch,
  type NearPair,
} from "./near-dup/simhash-index.js";
export {
  MinHashIndex,
  type MinHashIndexOptions,
  type SimilarMatch,
  type SimilarPair,
} from "./near-dup/minhash-index.js";
export { sketchMany, type SketchParams, type Sketches } from "./near-dup/minhash.js";
export {
  clusterGroups,
  groupPairs,
  leaderClusters,
  type Clustering,
  type ScoredPair,
  type SimilarGroup,
} from "./near-dup/groups.js";
export {
  withRecentCache,
  type CachedSeenSet,
  type CheckAndInsert,
  type RecentCacheOptions,
  type RecentCacheStats,
} from "./exact/recent-cache.js";
export { openSeenSet, isSeenSet } from "./seen/open-seen-set.js";
export type {
  SeenSet,
  SeenKey,
  SeenBackend,
  LocalSeenSet,
  ForgettingSeenSet,
  WindowedSeenSet,
  WindowSemantics,
} from "./seen/seen-set.js";
export type { Ttl, TtlMap } from "./window/ttl-rules.js";
export type {
  SeenSpec,
  MemorySeenSpec,
  WindowSeenSpec,
  DiskSeenSpec,
  LmdbSeenSpec,
  RedisSeenSpec,
  BrowserSeenSpec,
  Duration,
} from "./seen/seen-spec.js";
export { NearDupFilter, type NearDupFilterOptions, type BandKeys } from "./near-dup/near-dup-filter.js";
export * from "./deprecated.js";
