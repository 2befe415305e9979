// Node's loading of the kernel module: read build/crawlsieve.wasm from disk beside this package
// and compile it once per process. The Node entry re-exports these; workers and the CLI import
// them from here, so they do not load the whole public API to start.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { totalmem } from "node:os";
import { setLargeMemoryHook } from "./arena.js";
import { adviseHugePages } from "./huge-pages.js";
import { setMachineMemory } from "./machine-memory.js";
import { initOnce, isInitialized, setModule } from "./module.js";

const wasmUrl = new URL("../../crawlsieve.wasm", import.meta.url);

/** Compiles the WebAssembly module once per process; idempotent. */
export function init(): Promise<void> {
  setLargeMemoryHook(adviseHugePages);
  setMachineMemory(totalmem());
  return initOnce(async () => WebAssembly.compile(await readFile(wasmUrl)));
}

/** Node only: compiles the module synchronously (for CommonJS-style start-up); idempotent. */
export function initSync(): void {
  setLargeMemoryHook(adviseHugePages);
  setMachineMemory(totalmem());
  if (!isInitialized()) setModule(new WebAssembly.Module(readFileSync(wasmUrl)));
}
