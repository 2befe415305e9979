// Crawlee 3.15 to 3.18.1 declare the `requestManager` crawler option in their types and use it
// in BasicCrawler's constructor, but each crawler class checks its options against a shape
// (`optionsShape`, copied into every subclass's) that forgets it, so `new CheerioCrawler({
// requestManager })` throws "Did not expect property `requestManager` to exist". This teaches the
// crawler classes already loaded to accept it, checked by the very predicate their shape gives
// `requestQueue` (a queue's methods); a release that knows the option is left untouched.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** Adds `requestManager` to the option shapes of the loaded Crawlee crawler classes; returns how many it changed. */
export function acceptRequestManagerOption(): number {
  let changed = 0;
  // Crawlee's dist is CommonJS (its ESM entry wraps it), so every class a program imported is in the module cache.
  for (const [file, module] of Object.entries(require.cache)) {
    if (module === undefined || !/[\\/]@crawlee[\\/]/.test(file)) continue;
    const exports = module.exports as Record<string, unknown> | undefined;
    if (exports === null || typeof exports !== "object") continue;
    for (const value of Object.values(exports)) {
      if (typeof value !== "function") continue;
      const shape = (value as { optionsShape?: unknown }).optionsShape;
      if (shape === null || typeof shape !== "object" || !Object.prototype.hasOwnProperty.call(value, "optionsShape"))
        continue;
      const fields = shape as Record<string, unknown>;
      if ("requestManager" in fields || !("requestQueue" in fields)) continue;
      fields.requestManager = fields.requestQueue;
      changed++;
    }
  }
  return changed;
}
