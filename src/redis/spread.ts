// Spreading one structure over a Redis Cluster: each shard gets a hash tag of its own, so the
// cluster places shards on different masters. Tags are chosen so shard p of P lands in slot
// range [p * 16384 / P, (p + 1) * 16384 / P): with the slots split evenly over the masters (as
// `redis-cli --cluster create` does), every master holds the same number of shards, instead of
// the binomial spread that random tags give. Every process computes the same tags.
import { keySlot } from "./keys.js";

/** Shards a spread structure is cut into at least: 256 over 3 masters is 85 or 86 each. */
export const SPREAD_SHARDS = 256;
const SLOTS = 16384;

/** The hash tag contents of P shards of structure `name`, balanced over the slot space. */
export function spreadTags(name: string, shards: number): string[] {
  const tags: string[] = [];
  for (let p = 0; p < shards; p++) {
    const from = Math.floor((p * SLOTS) / shards);
    const to = Math.max(from + 1, Math.floor(((p + 1) * SLOTS) / shards));
    // A tag hashes into a range of width w with chance w / 16384: about P tries a shard.
    for (let s = 0; ; s++) {
      const tag = `${name}/${p}/${s.toString(36)}`;
      const slot = keySlot(`{${tag}}`);
      if (slot >= from && slot < to) {
        tags.push(tag);
        break;
      }
    }
  }
  return tags;
}
