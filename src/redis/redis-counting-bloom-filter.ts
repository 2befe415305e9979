// A counting Bloom filter in Redis: 4-bit counters in shard strings, incremented with
// `BITFIELD shard OVERFLOW SAT INCRBY u4 #i 1 ...` (a counter stops at 15), so the semantics
// match the in-memory CountingBloomFilter: a saturated counter never moves again, and a remove
// (a Lua script, atomic per shard batch) only happens when every counter of the key is non-zero.
import * as check from "../validate.js";
import { MAX_HASHES, resolveGeometry } from "../bloom/geometry.js";
import { partitionBytes, type BitsGeometry } from "../bloom/partitioned-bits.js";
import type { RedisCommander } from "./commander.js";
import { adoptDescription } from "./description.js";
import {
  boundTotal,
  DEFAULT_SHARD_BYTES,
  layoutField,
  MAX_SHARD_BYTES,
  preallocate,
  shardBytesFor,
  shardKeys,
} from "./sharded-bits.js";
import { ShardedFilter } from "./sharded-filter.js";
import { optimalBloom } from "../sizing/bloom.js";
import { keyPrefix } from "./keys.js";
import { bitfieldPerKey, PositionMapper } from "./positions.js";
import { COUNTING_REMOVE } from "./scripts.js";

const KEYS_PER_COMMAND = 256;
const INCRBY_COUNTER = ["INCRBY", "u4"];
const GET_COUNTER = ["GET", "u4"];
const ONE = ["1"];
/** Counter i as BITFIELD's offset in units of the field's width. */
const counterOffset = (i: number): string => `#${i}`;

/** Options of RedisCountingBloomFilter. */
export interface RedisCountingBloomFilterOptions {
  readonly name: string;
  readonly items: number;
  readonly fpRate: number;
  /** Largest shard key in bytes (default 32 MiB, at most 64 MiB). */
  readonly maxShardBytes?: number;
}

/** A shared counting Bloom filter with deletion. */
export class RedisCountingBloomFilter extends ShardedFilter {
  readonly geometry: BitsGeometry;
  /** True when the shards carry their own hash tags, spread over a cluster's masters (opened with `open` on a cluster). */
  readonly spread: boolean;
  private readonly mapper: PositionMapper;
  protected readonly shardKeys: readonly string[];

  /**
   * A filter sized from these options, without asking Redis: processes must agree on the options.
   * Prefer `open`, which records the geometry in Redis or adopts the one recorded there.
   */
  constructor(
    private readonly redis: RedisCommander,
    options: RedisCountingBloomFilterOptions,
    /* open() only */ adopted?: { geometry: BitsGeometry; spread: boolean },
  ) {
    super();
    const opts = check.options<RedisCountingBloomFilterOptions>("options", options);
    const maxShardBytes =
      opts.maxShardBytes === undefined
        ? DEFAULT_SHARD_BYTES
        : check.integerInRange("maxShardBytes", opts.maxShardBytes, 64, MAX_SHARD_BYTES);
    this.geometry =
      adopted?.geometry ??
      resolveGeometry(
        "counting",
        { items: opts.items, fpRate: opts.fpRate, maxPartitionBytes: Math.floor(maxShardBytes / 64) * 64 },
        4,
      ).geometry;
    this.spread = adopted?.spread ?? false;
    this.mapper = new PositionMapper(this.geometry.slots, this.geometry.partitions, this.geometry.hashes);
    this.shardKeys = shardKeys(opts.name as string, this.geometry.partitions, this.spread, "c");
  }

