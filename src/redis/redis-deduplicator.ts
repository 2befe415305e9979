// Exact dedup shared through Redis: a key's 16-byte MD5 fingerprint is a field of one of 65,536
// bucket hashes ("cs:{name}:fp:<first two bytes>", field = the other 14 bytes, value = the
// reference count). HINCRBY is the check and the insert in one atomic step, so among any number
// of processes exactly one sees a given key as new (its HINCRBY returned 1).
// No counting filter fronts the store here: in a shared store a new key must be written anyway,
// and the write that inserts it also answers "was it new", so a filter would only add work.
import { md5Many } from "../hash/md5.js";
import * as check from "../validate.js";
import type { RedisCommander } from "./commander.js";
import { keyPrefix } from "./keys.js";
import { STORE_REMOVE } from "./scripts.js";

/** Exact, shared, reference-counted dedup of keys by MD5 in Redis. */
export class RedisDeduplicator {
  private readonly prefix: string;

  constructor(private readonly redis: RedisCommander, options: { name: string }) {
    this.prefix = keyPrefix(check.options<{ name: string }>("options", options).name as string);
  }

  /** Records one reference to each key; isNew[i] = 1 for the one caller ever to see keys[i] first, counts[i] its references now. */
  async checkMany(keys: readonly (string | Uint8Array)[]): Promise<{ isNew: Uint8Array; counts: Uint32Array }> {
    const digests = md5Many(check.keyList("keys", keys));
    const replies = await Promise.all(keys.map((_, i) => {
      const fp = digests.subarray(16 * i, 16 * i + 16);
      return this.redis.send(["HINCRBY", this.bucketKey(fp), fp.subarray(2), "1"]);
    }));
    const counts = Uint32Array.from(replies, (reply) => Number(reply));
    return { isNew: counts.map((c) => (c === 1 ? 1 : 0)) as unknown as Uint8Array, counts };
  }

  /** Records one reference; true when this was the first, anywhere. */
  async check(key: string | Uint8Array): Promise<boolean> {
    return (await this.checkMany([check.key("key", key)])).isNew[0] === 1;
  }

  /** Drops one reference per key; the last reference removes the key. Returns the counts left (-1: the key was absent). */
  async removeMany(keys: readonly (string | Uint8Array)[]): Promise<Int32Array> {
    const digests = md5Many(check.keyList("keys", keys));
    const replies = await Promise.all(keys.map((_, i) => {
      const fp = digests.subarray(16 * i, 16 * i + 16);
      return STORE_REMOVE.run(this.redis, [this.bucketKey(fp)], [fp.subarray(2)]);
    }));
    return Int32Array.from(replies, (reply) => Number((reply as number[])[0]));
  }

  /** References to a key (0 when absent). */
  async count(key: string | Uint8Array): Promise<number> {
    const fp = md5Many([check.key("key", key)]);
    return Number((await this.redis.send(["HGET", this.bucketKey(fp), fp.subarray(2)])) ?? 0);
  }

  private bucketKey(fp: Uint8Array): string {
    return `${this.prefix}fp:${((fp[0] << 8) | fp[1]).toString(16).padStart(4, "0")}`;
  }
}
