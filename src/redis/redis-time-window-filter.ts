// The time window in Redis: one bitmap per slice ("cs:{name}:w:<granule>"), its key expiring at
// the slice's end plus the window. Which slices are live is computed from the clock, as in
// memory (an expired-but-not-yet-evicted key is never consulted); checking the live slices and
// recording in the current one is one Lua script per batch, so concurrent processes agree. The
// slices' size is recorded in a description ("cs:{name}:w:meta") by the first process and adopted
// by the others, so a process started with another itemsPerSlice or fpRate reads the same bits.
import { MAX_HASHES } from "../bloom/geometry.js";
import { InvalidArgumentError } from "../errors.js";
import { optimalBloom } from "../sizing/bloom.js";
import * as check from "../validate.js";
import { granularity, granuleOf, granuleStart, type Granularity } from "../window/granularity.js";
import type { RedisCommander } from "./commander.js";
import { adoptDescription, once } from "./description.js";
import { keyPrefix } from "./keys.js";
import { PositionMapper, redisBitOffset } from "./positions.js";
import { spreadTags, SPREAD_SHARDS } from "./spread.js";
import { WINDOW_SEEN } from "./scripts.js";

/** Options of RedisTimeWindowFilter. */
export interface RedisTimeWindowFilterOptions {
  readonly name: string;
  readonly granularity: Granularity;
  readonly slices: number;
  readonly itemsPerSlice: number;
  readonly fpRate: number;
  /** The clock in ms since the epoch (default Date.now). */
  readonly now?: () => number;
}

const MAX_SLICE_BYTES = 64 * 2 ** 20;
const KEYS_PER_CALL = 512;
/** The window script's modes: test only, record the keys no slice has, record every key. */
const MODES = { test: "0", seen: "1", add: "2" } as const;