  /** Opens the filter `name`: records its geometry if no process has, else adopts the recorded one. */
  static async open(
    redis: RedisCommander,
    options: RedisCountingBloomFilterOptions,
  ): Promise<RedisCountingBloomFilter> {
    const opts = check.options<RedisCountingBloomFilterOptions>("options", options) as RedisCountingBloomFilterOptions;
    // On a cluster the counters are cut into at least SPREAD_SHARDS shards, each with its own tag.
    const counterBytes = (optimalBloom({ items: opts.items as number, fpRate: opts.fpRate as number }).bits * 4) / 8;
    const proposed = new RedisCountingBloomFilter(redis, {
      ...opts,
      maxShardBytes: shardBytesFor(redis, counterBytes, opts.maxShardBytes ?? DEFAULT_SHARD_BYTES),
    }).geometry;
    const description = {
      kind: "counting",
      slots: proposed.slots,
      partitions: proposed.partitions,
      hashes: proposed.hashes,
      counterBits: 4,
      ...layoutField(redis),
    };
    const { value } = await adoptDescription(
      redis,
      `${keyPrefix(opts.name as string)}c:meta`,
      description,
      (fields) => {
        fields.kind("counting");
        fields.integer("counterBits", 4, 4);
        const slots = fields.integer("slots", 1, (MAX_SHARD_BYTES * 8) / 4);
        const partitions = fields.integer("partitions", 1, 2 ** 16);
        const hashes = fields.integer("hashes", 1, MAX_HASHES);
        boundTotal(fields, partitionBytes({ layout: "counting", slots, counterBits: 4 }), partitions);
        const layoutSpread =
          fields.json.layout === undefined
            ? false
            : fields.json.layout === "spread"
              ? true
              : fields.fail("layout", '"spread" or absent');
        return {
          geometry: { layout: "counting", slots, partitions, hashes, counterBits: 4 } satisfies BitsGeometry,
          spread: layoutSpread,
        };
      },
    );
    const filter = new RedisCountingBloomFilter(redis, opts, value);
    await preallocate(redis, filter.shardKeys, partitionBytes(value.geometry));
    return filter;
  }

  /** Adds keys (one reference each); result[i] = 1 when keys[i] was absent before. */
  addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    // INCRBY replies with the new value: 1 means the counter was 0, so the key was absent.
    const command = {
      name: "BITFIELD",
      prefix: ["OVERFLOW", "SAT"],
      shardKey: (p: number) => this.shardKey(p),
      field: INCRBY_COUNTER,
      offset: counterOffset,
      value: ONE,
    };
    return bitfieldPerKey(this.redis, this.mapper, check.keyList("keys", keys), command, (values) =>
      values.some((v) => v === 1) ? 1 : 0,
    );
  }

  /** result[i] = 1 when every counter of keys[i] is non-zero. */
  hasMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    return bitfieldPerKey(this.redis, this.mapper, check.keyList("keys", keys), this.readCounters, (values) =>
      values.every((v) => v > 0) ? 1 : 0,
    );
  }

  /** The smallest counter of a key (its multiplicity, up to 15). */
  async multiplicity(key: string | Uint8Array): Promise<number> {
    return (
      await bitfieldPerKey(this.redis, this.mapper, [check.key("key", key)], this.readCounters, (values) =>
        Math.min(...values),
      )
    )[0];
  }

  private get readCounters() {
    return {
      name: "BITFIELD_RO",
      shardKey: (p: number) => this.shardKey(p),
      field: GET_COUNTER,
      offset: counterOffset,
    };
  }

  /** Removes one reference of each present key; result[i] = 1 when keys[i] was present and removed. */
  async removeMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    const list = check.keyList("keys", keys);
    const out = new Uint8Array(list.length);
    const k = this.geometry.hashes;
    // In order, batch after batch: a key removed twice in one call must see its first removal.
    for (const { at: from, positions, shard, members: chunk } of this.mapper.byShard(list, KEYS_PER_COMMAND)) {
      const reply = (await COUNTING_REMOVE.run(
        this.redis,
        [this.shardKey(shard)],
        [String(k), String(chunk.length), ...chunk.flatMap((j) => counters(positions, j, k))],
      )) as number[];
      chunk.forEach((j, at) => (out[from + j] = Number(reply[at])));
    }
    return out;
  }
}

/** "#i" offsets (counter i of 4 bits) of key j's k counters. */
function counters(positions: Uint32Array, j: number, k: number): string[] {
  return Array.from({ length: k }, (_, b) => `#${positions[(k + 1) * j + 1 + b]}`);
}
