// openSeenSet in browsers: the in-memory backends and the persisted one ("browser": OPFS or
// IndexedDB), exact or, with `window`, an exact windowed set.
import { browserSeenSet, type BrowserSeenSet } from "./browser/browser-seen-set.js";
import { browserWindowSet, type BrowserWindowSet } from "./browser/browser-window-set.js";
import { isSeenSet, openSeenSet as openInMemory } from "./open-seen-set.js";
import type { ForgettingSeenSet, LocalSeenSet, SeenSet } from "./seen-set.js";
import type { BrowserSeenSpec, Duration, MemorySeenSpec, SeenSpec, WindowSeenSpec } from "./seen-spec.js";

/** Opens an exact in-memory SeenSet: it can be saved (serialize) and forget keys (removeMany). */
export function openSeenSet(
  spec: MemorySeenSpec & { readonly exact?: true },
): Promise<LocalSeenSet & ForgettingSeenSet>;
/** Opens an in-memory or windowed SeenSet: it can be saved (serialize). */
export function openSeenSet(spec: MemorySeenSpec | WindowSeenSpec): Promise<LocalSeenSet>;
/** Opens (or creates) the exact windowed seen-set kept in this origin's OPFS (IndexedDB where OPFS is missing). */
export function openSeenSet(spec: BrowserSeenSpec & { readonly window: Duration | "never" }): Promise<BrowserWindowSet>;
/** Opens (or creates) the exact seen-set kept in this origin's OPFS (IndexedDB where OPFS is missing). */
export function openSeenSet(spec: BrowserSeenSpec): Promise<BrowserSeenSet>;
/** Returns a ready SeenSet as it is. */
export function openSeenSet<T extends SeenSet>(spec: T): Promise<T>;
/** Opens the SeenSet a spec describes (memory, window or browser); a SeenSet is returned as it is. */
export function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet>;
export async function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet> {
  if (!isSeenSet(spec) && spec !== null && typeof spec === "object" && spec.backend === "browser")
    return spec.window === undefined ? browserSeenSet(spec) : browserWindowSet(spec);
  return openInMemory(spec);
}
