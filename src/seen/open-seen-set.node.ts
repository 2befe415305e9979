// openSeenSet in Node: every backend, the on-disk one included.
import { lmdbSeenSet } from "./lmdb-seen-set.js";
import { openSeenSet as openAnywhere } from "./open-seen-set.js";
import type { SeenSet } from "./seen-set.js";
import type { SeenSpec } from "./seen-spec.js";

/** Opens the SeenSet a spec describes (memory, window, lmdb or redis); a SeenSet is returned as it is. */
export async function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet> {
  if (spec !== null && typeof spec === "object" && (spec as SeenSpec).backend === "lmdb" && !("addMany" in spec)) return lmdbSeenSet(spec as Extract<SeenSpec, { backend: "lmdb" }>);
  return openAnywhere(spec);
}
