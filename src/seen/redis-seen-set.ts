// SeenSets in Redis, shared by a fleet: exact (RedisDeduplicator), Bloom (RedisBloomFilter),
// windowed and exact (RedisWindowedSeenSet, the default with `window`) or windowed Bloom
// (RedisTimeWindowFilter, `window` with `exact: false`). Each addMany is atomic per key in Redis,
// so among all processes exactly one sees a key as new.
import { InvalidArgumentError } from "../errors.js";
import { asCommander, type RedisCommander } from "../redis/commander.js";
import { keyPrefix } from "../redis/keys.js";
import { RedisBloomFilter } from "../redis/redis-bloom-filter.js";
import { RedisDeduplicator } from "../redis/redis-deduplicator.js";
import { RedisTimeWindowFilter } from "../redis/redis-time-window-filter.js";
import { RedisWindowedSeenSet } from "../redis/redis-windowed-set.js";
import * as check from "../validate.js";
import { ttlSeconds } from "../window/ttl-rules.js";
import { durationMs, windowRing } from "./duration.js";
import { invert } from "./local-seen-set.js";
import type { SeenKey, SeenSet } from "./seen-set.js";
import type { RedisSeenSpec } from "./seen-spec.js";

const DEFAULT_FP_RATE = 1e-6;

/** Opens the Redis seen-set the spec describes (its description is adopted or recorded first). */
export async function redisSeenSet(spec: RedisSeenSpec): Promise<SeenSet> {
  const redis = asCommander(spec.client);
  if (spec.dupefilter !== undefined) return dupefilterSeenSet(redis, spec);
  keyPrefix(spec.name as string);
  const exact = spec.exact ?? true;
  if (typeof exact !== "boolean") throw new InvalidArgumentError("exact", spec.exact, "true or false");
  for (const option of ["ttlMap", "semantics", "now"] as const)
    if (spec[option] !== undefined && (spec.window === undefined || (!exact && option !== "now")))
      throw new InvalidArgumentError(
        option,
        spec[option],
        option === "now"
          ? "nothing without window (a clock serves a windowed set)"
          : "nothing here: it belongs to the exact window (window without exact: false)",
      );
  // A count of keys reported new, kept beside the structure (one INCRBY a batch), for size().
  const counter = `${keyPrefix(spec.name as string)}seen:count`;
  const count = async (fresh: Uint8Array) => {
    let n = 0;
    for (const flag of fresh) n += flag;
    if (n > 0) await redis.send(["INCRBY", counter, String(n)]);
    return fresh;
  };
  if (spec.window !== undefined && exact) {
    if (spec.fpRate !== undefined)
      throw new InvalidArgumentError(
        "fpRate",
        spec.fpRate,
        "no fpRate: the window is exact (use exact: false for the Bloom time window)",
      );
    ttlSeconds("window", spec.window);
    return RedisWindowedSeenSet.open(redis, {
      name: spec.name as string,
      items: spec.items,
      ttl: spec.window,
      ttlMap: spec.ttlMap,
      semantics: spec.semantics,
      durability: spec.durability,
      now: spec.now,
    });
  }
  if (spec.window !== undefined) {
    const { granularity, slices } = windowRing(durationMs("window", spec.window), undefined, undefined, spec.window);
    const options = {
      name: spec.name as string,
      granularity,
      slices,
      itemsPerSlice: check.positiveInteger("items", spec.items ?? 1e6),
      fpRate: check.probability("fpRate", spec.fpRate ?? DEFAULT_FP_RATE),
      now: spec.now,
    };
    const filter = await RedisTimeWindowFilter.open(redis, options);
    return {
      backend: "redis",
      exact: false,
      addMany: async (keys: readonly SeenKey[]) => count(invert(await filter.seenMany(keys))),
      hasMany: (keys: readonly SeenKey[]) => filter.hasMany(keys),
      size: async () => Number((await redis.send(["GET", counter])) ?? 0),
      clear: async () => {
        await filter.destroy();
        await redis.send(["DEL", counter]);
      },
      close: async () => undefined,
    };
  }
  if (!exact) {
    if (spec.items === undefined)
      throw new InvalidArgumentError("items", spec.items, "the keys planned: a Bloom filter in Redis has a fixed size");
    const options = {
      name: spec.name as string,
      items: check.positiveInteger("items", spec.items),
      fpRate: check.probability("fpRate", spec.fpRate ?? DEFAULT_FP_RATE),
      durability: spec.durability,
    };
    let filter = await RedisBloomFilter.open(redis, options);
    return {
      backend: "redis",
      exact: false,
      addMany: async (keys: readonly SeenKey[]) => count(await filter.addMany(keys)),
      hasMany: (keys: readonly SeenKey[]) => filter.hasMany(keys),
      size: async () => Number((await redis.send(["GET", counter])) ?? 0),
      clear: async () => {
        await filter.destroy();
        await redis.send(["DEL", counter]);
        filter = await RedisBloomFilter.open(redis, options);
      },
      close: async () => undefined,
    };
  }
  if (spec.fpRate !== undefined)
    throw new InvalidArgumentError(
      "fpRate",
      spec.fpRate,
      "no fpRate: an exact set has no false positives (use exact: false for a Bloom filter)",
    );
  const dedup = await RedisDeduplicator.open(redis, { name: spec.name as string, durability: spec.durability });
  return {
    backend: "redis",
    exact: true,
    addMany: (keys: readonly SeenKey[]) => dedup.addMany(keys),
    hasMany: (keys: readonly SeenKey[]) => dedup.hasMany(keys),
    removeMany: async (keys: readonly SeenKey[]) =>
      Uint8Array.from(await dedup.removeMany(keys, { all: true }), (left) => (left >= 0 ? 1 : 0)),
    size: () => dedup.size(),
    clear: () => dedup.destroy(),
    close: async () => undefined,
  };
}

/** A Scrapy-Redis dupefilter SET as a SeenSet: SADD decides atomically, as Scrapy's own RFPDupeFilter does. */
function dupefilterSeenSet(redis: RedisCommander, spec: RedisSeenSpec): SeenSet {
  const key = spec.dupefilter;
  if (typeof key !== "string" || key === "")
    throw new InvalidArgumentError("dupefilter", key, 'the dupefilter key, e.g. "spider:dupefilter"');
  if (spec.name !== undefined || spec.window !== undefined || spec.exact === false) {
    throw new InvalidArgumentError("dupefilter", key, "a dupefilter alone: no name, window or exact: false beside it");
  }
  const each = async (command: string, keys: readonly SeenKey[]) => {
    check.keyList("keys", keys);
    const replies = await Promise.all(keys.map((k) => redis.send([command, key, k])));
    return Uint8Array.from(replies, (reply) => (Number(reply) === 1 ? 1 : 0));
  };
  return {
    backend: "redis",
    exact: true,
    addMany: (keys) => each("SADD", keys),
    hasMany: (keys) => each("SISMEMBER", keys),
    removeMany: (keys) => each("SREM", keys),
    size: async () => Number(await redis.send(["SCARD", key])),
    clear: async () => {
      await redis.send(["DEL", key]);
    },
    close: async () => undefined,
  };
}
