// Names the Node main entry kept for one minor version after they moved to a subpath or gave way
// to openSeenSet (CHANGELOG.md, 0.3.0): each is the same value as at its new home.
import { PartitionedBloomFilter as PartitionedBloomFilterNow } from "./threads/partitioned-bloom-filter.js";
import { BloomWorkerPool as BloomWorkerPoolNow, WorkerJobError as WorkerJobErrorNow } from "./threads/worker-pool.js";
import { PersistedSeenSet as PersistedSeenSetNow } from "./seen/persisted-seen-set.js";
import { openDiskSeenSet as openDiskSeenSetNow } from "./seen/disk/disk-seen-set.js";
import { openLmdbStore as openLmdbStoreNow } from "./seen/lmdb/lmdb-store.js";

/** @deprecated Since 0.3.0: import it from `crawlsieve/threads`; the main entry drops this name in 0.4.0. */
export const PartitionedBloomFilter = PartitionedBloomFilterNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/threads`; the main entry drops this name in 0.4.0. */
export type PartitionedBloomFilter = PartitionedBloomFilterNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/threads`; the main entry drops this name in 0.4.0. */
export const BloomWorkerPool = BloomWorkerPoolNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/threads`; the main entry drops this name in 0.4.0. */
export type BloomWorkerPool = BloomWorkerPoolNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/threads`; the main entry drops this name in 0.4.0. */
export const WorkerJobError = WorkerJobErrorNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/threads`; the main entry drops this name in 0.4.0. */
export type WorkerJobError = WorkerJobErrorNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/backend`; the main entry drops this name in 0.4.0. */
export const PersistedSeenSet = PersistedSeenSetNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/backend`; the main entry drops this name in 0.4.0. */
export type PersistedSeenSet = PersistedSeenSetNow;
/** @deprecated Since 0.3.0: use openSeenSet({ backend: "disk", dir, ... }); the main entry drops this name in 0.4.0. */
export const openDiskSeenSet = openDiskSeenSetNow;
/** @deprecated Since 0.3.0: use openSeenSet({ backend: "disk", dir }), which imports an LMDB store once; the main entry drops this name in 0.4.0. */
export const openLmdbStore = openLmdbStoreNow;
