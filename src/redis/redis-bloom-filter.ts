// A Bloom filter stored as Redis bitmaps, shared by every process that opens it by name. Bit
// positions are computed locally (WASM, the in-memory hashing), the bits split into shard keys
// of bounded size chosen by hash, all k bits of a key in one shard. An add is one
// `BITFIELD shard SET u1 o 1 ...` whose replies are the old bits (the key was new iff one was 0),
// atomic per key; a batch sends one BITFIELD per shard touched, pipelined. Reads use BITFIELD_RO.
// The shards hold exactly the bytes of a BloomFilter's partitions, so the serialized format
// moves filters between memory and Redis.
import { InvalidArgumentError } from "../errors.js";
import { BloomFilter } from "../bloom/bloom-filter.js";
import type { PlannedLoad } from "../bloom/geometry.js";
import { partitionBytes, type BitsGeometry } from "../bloom/partitioned-bits.js";
import { bloomForHashes, probeThriftyBloom, type BloomPlan } from "../sizing/bloom.js";
import * as check from "../validate.js";
import type { RedisCommander } from "./commander.js";
import { DESCRIPTION_VERSION, parseDescription } from "./description.js";
import { durabilityOption, durableBatch, orFlags, type Durability } from "./durability.js";
import { keyPrefix } from "./keys.js";
import {
  adoptShardedGeometry,
  MAX_SHARD_BYTES,
  parseShardedDescription,
  preallocate,
  readShards,
  shardKeys,
} from "./sharded-bits.js";
import { ShardedFilter } from "./sharded-filter.js";
import { bitfieldPerKey, PositionMapper, redisBitOffset } from "./positions.js";

/** Options of RedisBloomFilter.open. */
export interface RedisBloomFilterOptions {
  /** The shared name: every key is "cs:{name}:...". */
  readonly name: string;
  /** Planned items and FP rate (used when the filter does not exist yet). */
  readonly items: number;
  readonly fpRate: number;
  /** Largest shard key in bytes (default 32 MiB; Redis strings stop at 512 MB). */
  readonly maxShardBytes?: number;
  /** "local" (default): a key is new once its master has it. "replicated": only once a replica has it too (WAIT). */
  readonly durability?: Durability;
  /**
   * Bit operations per key (k). Each costs Redis about half the CPU of a whole SADD and the client
   * three or four words of text, so by default the filter takes the fewest whose memory stays within 1.6x of the minimum
   * (sizing.probeThriftyBloom: k = 5 and 29 bits a key at p = 1e-4, instead of 13 and 19.2),
   * sized to meet fpRate with them.
   */
  readonly hashes?: number;
}

/** Checks a Bloom filter's description: every size bounded before anything is sized from it. */
const parseBloomDescription = parseShardedDescription("bloom", "standard", MAX_SHARD_BYTES * 8);

/** Reading first pays when more than 3/4 of the keys are repeats: 3k words for all against 4k for the new ones. */
const READ_FIRST_ABOVE = 0.75;
const SET_BIT = ["SET", "u1"];
const GET_BIT = ["GET", "u1"];
const ONE = ["1"];
/** A bit position as BITFIELD's offset text (Redis numbers bits from the top of each byte). */
const redisOffsetText = (bit: number): string => String(redisBitOffset(bit));

/** A Bloom filter in Redis bitmaps, safe under concurrent writers. */
export class RedisBloomFilter extends ShardedFilter {
  private readonly mapper: PositionMapper;
  /** Shard key names: one hash tag for all (one slot), or one tag a shard (spread over a cluster). */
  protected readonly shardKeys: readonly string[];
  /** Share of keys that were not new in the recent adds (halved each batch): decides whether an add reads first. */
  private repeatShare = 0.5;

  private constructor(
    private readonly redis: RedisCommander,
    readonly name: string,
    readonly geometry: BitsGeometry,
    readonly planned: PlannedLoad,
    /** True when the shards carry their own hash tags, spread over a cluster's masters. */
    readonly spread = false,
    private readonly durability: Durability = "local",
  ) {
    super();
    this.mapper = new PositionMapper(geometry.slots, geometry.partitions, geometry.hashes);
    this.shardKeys = shardKeys(name, geometry.partitions, spread, "b");
  }

  /** Opens the filter `name`, creating its description if no process has; an existing one keeps its own geometry. */
  static async open(redis: RedisCommander, options: RedisBloomFilterOptions): Promise<RedisBloomFilter> {
    const hashes = check.options<RedisBloomFilterOptions>("options", options).hashes;
    const size = hashes === undefined ? probeThriftyBloom : (load: BloomPlan) => bloomForHashes({ ...load, hashes });
    const value = await adoptShardedGeometry(redis, options, "standard", size, "bloom", parseBloomDescription);
    const filter = new RedisBloomFilter(
      redis,
      options.name,
      value.geometry,
      value.planned,
      value.spread,
      durabilityOption(options.durability),
    );
    await preallocate(redis, filter.shardKeys, partitionBytes(value.geometry));
    return filter;
  }

