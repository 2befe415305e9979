// openSeenSet: a SeenSet from a spec (or a ready SeenSet, returned as it is). In every runtime
// the in-memory backends; the Node entry adds the on-disk and Redis ones (open-seen-set.node.ts),
// so browser and worker bundles carry neither.
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";
import { memorySeenSet, windowSeenSet } from "./local-seen-set.js";
import type { SeenSet } from "./seen-set.js";
import type { SeenSpec } from "./seen-spec.js";

const BACKENDS = '"memory", "window", "lmdb" (Node) or "redis"';

/** True when `value` has the methods of a SeenSet. */
export function isSeenSet(value: unknown): value is SeenSet {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return ["addMany", "hasMany", "size", "clear", "close"].every((m) => typeof v[m] === "function") && typeof v.exact === "boolean";
}

/** Opens the SeenSet a spec describes (here: memory or window); a SeenSet is returned as it is. */
export async function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet> {
  if (isSeenSet(spec)) return spec;
  if (spec === null || typeof spec !== "object") throw new InvalidArgumentError("seen", spec, `a SeenSet or a spec { backend: ${BACKENDS}, ... }`);
  switch (spec.backend) {
    case "memory":
      return memorySeenSet(spec);
    case "window":
      return windowSeenSet(spec);
    case "redis":
    case "lmdb":
      throw new CrawlsieveError("ERR_NODE_ONLY", `the "${spec.backend}" backend needs Node: openSeenSet from "crawlsieve" in Node (its node entry) opens it; elsewhere use the memory and window backends`);
    default:
      throw new InvalidArgumentError("backend", (spec as { backend?: unknown }).backend, BACKENDS);
  }
}
