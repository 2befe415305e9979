// Loads the modules whose memory is imported and shared between threads (Node only: threads are
// worker_threads), each compiled once per thread: build/crawlsieve-shared.wasm, the parallel
// filter's test and set, and build/crawlsieve-kernels-shared.wasm, every kernel of the main module
// over a memory one thread fills and another then uses as it is (a disk seen-set's filter, built
// by its merge thread and handed over without a copy).
import { readFileSync } from "node:fs";
import type { Kernels, SharedKernels } from "./kernels.js";

const wasmUrl = new URL("../../crawlsieve-shared.wasm", import.meta.url);
const kernelsUrl = new URL("../../crawlsieve-kernels-shared.wasm", import.meta.url);
let compiled: WebAssembly.Module | undefined;
let compiledKernels: WebAssembly.Module | undefined;

/** An instance of the shared-memory kernels over `memory`. */
export function instantiateShared(memory: WebAssembly.Memory): SharedKernels {
  compiled ??= new WebAssembly.Module(readFileSync(wasmUrl));
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as SharedKernels;
}

/**
 * An instance of every kernel over the shared `memory` (newSharedMemory), for an Arena. Its static
 * data is written again by each instance: only one thread may use the memory at a time, handing
 * it over by a message.
 */
export function instantiateSharedKernels(memory: WebAssembly.Memory): Kernels {
  compiledKernels ??= new WebAssembly.Module(readFileSync(kernelsUrl));
  return new WebAssembly.Instance(compiledKernels, { env: { memory } }).exports as unknown as Kernels;
}

/** A shared memory of one page that may grow as an Arena's does (to the 65,536 pages the module declares: its 4 GiB of addresses are reserved at once). */
export function newSharedMemory(): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
}

/**
 * The `length` bytes at `ptr` of a shared memory another thread lays out, viewed where they lie
 * (a thread that holds no Arena over it, as a merge's that only reads and saves a filter).
 */
export function sharedBytes(memory: WebAssembly.Memory, ptr: number, length: number): Uint8Array {
  return new Uint8Array(memory.buffer, ptr, length);
}
