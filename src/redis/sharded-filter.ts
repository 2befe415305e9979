// What the three Redis Bloom filters (standard, blocked, counting) share: the names of their shard
// keys and the one-key calls, which are batch calls of one key (so a single add takes the same
// script, durability and cluster path as a batch).
import * as check from "../validate.js";

/** A Bloom filter whose bits or counters lie in Redis strings, one key a shard. */
export abstract class ShardedFilter {
  /** The shards' key names, in partition order. */
  protected abstract readonly shardKeys: readonly string[];

  /** Adds many keys; result[i] = 1 when keys[i] was new (a counting filter: when a counter was 0). */
  abstract addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array>;

  /** Tests many keys; result[i] = 1 when keys[i] may have been added by any process. */
  abstract hasMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array>;

  /** The key of shard p. */
  shardKey(p: number): string {
    return this.shardKeys[p];
  }

  /** Adds a key (a counting filter: one reference of it); true when it was new. */
  async add(key: string | Uint8Array): Promise<boolean> {
    return (await this.addMany([check.key("key", key)]))[0] === 1;
  }

  /** True when the key may have been added by any process; false is definite. */
  async has(key: string | Uint8Array): Promise<boolean> {
    return (await this.hasMany([check.key("key", key)]))[0] === 1;
  }
}
