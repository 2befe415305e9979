// Loads build/crawlsieve-shared.wasm, the module whose memory is imported and shared between
// threads. Node only: the parallel filter runs on worker_threads. Compiled once per thread.
import { readFileSync } from "node:fs";
import type { SharedKernels } from "./kernels.js";

const wasmUrl = new URL("../../crawlsieve-shared.wasm", import.meta.url);
let compiled: WebAssembly.Module | undefined;

/** An instance of the shared-memory kernels over `memory`. */
export function instantiateShared(memory: WebAssembly.Memory): SharedKernels {
  compiled ??= new WebAssembly.Module(readFileSync(wasmUrl));
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as SharedKernels;
}
