// openSeenSet in Node: every backend, the on-disk and Redis ones included.
import { init } from "../wasm/node.js";
import { openDiskSeenSet } from "./disk/disk-seen-set.js";
import { isSeenSet, openSeenSet as openInMemory } from "./open-seen-set.js";
import { redisSeenSet } from "./redis-seen-set.js";
import type { ForgettingSeenSet, LocalSeenSet, SeenSet, WindowedSeenSet } from "./seen-set.js";
import type { DiskSeenSpec, Duration, MemorySeenSpec, SeenSpec, WindowSeenSpec } from "./seen-spec.js";
import { openDiskWindowSet } from "./disk/disk-window-set.js";
import { InvalidArgumentError } from "../errors.js";
import { type Ttl, ttlSeconds } from "../window/ttl-rules.js";

/** Opens an exact in-memory SeenSet: it can be saved (serialize) and forget keys (removeMany). */
export function openSeenSet(
  spec: MemorySeenSpec & { readonly exact?: true },
): Promise<LocalSeenSet & ForgettingSeenSet>;
/** Opens an exact windowed SeenSet (the default window): it can be saved and forget keys, hosts and prefixes. */
export function openSeenSet(spec: WindowSeenSpec & { readonly exact?: true }): Promise<LocalSeenSet & WindowedSeenSet>;
/** Opens an in-memory or windowed SeenSet: it can be saved (serialize). */
export function openSeenSet(spec: MemorySeenSpec | WindowSeenSpec): Promise<LocalSeenSet>;
/** Opens the on-disk windowed store: keys with their times, new again after their TTL. */
export function openSeenSet(spec: DiskSeenSpec & { readonly window: Duration | "never" }): Promise<WindowedSeenSet>;
/** Opens the on-disk SeenSet (exact): it can forget keys (removeMany). */
export function openSeenSet(spec: DiskSeenSpec): Promise<ForgettingSeenSet>;
/** Returns a ready SeenSet as it is. */
export function openSeenSet<T extends SeenSet>(spec: T): Promise<T>;
/** Opens the SeenSet a spec describes (memory, window, disk or redis); a SeenSet is returned as it is. */
export function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet>;
export async function openSeenSet(spec: SeenSpec | SeenSet): Promise<SeenSet> {
  // An async entry point: it initialises the module itself (init() is idempotent).
  await init();
  if (isSeenSet(spec) || spec === null || typeof spec !== "object") return openInMemory(spec);
  if ((spec.backend === "disk" || spec.backend === "lmdb") && spec.window !== undefined) return diskWindow(spec);
  if (spec.backend === "disk" || spec.backend === "lmdb")
    return openDiskSeenSet(spec.path, {
      items: plannedInMemory(spec),
      durable: spec.durable,
      memory: spec.memory,
      onRecover: spec.onRecover ?? warn,
    });
  if (spec.backend === "redis") return redisSeenSet(spec);
  return openInMemory(spec);
}

/** The windowed store a disk spec with `window` names. */
function diskWindow(spec: DiskSeenSpec): Promise<WindowedSeenSet> {
  if (spec.memory !== undefined)
    throw new InvalidArgumentError(
      "memory",
      spec.memory,
      "no memory budget with window: a windowed store holds its keys in memory (19-28 bytes a key), its expired keys dropped",
    );
  ttlSeconds("window", spec.window); // named as the spec names it
  return openDiskWindowSet(spec.path, {
    ttl: spec.window as Ttl,
    ttlMap: spec.ttlMap,
    semantics: spec.semantics,
    items: spec.items,
    now: spec.now,
    durable: spec.durable,
    onRecover: spec.onRecover ?? warn,
  });
}

/** What a disk seen-set recovered from, when its spec names no onRecover: a process warning. */
function warn(message: string): void {
  process.emitWarning(message, "CrawlsieveWarning");
}

/** Keys a disk spec's table in memory is sized for: `items`, or under a `memory` budget at most the keys it holds (32 bytes a key), so a large plan for a store kept on disk is not refused as past the machine's memory. */
function plannedInMemory(spec: DiskSeenSpec): number | undefined {
  const { items, memory } = spec;
  if (!Number.isSafeInteger(items) || typeof memory !== "number" || !(memory > 0)) return items;
  return Math.min(items as number, Math.max(1, Math.floor(memory / 32)));
}
