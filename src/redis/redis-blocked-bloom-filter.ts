// A blocked Bloom filter in Redis with a binary wire format: all k bits of a key lie in one
// 64-byte block, so a key travels as its block number and k 9-bit offsets (4 + 2k bytes of one
// binary argument) instead of k BITFIELD triples of text, and one script call per shard checks
// and sets a whole batch (a key's block read once with GETRANGE, written back once with
// SETRANGE). Positions are computed locally exactly as for BlockedBloomFilter, so the shards hold
// its partitions' bytes: exportBytes() gives format v1 (kind 2). On a cluster the shards spread over the masters as RedisBloomFilter's do.
import { BlockedBloomFilter } from "../bloom/blocked-bloom-filter.js";
import type { PlannedLoad } from "../bloom/geometry.js";
import { partitionBytes, type BitsGeometry } from "../bloom/partitioned-bits.js";
import { optimalBlockedBloom } from "../sizing/bloom.js";
import * as check from "../validate.js";
import { durabilityOption, durableBatch, orFlags, type Durability } from "./durability.js";
import { PositionMapper } from "./positions.js";
import { ShardedFilter } from "./sharded-filter.js";
import { BLOCKED_BATCH } from "./scripts.js";
import type { RedisCommander } from "./send.js";
import {
  adoptShardedGeometry,
  MAX_SHARD_BYTES,
  parseShardedDescription,
  preallocate,
  readShards,
  shardKeys,
} from "./sharded-bits.js";

/** Options of RedisBlockedBloomFilter.open. */
export interface RedisBlockedBloomFilterOptions {
  readonly name: string;
  readonly items: number;
  readonly fpRate: number;
  /** Largest shard key in bytes (default 32 MiB, at most 64 MiB). */
  readonly maxShardBytes?: number;
  /** "local" (default) or "replicated" (WAIT for a replica of every master written to). */
  readonly durability?: Durability;
}

/** Keys per script call: a reply of one character each, a payload of 4 + 2k bytes each. */
const KEYS_PER_CALL = 1024;

/** Checks a blocked filter's description before anything is sized from it. */
const parseDescription = parseShardedDescription("blocked-bloom", "blocked", MAX_SHARD_BYTES / 64);

/** A blocked Bloom filter in Redis strings, safe under concurrent writers, with a binary wire format. */
export class RedisBlockedBloomFilter extends ShardedFilter {
  private readonly mapper: PositionMapper;
  protected readonly shardKeys: readonly string[];

  private constructor(
    private readonly redis: RedisCommander,
    readonly name: string,
    readonly geometry: BitsGeometry,
    readonly planned: PlannedLoad,
    /** True when the shards carry their own hash tags, spread over a cluster's masters. */
    readonly spread: boolean,
    private readonly durability: Durability,
  ) {
    super();
    this.mapper = new PositionMapper(geometry.slots, geometry.partitions, geometry.hashes, true);
    this.shardKeys = shardKeys(name, geometry.partitions, spread, "k");
  }

  /** Opens the filter `name`, recording its geometry if no process has, else adopting the recorded one. */
  static async open(redis: RedisCommander, options: RedisBlockedBloomFilterOptions): Promise<RedisBlockedBloomFilter> {
    const value = await adoptShardedGeometry(
      redis,
      options,
      "blocked",
      optimalBlockedBloom,
      "blocked-bloom",
      parseDescription,
    );
    const filter = new RedisBlockedBloomFilter(
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

  /** Adds many keys; result[i] = 1 when keys[i] was new (no process had set all its bits). */
  async addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    const list = check.keyList("keys", keys);
    return durableBatch(this.redis, this.durability, this.shardKeys, () => this.run(list, true), orFlags);
  }

  /** Tests many keys; result[i] = 1 when keys[i] may have been added by any process. */
  hasMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    return this.run(check.keyList("keys", keys), false);
  }

  /** The filter as a serialized BlockedBloomFilter (format v1, kind 2), read shard by shard. */
  exportBytes(): Promise<Uint8Array> {
    return readShards(this.redis, this.shardKeys, BlockedBloomFilter.fromGeometry(this.geometry, this.planned, 0));
  }

  private async run(keys: readonly (string | Uint8Array)[], add: boolean): Promise<Uint8Array> {
    const out = new Uint8Array(keys.length);
    const k = this.geometry.hashes;
    const words = this.mapper.words;
    const record = 4 + 2 * k;
    const calls: Promise<void>[] = [];
    for (const { at: from, positions, shard, members: chunk } of this.mapper.byShard(keys, KEYS_PER_CALL)) {
      const payload = Buffer.allocUnsafe(chunk.length * record);
      chunk.forEach((j, at) => {
        const base = words * j;
        payload.writeUInt32LE(positions[base + 1], at * record);
        for (let b = 0; b < k; b++) payload.writeUInt16LE(positions[base + 2 + b], at * record + 4 + 2 * b);
      });
      // Sent twice after a lost reply (a failover), a second run sees the first one's bits: an add then reports its keys new.
      let twice = false;
      const reply = BLOCKED_BATCH.run(this.redis, [this.shardKey(shard)], [String(k), add ? "1" : "0", payload], {
        ambiguous: () => (twice = true),
      });
      calls.push(
        reply.then((flags) => {
          const text = String(flags);
          chunk.forEach(
            (j, at) =>
              (out[from + j] = add
                ? twice
                  ? 1
                  : text.charCodeAt(at) === 0x31
                    ? 0
                    : 1
                : text.charCodeAt(at) === 0x31
                  ? 1
                  : 0),
          );
        }),
      );
    }
    await Promise.all(calls);
    return out;
  }
}
