// Browser entry: the module is fetched from crawlsieve.wasm beside the build (bundlers rewrite the
// URL), compiled while streaming; or pass a URL, a Response, bytes or a compiled module to init().
import { initOnce, setModule } from "./wasm/module.js";

export * from "./index.common.js";
// Shadows the common openSeenSet (an explicit export wins over export *): this one knows "browser".
export { openSeenSet } from "./seen/open-seen-set.browser.js";
export type { BrowserSeenSet } from "./seen/browser/browser-seen-set.js";
export type { BrowserWindowSet } from "./seen/browser/browser-window-set.js";

/** Where init() may take the module from. */
export type WasmSource = URL | string | Response | BufferSource | WebAssembly.Module;

/** Compiles the WebAssembly module once per page; idempotent. Needs CSP 'wasm-unsafe-eval'. */
export function init(source?: WasmSource): Promise<void> {
  return initOnce(async () => {
    if (source instanceof WebAssembly.Module) return source;
    if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
    const response =
      source instanceof Response ? source : fetch(source ?? new URL("../crawlsieve.wasm", import.meta.url));
    return WebAssembly.compileStreaming(response);
  });
}

/** Installs an already compiled module synchronously (for workers that receive one). */
export function initSync(module: WebAssembly.Module): void {
  setModule(module);
}
