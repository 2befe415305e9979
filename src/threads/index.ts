/**
 * `crawlsieve/threads` (Node): one Bloom filter in SharedArrayBuffer memory that several worker
 * threads add to and test at once, and the pool that runs batches on them.
 * @module
 */
export {
  PartitionedBloomFilter,
  type PartitionedBloomFilterOptions,
  type PartitionedBloomFilterHandle,
} from "./partitioned-bloom-filter.js";
export type { BitsGeometry, Layout } from "../bloom/partitioned-bits.js";
export { BloomWorkerPool, WorkerJobError } from "./worker-pool.js";
