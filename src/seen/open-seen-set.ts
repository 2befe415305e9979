// openSeenSet: a SeenSet from a spec (or a ready SeenSet, returned as it is). In every runtime
// the in-memory backends; the Node entry adds the on-disk and Redis ones (open-seen-set.node.ts),
// so browser and worker bundles carry neither.
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";
import { memorySeenSet, windowSeenSet } from "./local-seen-set.js";
import type { ForgettingSeenSet, LocalSeenSet, SeenSet, WindowedSeenSet } from "./seen-set.js";
import type { MemorySeenSpec, SeenSpec, WindowSeenSpec } from "./seen-spec.js";

const BACKENDS = '"memory", "window", "disk" (Node; "lmdb" is its old name), "redis" (Node) or "browser" (browsers)';

/** True when `value` has the methods of a SeenSet. */
export function isSeenSet(value: unknown): value is SeenSet {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return (
    ["addMany", "hasMany", "size", "clear", "close"].every((m) => typeof v[m] === "function") &&
    typeof v.exact === "boolean"
  );
}

/** Opens an exact in-memory SeenSet: it can be saved (serialize) and forget keys (removeMany). */
export function openSeenSet(
  spec: MemorySeenSpec & { readonly exact?: true },
): Promise<LocalSeenSet & ForgettingSeenSet>;
/** Opens an exact windowed SeenSet (the default window): it can be saved and forget keys, hosts and prefixes. */
export function openSeenSet(spec: WindowSeenSpec & { readonly exact?: true }): Promise<LocalSeenSet & WindowedSeenSet>;
/** Opens an in-memory or windowed SeenSet: it can be saved (serialize). */
export function openSeenSet(spec: MemorySeenSpec | WindowSeenSpec): Promise<LocalSeenSet>;
/** Returns a ready SeenSet as it is. */
export function openSeenSet<T extends SeenSet>(spec: T): Promise<T>;
/** Opens the SeenSet a spec describes (here: memory or window); a SeenSet is returned as it is. */
export function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet>;
export async function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet> {
  if (isSeenSet(spec)) return spec;
  if (spec === null || typeof spec !== "object")
    throw new InvalidArgumentError("seen", spec, `a SeenSet or a spec { backend: ${BACKENDS}, ... }`);
  switch (spec.backend) {
    case "memory":
      return memorySeenSet(spec);
    case "window":
      return windowSeenSet(spec);
    case "redis":
    case "disk":
    case "lmdb":
      throw new CrawlsieveError(
        "ERR_NODE_ONLY",
        `the "${spec.backend}" backend needs Node: openSeenSet from "crawlsieve" in Node (its node entry) opens it; elsewhere use the memory and window backends`,
      );
    case "browser":
      throw new CrawlsieveError(
        "ERR_BROWSER_ONLY",
        'the "browser" backend needs a browser: openSeenSet from "crawlsieve" in a page or worker (its browser entry) opens it; in Node use "disk"',
      );
    default:
      throw new InvalidArgumentError("backend", (spec as { backend?: unknown }).backend, BACKENDS);
  }
}
