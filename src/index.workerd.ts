// Edge-worker entry (workerd / Cloudflare Workers): workers may not compile bytes at run time, so
// the .wasm is imported as a module, which the runtime compiles at deploy time.
import wasmModule from "../crawlsieve.wasm";
import { initOnce, setModule } from "./wasm/module.js";

export * from "./index.common.js";

/** Installs the imported module; idempotent. */
export function init(): Promise<void> {
  return initOnce(async () => wasmModule);
}

/** Installs the imported module synchronously. */
export function initSync(): void {
  setModule(wasmModule);
}
