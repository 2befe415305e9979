// Node entry: the module is read from build/crawlsieve.wasm beside this package (src/wasm/node.ts).
/**
 * The main entry (`crawlsieve`) in Node: filters, exact dedup, seen-sets, near-duplicates, URLs, sizing and the binary format.
 * @module crawlsieve
 */
export * from "./index.common.js";
export { init, initSync } from "./wasm/node.js";
export { fileSpill } from "./lines/file-spill.js";
export { MinHashSpill, type MinHashSpillOptions } from "./near-dup/minhash-spill.js";
export type { LmdbStoreOptions } from "./seen/lmdb/lmdb-store.js";
export type { DiskSeenSetOptions } from "./seen/disk/disk-seen-set.js";
export {
  openDiskDeduplicator,
  type DiskDeduplicator,
  type DiskDeduplicatorOptions,
} from "./seen/disk/disk-deduplicator.js";
export type { PersistedParts, SeenTable } from "./seen/persisted-seen-set.js";
export type { LockRunner } from "./seen/log-driver.js";
export type { BatchLog, LogRead, LogWrite } from "./seen/batch-log.js";
export type {
  PartitionedBloomFilterOptions,
  PartitionedBloomFilterHandle,
} from "./threads/partitioned-bloom-filter.js";
export type { BitsGeometry, Layout } from "./bloom/partitioned-bits.js";
export * from "./deprecated.node.js";
// Shadows the common openSeenSet (an explicit export wins over export *): this one knows "disk" and "redis".
export { openSeenSet } from "./seen/open-seen-set.node.js";
