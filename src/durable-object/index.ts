// crawlsieve/durable-object: a seen-set kept in Cloudflare Durable Objects (SQLite-backed), for
// Workers and workerd. Export SeenSetDurableObject from the Worker, bind it, and call
// durableSeenSet(env.BINDING, { name, shards }) to get a SeenSet.
/**
 * `crawlsieve/durable-object`: an exact seen-set, or an exact windowed one (durableWindowSet), kept
 * in SQLite-backed Durable Objects, shared by every Worker and kept across restarts.
 * @module crawlsieve/durable-object
 */
export { SeenSetDurableObject, MAX_KEYS_PER_OBJECT } from "./seen-set-durable-object.js";
export { durableSeenSet, type DurableSeenSetOptions } from "./durable-seen-set.js";
export { durableWindowSet, type DurableWindowSet, type DurableWindowSetOptions } from "./durable-window-set.js";
export { WINDOW_PROTOCOL } from "./window-protocol.js";
export { ShardCountError, ROW_FINGERPRINTS } from "./protocol.js";
export type {
  DurableObjectContext,
  DurableObjectNamespaceLike,
  DurableObjectStubLike,
  SqlCursor,
  SqlStorage,
} from "./workers-types.js";
