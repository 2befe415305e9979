// What the Redis filters kept as shards of bits share: shard key names (one tag for the whole
// structure, or one tag a shard spread over a cluster), the shard size that spreads a structure
// over at least SPREAD_SHARDS shards on a cluster, the checked description of a sharded
// geometry, and reading the shards back into an in-memory filter of the same geometry.
import type { BitFilter } from "../bloom/bit-filter.js";
import { MAX_HASHES, resolveGeometry, type PlannedLoad } from "../bloom/geometry.js";
import { partitionBytes, type BitsGeometry, type Layout } from "../bloom/partitioned-bits.js";
import { FilterTooLargeError, FormatError } from "../errors.js";
import { MAX_PLANNED_BYTES, type BloomPlan, type BloomSize } from "../sizing/bloom.js";
import * as check from "../validate.js";
import { adoptDescription, type Fields } from "./description.js";
import { durabilityOption, type Durability } from "./durability.js";
import { keyPrefix } from "./keys.js";
import { PREALLOCATE } from "./scripts.js";
import type { RedisCommander } from "./send.js";
import { spreadTags, SPREAD_SHARDS } from "./spread.js";

/** Default largest shard key: 32 MiB. */
export const DEFAULT_SHARD_BYTES = 32 * 2 ** 20;
/** Largest shard key allowed: 64 MiB (Redis strings stop at 512 MB). */
export const MAX_SHARD_BYTES = 64 * 2 ** 20;
/** Most shards a description may declare: 2^16 shards of 64 MiB is 4 TiB of bits. */
const MAX_SHARDS = 2 ** 16;

/** Shard keys of structure `name`: "cs:{name}:<suffix>:<p>" in one slot, or "cs:{<tag p>}:<suffix>" spread. */
export function shardKeys(name: string, partitions: number, spread: boolean, suffix: string): string[] {
  return spread
    ? spreadTags(name, partitions).map((tag) => `cs:{${tag}}:${suffix}`)
    : Array.from({ length: partitions }, (_, p) => `${keyPrefix(name)}${suffix}:${p}`);
}

/** The largest shard for a structure of `totalBytes`: on a cluster small enough to make SPREAD_SHARDS shards. */
export function shardBytesFor(redis: RedisCommander, totalBytes: number, maxShardBytes: number): number {
  const spreadBytes = redis.cluster === true ? Math.ceil(totalBytes / SPREAD_SHARDS / 64) * 64 : Infinity;
  return Math.max(64, Math.min(Math.floor(maxShardBytes / 64) * 64, spreadBytes));
}

/** The layout field of a description: spread over a cluster, or absent (one slot). */
export function layoutField(redis: RedisCommander): { layout?: "spread" } {
  return redis.cluster === true ? { layout: "spread" } : {};
}

/** What opening a sharded filter needs of its options. */
export interface ShardedOptions {
  readonly name: string;
  readonly items: number;
  readonly fpRate: number;
  readonly maxShardBytes?: number;
  readonly durability?: Durability;
}

/**
 * The geometry of sharded filter `name`: the one another process recorded, else this load's,
 * recorded now. `size` sizes the whole filter, so on a cluster it is cut into at least
 * SPREAD_SHARDS shards; `describe` turns the geometry into the description's own fields.
 */
export async function adoptShardedGeometry(
  redis: RedisCommander,
  options: ShardedOptions,
  layout: Layout,
  size: (load: BloomPlan) => BloomSize,
  kind: string,
  parse: (fields: Fields) => { geometry: BitsGeometry; planned: PlannedLoad; spread: boolean },
): Promise<{ geometry: BitsGeometry; planned: PlannedLoad; spread: boolean }> {
  const opts = check.options<ShardedOptions>("options", options);
  const prefix = keyPrefix(opts.name as string);
  const maxShardBytes =
    opts.maxShardBytes === undefined
      ? DEFAULT_SHARD_BYTES
      : check.integerInRange("maxShardBytes", opts.maxShardBytes, 64, MAX_SHARD_BYTES);
  const shardBytes = shardBytesFor(
    redis,
    size({ items: opts.items as number, fpRate: opts.fpRate as number }).bytes,
    maxShardBytes,
  );
  const { geometry, plan } = resolveGeometry(
    layout,
    { items: opts.items, fpRate: opts.fpRate, maxPartitionBytes: shardBytes },
    undefined,
    size,
  );
  const proposed = {
    kind,
    slots: geometry.slots,
    partitions: geometry.partitions,
    hashes: geometry.hashes,
    items: plan.items,
    fpRate: plan.fpRate,
    ...layoutField(redis),
  };
  return (await adoptDescription(redis, `${prefix}meta`, proposed, parse, durabilityOption(opts.durability))).value;
}

