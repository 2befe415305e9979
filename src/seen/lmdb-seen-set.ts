// The on-disk SeenSet (Node): a StoreDeduplicator over an LMDB store. Every batch is decided and
// committed in one durable write transaction before its promise resolves, so a key reported new
// stays seen through kill -9, and processes sharing the directory see each key new exactly once.
import { rmSync } from "node:fs";
import { openLmdbStore } from "../dedup/lmdb-store.js";
import { StoreDeduplicator } from "../dedup/store-deduplicator.js";
import { DisposedError, InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import type { SeenKey, SeenSet } from "./seen-set.js";
import type { LmdbSeenSpec } from "./seen-spec.js";

/** Opens (or creates) the on-disk seen-set in `spec.path`. */
export function lmdbSeenSet(spec: LmdbSeenSpec): SeenSet {
  if (typeof spec.path !== "string" || spec.path === "") throw new InvalidArgumentError("path", spec.path, "a directory path");
  const items = check.positiveInteger("items", spec.items ?? 1e6);
  const open = () => new StoreDeduplicator(openLmdbStore(spec.path), { items });
  let dedup: StoreDeduplicator | undefined = open();
  const live = () => {
    if (dedup === undefined) throw new DisposedError("the lmdb seen-set");
    return dedup;
  };
  return {
    backend: "lmdb",
    exact: true,
    addMany: async (keys: readonly SeenKey[]) => live().checkMany(keys).isNew,
    hasMany: async (keys: readonly SeenKey[]) => live().hasMany(keys),
    removeMany: async (keys: readonly SeenKey[]) => live().removeMany(keys, { all: true }).removed,
    size: async () => live().size,
    clear: async () => {
      // Closed and removed whole, then created anew: a store other processes have open keeps its
      // old file until they close it (LMDB maps it), and they keep reading the old keys.
      live().close();
      dedup = undefined;
      rmSync(spec.path, { recursive: true, force: true });
      dedup = open();
    },
    close: async () => {
      dedup?.close();
      dedup = undefined;
    },
  };
}
