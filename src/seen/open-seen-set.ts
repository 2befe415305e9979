// openSeenSet: a SeenSet from a spec (or a ready SeenSet, returned as it is), in every runtime.
// The Node entry adds the on-disk backend (open-seen-set.node.ts).
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";
import { memorySeenSet, windowSeenSet } from "./local-seen-set.js";
import { redisSeenSet } from "./redis-seen-set.js";
import type { SeenSet } from "./seen-set.js";
import type { SeenSpec } from "./seen-spec.js";

const BACKENDS = '"memory", "window", "lmdb" (Node) or "redis"';

/** True when `value` has the methods of a SeenSet. */
export function isSeenSet(value: unknown): value is SeenSet {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return ["addMany", "hasMany", "size", "clear", "close"].every((m) => typeof v[m] === "function") && typeof v.exact === "boolean";
}

/** Opens the SeenSet a spec describes; a SeenSet is returned as it is. */
export async function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet> {
  if (isSeenSet(spec)) return spec;
  if (spec === null || typeof spec !== "object") throw new InvalidArgumentError("seen", spec, `a SeenSet or a spec { backend: ${BACKENDS}, ... }`);
  switch (spec.backend) {
    case "memory":
      return memorySeenSet(spec);
    case "window":
      return windowSeenSet(spec);
    case "redis":
      return redisSeenSet(spec);
    case "lmdb":
      throw new CrawlsieveError("ERR_NO_LMDB", 'the "lmdb" backend needs Node: import openSeenSet from crawlsieve in Node (its node entry)');
    default:
      throw new InvalidArgumentError("backend", (spec as { backend?: unknown }).backend, BACKENDS);
  }
}