  /** Loads a serialized BloomFilter (format v1) into Redis under `name`, replacing what was there. */
  static async importBytes(redis: RedisCommander, name: string, bytes: Uint8Array): Promise<RedisBloomFilter> {
    const prefix = keyPrefix(name);
    const source = BloomFilter.deserialize(bytes);
    try {
      const { slots, partitions, hashes } = source.store.geometry;
      if (source.store.bytesPerPartition > MAX_SHARD_BYTES)
        throw new InvalidArgumentError(
          "bytes",
          `${source.store.bytesPerPartition}-byte partitions`,
          `a filter with partitions of at most ${MAX_SHARD_BYTES} bytes`,
        );
      const meta = JSON.stringify({
        v: DESCRIPTION_VERSION,
        kind: "bloom",
        slots,
        partitions,
        hashes,
        items: source.planned.items,
        fpRate: source.planned.fpRate,
      });
      const writes: Promise<unknown>[] = [redis.send(["SET", `${prefix}meta`, meta])];
      source.store.partitions.forEach((part, p) =>
        writes.push(redis.send(["SET", `${prefix}b:${p}`, part.view().slice()])),
      );
      await Promise.all(writes);
      const { geometry, planned } = parseDescription(`${prefix}meta`, meta, parseBloomDescription);
      return new RedisBloomFilter(redis, name, geometry, planned);
    } finally {
      source.dispose();
    }
  }

  /** Adds many keys; result[i] = 1 when keys[i] was new. */
  addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    const list = check.keyList("keys", keys);
    return durableBatch(this.redis, this.durability, this.shardKeys, () => this.run(list, true), orFlags);
  }

  /** Tests many keys. */
  hasMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    return this.run(check.keyList("keys", keys), false);
  }

  /** The filter as a serialized BloomFilter (format v1), read shard by shard. */
  exportBytes(): Promise<Uint8Array> {
    return readShards(this.redis, this.shardKeys, BloomFilter.fromGeometry(this.geometry, this.planned, 0));
  }

  /** Deletes every key of the filter. */
  async destroy(): Promise<void> {
    // One DEL a key: spread shards live in different slots, and a DEL may not cross slots.
    await Promise.all([`${keyPrefix(this.name)}meta`, ...this.shardKeys].map((key) => this.redis.send(["DEL", key])));
  }

  private async run(keys: readonly (string | Uint8Array)[], add: boolean): Promise<Uint8Array> {
    const all = (values: readonly number[]) => (values.every((v) => v === 1) ? 1 : 0);
    const test = {
      name: "BITFIELD_RO",
      shardKey: (p: number) => this.shardKey(p),
      field: GET_BIT,
      offset: redisOffsetText,
    };
    const set = {
      name: "BITFIELD",
      shardKey: (p: number) => this.shardKey(p),
      field: SET_BIT,
      offset: redisOffsetText,
      value: ONE,
      ambiguous: 1,
    };
    if (!add) return bitfieldPerKey(this.redis, this.mapper, keys, test, all);
    // All k bits of a key go in one BITFIELD whose SET replies are the old bits, so the add is
    // atomic per key: exactly one writer sees a 0. Bits are only ever set, so a key whose k bits
    // all read 1 is not new: when most keys are repeats (a raw crawl stream), reading first (3
    // words a bit) and setting only the rest costs less than setting all (4 words a bit); when
    // most are new (behind a recent-key cache) it costs a round trip and saves nothing. Which
    // way is cheaper follows the share of repeats in the last batches.
    const readFirst = this.repeatShare > READ_FIRST_ABOVE;
    const out = new Uint8Array(keys.length);
    let candidates = keys;
    let index: number[] | undefined;
    if (readFirst) {
      const present = await bitfieldPerKey(this.redis, this.mapper, keys, test, all);
      index = [];
      for (let i = 0; i < present.length; i++) if (present[i] === 0) index.push(i);
      candidates = index.map((i) => keys[i]);
    }
    if (candidates.length > 0) {
      const fresh = await bitfieldPerKey(this.redis, this.mapper, candidates, set, (values) => all(values) ^ 1);
      if (index === undefined) out.set(fresh);
      else index.forEach((i, at) => (out[i] = fresh[at]));
    }
    if (keys.length > 0) {
      let repeats = 0;
      for (let i = 0; i < out.length; i++) repeats += out[i] ^ 1;
      this.repeatShare = (this.repeatShare + repeats / keys.length) / 2;
    }
    return out;
  }
}