/** Same guarantee as TimeWindowFilter: seen at every time in [t, t + window - granularity], not after t + window. */
export class RedisTimeWindowFilter {
  readonly granularity: Granularity;
  readonly slices: number;
  private readonly proposed: Record<string, unknown>;
  private readonly name: string;
  /** The shards' hash tags once the description is read (spread over a cluster), else undefined. */
  private tags: readonly string[] | undefined;
  private readonly clock: () => number;
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisCommander,
    options: RedisTimeWindowFilterOptions,
  ) {
    const opts = check.options<RedisTimeWindowFilterOptions>("options", options);
    this.prefix = keyPrefix(opts.name as string);
    this.name = opts.name as string;
    this.granularity = granularity(opts.granularity);
    this.slices = check.positiveInteger("slices", opts.slices, 100_000);
    const size = optimalBloom({
      items: check.positiveInteger("itemsPerSlice", opts.itemsPerSlice),
      fpRate: check.probability("fpRate", opts.fpRate),
    });
    if (size.bytes > MAX_SLICE_BYTES)
      throw new InvalidArgumentError(
        "itemsPerSlice",
        opts.itemsPerSlice,
        `a slice of at most ${MAX_SLICE_BYTES} bytes (this one needs ${size.bytes})`,
      );
    if (opts.now !== undefined && typeof opts.now !== "function")
      throw new InvalidArgumentError("now", opts.now, "a function returning milliseconds");
    this.clock = opts.now ?? Date.now;
    // On a cluster each slice is cut into SPREAD_SHARDS shards, each with its own tag: a key's
    // shard is chosen from its hash, and one script call checks a batch of a shard's keys
    // against that shard's live slices (all under one tag, so the script may touch them all).
    this.proposed =
      redis.cluster === true
        ? {
            kind: "window",
            granularity: this.granularity,
            slices: this.slices,
            bits: Math.ceil(size.bits / SPREAD_SHARDS),
            hashes: size.hashes,
            shards: SPREAD_SHARDS,
            layout: "spread",
          }
        : { kind: "window", granularity: this.granularity, slices: this.slices, bits: size.bits, hashes: size.hashes };
  }

  /** Opens the window, recording its description or adopting the one another process recorded, before returning. */
  static async open(redis: RedisCommander, options: RedisTimeWindowFilterOptions): Promise<RedisTimeWindowFilter> {
    const filter = new RedisTimeWindowFilter(redis, options);
    await filter.slicesMapper();
    return filter;
  }

  /** True when the key was seen within the window; otherwise records it now. */
  async seen(key: string | Uint8Array, now?: number): Promise<boolean> {
    return (await this.seenMany([check.key("key", key)], now))[0] === 1;
  }

  /** seen() for many keys at one instant, in order. */
  seenMany(keys: readonly (string | Uint8Array)[], now?: number): Promise<Uint8Array> {
    return this.run(check.keyList("keys", keys), now, "seen");
  }

  /** Records the key now, refreshing its age; true when it was new to the window (TimeWindowFilter.add). */
  async add(key: string | Uint8Array, now?: number): Promise<boolean> {
    return (await this.addMany([check.key("key", key)], now))[0] === 1;
  }

  /** add() for many keys at one instant; result[i] = 1 when keys[i] was new to the window (a repeat inside the batch is not). */
  async addMany(keys: readonly (string | Uint8Array)[], now?: number): Promise<Uint8Array> {
    return (await this.run(check.keyList("keys", keys), now, "add")).map((seen) => seen ^ 1);
  }

  /** True when the key was seen within the window (records nothing). */
  async has(key: string | Uint8Array, now?: number): Promise<boolean> {
    return (await this.hasMany([check.key("key", key)], now))[0] === 1;
  }

  /** has() for many keys. */
  hasMany(keys: readonly (string | Uint8Array)[], now?: number): Promise<Uint8Array> {
    return this.run(check.keyList("keys", keys), now, "test");
  }

  /** Deletes the slices live at `now` (older ones have expired) and the description. */
  async destroy(now?: number): Promise<void> {
    const t = now ?? this.clock();
    const { mapper } = await this.slicesMapper();
    const g = granuleOf(this.granularity, t);
    const keys = [`${this.prefix}w:meta`];
    for (let shard = 0; shard < mapper.partitions; shard++)
      for (let i = -1; i < this.slices; i++) keys.push(this.sliceKey(g - i, shard));
    // One DEL a key: spread shards live in different slots.
    await Promise.all(keys.map((key) => this.redis.send(["DEL", key])));
  }

  /** The key of the slice holding granule g (of shard `shard` when spread over a cluster; known once opened or used). */
  sliceKey(g: number, shard = 0): string {
    return this.tags === undefined ? `${this.prefix}w:${g}` : `cs:{${this.tags[shard]}}:w:${g}`;
  }

  /** The slices' bit mapper, from the description in Redis (recorded now if absent). */
  private readonly slicesMapper = once(async () => {
    const { value } = await adoptDescription(this.redis, `${this.prefix}w:meta`, this.proposed, (fields) => {
      fields.kind("window");
      const bits = fields.integer("bits", 1, MAX_SLICE_BYTES * 8);
      const hashes = fields.integer("hashes", 1, MAX_HASHES);
      if (fields.integer("slices", 1, 100_000) !== this.slices)
        fields.fail("slices", `${this.slices}, as this process asked (the window was created with another length)`);
      if ((fields.json.granularity as unknown) !== this.granularity)
        fields.fail("granularity", `"${this.granularity}", as this process asked`);
      const spread =
        fields.json.layout === undefined
          ? false
          : fields.json.layout === "spread"
            ? true
            : fields.fail("layout", '"spread" or absent');
      const shards = spread ? fields.integer("shards", 1, 2 ** 16) : 1;
      return {
        mapper: new PositionMapper(bits, shards, hashes),
        tags: spread ? spreadTags(this.name, shards) : undefined,
      };
    });
    this.tags = value.tags;
    return value;
  });

  private async run(
    keys: readonly (string | Uint8Array)[],
    now: number | undefined,
    mode: "test" | "seen" | "add",
  ): Promise<Uint8Array> {
    const t = now ?? this.clock();
    if (typeof t !== "number" || !Number.isFinite(t))
      throw new InvalidArgumentError("now", t, "a finite time in milliseconds");
    const { mapper } = await this.slicesMapper();
    const g = granuleOf(this.granularity, t);
    // The live slices of one shard, newest (the current granule) first.
    const live = (shard: number) => Array.from({ length: this.slices }, (_, i) => this.sliceKey(g - i, shard));
    const expireAt = String(granuleStart(this.granularity, g + 1 + this.slices));
    const k = mapper.hashes;
    const sliceBytes = String(Math.ceil(mapper.slots / 8));
    const out = new Uint8Array(keys.length);
    const calls: Promise<void>[] = [];
    for (const { at, positions, shard, members: chunk } of mapper.byShard(keys, KEYS_PER_CALL)) {
      const args: string[] = [String(k), String(chunk.length), expireAt, MODES[mode], sliceBytes];
      for (const j of chunk) for (let b = 1; b <= k; b++) args.push(String(redisBitOffset(positions[(k + 1) * j + b])));
      calls.push(
        WINDOW_SEEN.run(this.redis, live(shard), args).then((reply) =>
          (reply as number[]).forEach((flag, x) => (out[at + chunk[x]] = Number(flag))),
        ),
      );
    }
    // One connection runs the calls in the order they were sent, so a key repeated across batches
    // sees its first insert. All are awaited together: awaiting them one by one would leave a
    // later call's rejection unhandled (a crash) while an earlier one is still pending.
    await Promise.all(calls);
    return out;
  }
}