/** Refuses a description whose fields, each in range, multiply past 1 TiB (the bound of a filter in memory). */
export function boundTotal(fields: Fields, shardBytes: number, partitions: number): void {
  if (shardBytes * partitions > MAX_PLANNED_BYTES)
    fields.fail(
      "partitions",
      `a count whose shards of ${shardBytes} bytes hold at most ${MAX_PLANNED_BYTES} bytes in all (1 TiB, as a filter in memory)`,
    );
}

/** Checks a sharded filter's description of `kind` (slots per shard bounded by `maxSlots`) before anything is sized from it. */
export function parseShardedDescription(kind: string, layout: Layout, maxSlots: number) {
  return (fields: Fields): { geometry: BitsGeometry; planned: PlannedLoad; spread: boolean } => {
    fields.kind(kind);
    const slots = fields.integer("slots", 1, maxSlots);
    const partitions = fields.integer("partitions", 1, MAX_SHARDS);
    const hashes = fields.integer("hashes", 1, MAX_HASHES);
    const items = fields.optionalNumber("items", 0, 2 ** 53);
    const fpRate = fields.optionalNumber("fpRate", 0, 1);
    if (!Number.isInteger(items)) fields.fail("items", "an integer");
    boundTotal(fields, partitionBytes({ layout, slots }), partitions);
    const spread =
      fields.json.layout === undefined
        ? false
        : fields.json.layout === "spread"
          ? true
          : fields.fail("layout", '"spread" or absent');
    return { geometry: { layout, slots, partitions, hashes }, planned: { items, fpRate }, spread };
  };
}

/**
 * Creates each missing shard at its full size in one allocation (existing shards keep their
 * bits), once Redis has room for them all: what the missing shards need is checked first against
 * what its masters have free (maxmemory, or the machine's memory without one, less used_memory),
 * so a filter too large for this Redis is FilterTooLargeError before a byte is taken, not a
 * Redis filled to OOM.
 */
export async function preallocate(redis: RedisCommander, keys: readonly string[], bytes: number): Promise<void> {
  const exists = await Promise.all(keys.map((key) => redis.send(["EXISTS", key])));
  const missing = keys.filter((_, i) => Number(exists[i]) === 0);
  if (missing.length === 0) return;
  const needed = missing.length * bytes;
  const free = await freeBytes(redis, missing);
  if (free !== undefined && needed > free) {
    throw new FilterTooLargeError(
      needed,
      `its ${missing.length} shards of ${bytes} bytes need more than the ${free} bytes Redis has free (maxmemory, or the machine's memory, less used_memory, over its masters); plan fewer items or a higher fpRate, or give Redis more memory`,
    );
  }
  await Promise.all(missing.map((key) => PREALLOCATE.run(redis, [key], [String(bytes)])));
}

/** Bytes free over the masters holding `keys`, by INFO memory; undefined when a reply does not say. */
async function freeBytes(redis: RedisCommander, keys: readonly string[]): Promise<number | undefined> {
  const routes = redis.mastersOf ? redis.mastersOf(keys) : [keys[0]];
  const replies = await Promise.all(routes.map((route) => redis.send(["INFO", "memory"], { route })));
  let free = 0;
  for (const reply of replies) {
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(String(reply))?.[1]);
    const used = field("used_memory");
    const limit = field("maxmemory") || field("total_system_memory");
    if (!Number.isFinite(used) || !Number.isFinite(limit) || limit === 0) return undefined;
    free += Math.max(0, limit - used);
  }
  return free;
}

/** Reads every shard into `filter` (an empty in-memory filter of the same geometry) and returns its serialized form. */
export async function readShards(
  redis: RedisCommander,
  keys: readonly string[],
  filter: BitFilter,
): Promise<Uint8Array> {
  try {
    const bytes = partitionBytes(filter.store.geometry);
    const shards = await Promise.all(keys.map((key) => redis.send(["GET", key])));
    filter.store.partitions.forEach((part, p) => {
      const value = shards[p];
      if (value === null || value === undefined) return;
      if (!(value instanceof Uint8Array))
        throw new FormatError(
          `shard ${p} came back as ${typeof value}, not bytes: the client must return bulk strings as Buffers (fromNodeRedis does)`,
          "ERR_BAD_PARAMS",
        );
      part.arena.u8.set(value.subarray(0, bytes), part.bitsPtr);
    });
    return filter.serialize();
  } finally {
    filter.dispose();
  }
}
