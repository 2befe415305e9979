// Node entry: the module is read from build/crawlsieve.wasm beside this package.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { initOnce, setModule, isInitialized } from "./wasm/module.js";

export * from "./index.common.js";

const wasmUrl = new URL("../crawlsieve.wasm", import.meta.url);

/** Compiles the WebAssembly module once per process; idempotent. */
export function init(): Promise<void> {
  return initOnce(async () => WebAssembly.compile(await readFile(wasmUrl)));
}

/** Node only: compiles the module synchronously (for CommonJS-style start-up); idempotent. */
export function initSync(): void {
  if (!isInitialized()) setModule(new WebAssembly.Module(readFileSync(wasmUrl)));
}
export { openLmdbStore } from "./dedup/lmdb-store.js";
export { PartitionedBloomFilter, type PartitionedBloomFilterOptions, type PartitionedBloomFilterHandle } from "./parallel/partitioned-bloom-filter.js";
export { BloomWorkerPool, WorkerJobError } from "./parallel/worker-pool.js";
