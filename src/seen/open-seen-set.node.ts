// openSeenSet in Node: every backend, the on-disk and Redis ones included.
import { lmdbSeenSet } from "./lmdb-seen-set.js";
import { isSeenSet, openSeenSet as openInMemory } from "./open-seen-set.js";
import { redisSeenSet } from "./redis-seen-set.js";
import type { SeenSet } from "./seen-set.js";
import type { SeenSpec } from "./seen-spec.js";

/** Opens the SeenSet a spec describes (memory, window, lmdb or redis); a SeenSet is returned as it is. */
export async function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet> {
  if (isSeenSet(spec) || spec === null || typeof spec !== "object") return openInMemory(spec);
  if (spec.backend === "lmdb") return lmdbSeenSet(spec);
  if (spec.backend === "redis") return redisSeenSet(spec);
  return openInMemory(spec);
}
