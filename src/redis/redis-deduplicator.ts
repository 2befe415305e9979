// Exact dedup shared through Redis: a key's 16-byte MD5 fingerprint is a field of one of 65,536
// bucket hashes ("cs:{name}:fp:<first two bytes>", field = the other 14 bytes, value = the
// reference count). HINCRBY is the check and the insert in one atomic step, so among any number
// of processes exactly one sees a given key as new (its HINCRBY returned 1).
// With `countingFilter`, the IMP-CB scheme runs inside Redis: a Lua script checks the key's
// counters in a shared counting filter first and, on a zero, inserts with HSETNX (which never
// overwrites a count) instead of HINCRBY. The filter must live in Redis, not in each process: a
// process-local filter cannot know what the other processes stored. Its geometry is recorded in
// a versioned description that every process adopts, and the script trusts the counters only
// while that description is the one the caller mapped with; a filter that misses keys (written
// by a process without the filter, or deleted) costs a store write that finds the key, never a
// false "new", and the key's counters are raised then. Without the filter the store alone is as
// exact and, over a network, as fast: the write that inserts a key also answers "was it new".
// Where the buckets live is recorded too ("cs:{name}:fp:meta"): spread over a cluster's masters
// (a tag a bucket) or under the name's one tag. The first process decides, every later one
// adopts it, so a process opened with other options never writes its keys to other bucket names.
import { MAX_HASHES, resolveGeometry } from "../bloom/geometry.js";
import { md5Many } from "../hash/md5.js";
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import type { RedisCommander } from "./commander.js";
import { adoptDescription, once, type Fields } from "./description.js";
import { durabilityOption, durableBatch, orFlags, type Durability } from "./durability.js";
import { keyPrefix } from "./keys.js";
import { PositionMapper } from "./positions.js";
import { DEL_ALL, HLEN_SUM, IMPCB_CHECK, STORE_REMOVE } from "./scripts.js";

/** Options of RedisDeduplicator. */
export interface RedisDeduplicatorOptions {
  readonly name: string;
  /**
   * Front the store with a counting filter in Redis (IMP-CB), sized for this load when no process
   * created it yet (else the recorded geometry is adopted); one shard, at most 64 MiB.
   */
  readonly countingFilter?: { readonly items: number; readonly fpRate: number };
  /** "local" (default) or "replicated": a key is reported new only once a replica has it (WAIT). */
  readonly durability?: Durability;
}

const MAX_FILTER_BYTES = 64 * 2 ** 20;
/** Bucket numbers: a fingerprint's first two bytes choose its hash. */
const BUCKETS = Array.from({ length: 65_536 }, (_, b) => b);
// A SCAN with COUNT of the database's size visits it in one or two calls; past these bounds,
// naming every bucket in one script costs less (about 0.1 s, whatever the database holds).
const SCAN_KEYS = 65_536;
const SCAN_ROUNDS = 4;

/** Exact, shared, reference-counted dedup of keys by MD5 in Redis. */
export class RedisDeduplicator {
  private readonly prefix: string;
  private readonly name: string;
  private readonly proposed: Record<string, unknown> | undefined;
  private readonly durability: Durability;
  /** What this process proposes for the buckets when it is the first: spread on a cluster without countingFilter. */
  private readonly proposeSpread: boolean;
  private adoptedSpread: boolean | undefined;
  /**
   * Per process, IMP-CB mode: store reads made (a "maybe" from the filter), avoided (a zero
   * counter: inserted by HSETNX), and stale (a zero counter for a key the store had: the filter
   * missed it, and learned it then).
   */
  readonly stats = { lookups: 0, lookupsAvoided: 0, staleFilter: 0 };

  constructor(
    private readonly redis: RedisCommander,
    options: RedisDeduplicatorOptions,
  ) {
    const opts = check.options<RedisDeduplicatorOptions>("options", options);
    this.prefix = keyPrefix(opts.name as string);
    this.name = opts.name as string;
    this.durability = durabilityOption(opts.durability);
    this.proposeSpread = redis.cluster === true && opts.countingFilter === undefined;
    if (opts.countingFilter !== undefined) {
      const plan = check.options<{ items: number; fpRate: number }>("countingFilter", opts.countingFilter);
      const { geometry } = resolveGeometry(
        "counting",
        { items: plan.items, fpRate: plan.fpRate, maxPartitionBytes: MAX_FILTER_BYTES },
        4,
      );
      if (geometry.partitions !== 1)
        throw new InvalidArgumentError("countingFilter", plan, "a load whose counters fit one 64 MiB key");
      this.proposed = { kind: "counting", slots: geometry.slots, hashes: geometry.hashes, counterBits: 4 };
    }
  }

  /** Opens the deduplicator: adopts (or records) where its buckets live and, with `countingFilter`, the filter's geometry. */
  static async open(redis: RedisCommander, options: RedisDeduplicatorOptions): Promise<RedisDeduplicator> {
    const dedup = new RedisDeduplicator(redis, options);
    await dedup.storeLayout();
    if (dedup.proposed !== undefined) await dedup.filterFront();
    return dedup;
  }

  /**
   * True when each of the 65,536 buckets carries its own hash tag, so the store spreads over
   * every master; as recorded by the first process (undefined until this one has read it: `open`
   * does, `new` at the first call). The IMP-CB script needs filter and bucket in one slot, so a
   * store made with countingFilter stays under one tag.
   */
  get spread(): boolean | undefined {
    return this.adoptedSpread;
  }

  /** Records one reference to each key; isNew[i] = 1 for the one caller ever to see keys[i] first, counts[i] its references now. */
  async checkMany(keys: readonly (string | Uint8Array)[]): Promise<{ isNew: Uint8Array; counts: Uint32Array }> {
    const digests = md5Many(check.keyList("keys", keys));
    await this.storeLayout();
    const count = keys.length;
    const written =
      this.durability === "replicated"
        ? [...new Set(Array.from({ length: count }, (_, i) => this.bucketKey(digests.subarray(16 * i, 16 * i + 2))))]
        : [];
    // Sent again (a WAIT that could not confirm them), a key new either time is reported new.
    const write = () =>
      this.proposed !== undefined ? this.checkImpCb(digests, count) : this.increment(digests, count);
    return durableBatch(this.redis, this.durability, written, write, (first, again) => ({
      isNew: orFlags(first.isNew, again.isNew),
      counts: again.counts,
    }));
  }

  /** One HINCRBY a key: the plain store's check-and-insert. */
  private async increment(digests: Uint8Array, count: number): Promise<{ isNew: Uint8Array; counts: Uint32Array }> {
    // A HINCRBY sent again after its reply was lost (a failover) may have run twice: its key is
    // reported new, so a key is never lost (at least once), and its count may be one too high.
    const twice = new Uint8Array(count);
    const replies = await Promise.all(
      Array.from({ length: count }, (_, i) => {
        const fp = digests.subarray(16 * i, 16 * i + 16);
        return this.redis.send(["HINCRBY", this.bucketKey(fp), fp.subarray(2), "1"], {
          ambiguous: () => (twice[i] = 1),
        });
      }),
    );
    const counts = Uint32Array.from(replies, (reply) => Number(reply));
    return { isNew: Uint8Array.from(counts, (c, i) => (c === 1 || twice[i] === 1 ? 1 : 0)), counts };
  }

  /** checkMany's isNew alone: 1 where keys[i] was new for the whole fleet (the shape every seen-set shares). */
  async addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    return (await this.checkMany(keys)).isNew;
  }

  /** Records one reference: isNew when this was the first anywhere, count its references now (Deduplicator.check's shape). */
  async check(key: string | Uint8Array): Promise<{ isNew: boolean; count: number }> {
    const { isNew, counts } = await this.checkMany([check.key("key", key)]);
    return { isNew: isNew[0] === 1, count: counts[0] };
  }

  /**
   * Drops one reference per key (every reference with `all`); the last reference removes the key.
   * Returns the counts left (-1: the key was absent).
   */
  async removeMany(keys: readonly (string | Uint8Array)[], options: { all?: boolean } = {}): Promise<Int32Array> {
    const digests = md5Many(check.keyList("keys", keys));
    const all = check.options<{ all: boolean }>("options", options).all ?? false;
    if (typeof all !== "boolean") throw new InvalidArgumentError("all", all, "true or false");
    await this.storeLayout();
    const replies = await Promise.all(
      keys.map((_, i) => {
        const fp = digests.subarray(16 * i, 16 * i + 16);
        if (all)
          return this.redis.send(["HDEL", this.bucketKey(fp), fp.subarray(2)]).then((n) => [Number(n) === 1 ? 0 : -1]);
        return STORE_REMOVE.run(this.redis, [this.bucketKey(fp)], [fp.subarray(2)]);
      }),
    );
    return Int32Array.from(replies, (reply) => Number((reply as number[])[0]));
  }

  /** Read-only: 1 where keys[i] has a reference, anywhere in the fleet. */
  async hasMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    const digests = md5Many(check.keyList("keys", keys));
    await this.storeLayout();
    const replies = await Promise.all(
      keys.map((_, i) => {
        const fp = digests.subarray(16 * i, 16 * i + 16);
        return this.redis.send(["HEXISTS", this.bucketKey(fp), fp.subarray(2)]);
      }),
    );
    return Uint8Array.from(replies, (reply) => (Number(reply) === 1 ? 1 : 0));
  }

  /**
   * Distinct keys stored, over every bucket. Tagged buckets share a slot: the ones that exist are
   * found by a bounded SCAN when the database is small, else all 65,536 are named, and one script
   * sums their HLENs (65,536 pipelined commands took seconds, most under node-redis 6). Spread
   * buckets take one HLEN each.
   */
  async size(): Promise<number> {
    await this.storeLayout();
    if (this.adoptedSpread !== true) {
      const buckets = await this.taggedBuckets();
      return buckets.length === 0 ? 0 : Number(await HLEN_SUM.run(this.redis, buckets, []));
    }
    const lengths = await Promise.all(BUCKETS.map((b) => this.redis.send(["HLEN", this.bucketKeyOf(b)])));
    return lengths.reduce<number>((sum, n) => sum + Number(n), 0);
  }

  /** Deletes every key of the deduplicator: its buckets, counting filter and description. */
  async destroy(): Promise<void> {
    await this.storeLayout();
    const others = [`${this.prefix}cf`, `${this.prefix}cf:meta`];
    // Tagged: one script, as in size(). Spread: one DEL a key, since a DEL may not cross slots.
    if (this.adoptedSpread !== true) await DEL_ALL.run(this.redis, [...(await this.taggedBuckets()), ...others], []);
    else
      await Promise.all(
        [...BUCKETS.map((b) => this.bucketKeyOf(b)), ...others].map((key) => this.redis.send(["DEL", key])),
      );
    // Last: a process opening meanwhile still finds the layout of the buckets being deleted.
    await this.redis.send(["DEL", `${this.prefix}fp:meta`]);
    this.storeLayout = once(() => this.adoptStoreLayout());
  }

  /**
   * The tagged bucket keys to visit: those a SCAN finds when the database (the tag's master, on a
   * cluster) holds at most SCAN_KEYS keys, in at most SCAN_ROUNDS calls; otherwise all 65,536.
   */
  private async taggedBuckets(): Promise<string[]> {
    const route = { route: `${this.prefix}fp:meta` };
    const keys = Number(await this.redis.send(["DBSIZE"], route));
    if (keys <= SCAN_KEYS) {
      const pattern = `${this.prefix.replace(/[*?[\]\\]/g, "\\$&")}fp:${"[0-9a-f]".repeat(4)}`;
      const found: string[] = [];
      let cursor = "0";
      for (let round = 0; round < SCAN_ROUNDS; round++) {
        const [next, batch] = (await this.redis.send(
          ["SCAN", cursor, "MATCH", pattern, "COUNT", String(Math.max(keys, 100))],
          route,
        )) as [unknown, unknown[]];
        for (const key of batch) found.push(String(key));
        cursor = String(next);
        if (cursor === "0") return found;
      }
    }
    return BUCKETS.map((b) => this.bucketKeyOf(b));
  }

  /** References to a key (0 when absent). */
  async count(key: string | Uint8Array): Promise<number> {
    const fp = md5Many([check.key("key", key)]);
    await this.storeLayout();
    return Number((await this.redis.send(["HGET", this.bucketKey(fp), fp.subarray(2)])) ?? 0);
  }

  /** Where the buckets live, as the first process recorded it (recorded now if absent). */
  private storeLayout = once(() => this.adoptStoreLayout());

  private async adoptStoreLayout(): Promise<void> {
    const proposed = { kind: "store", layout: this.proposeSpread ? "spread" : "tagged" };
    const { value } = await adoptDescription(
      this.redis,
      `${this.prefix}fp:meta`,
      proposed,
      parseStoreDescription,
      this.durability,
    );
    if (value.spread && this.proposed !== undefined) {
      throw new InvalidArgumentError(
        "countingFilter",
        this.proposed,
        `no countingFilter: the store "${this.name}" was made spread over the cluster's masters, and the IMP-CB script needs its filter and buckets in one slot`,
      );
    }
    this.adoptedSpread = value.spread;
  }

  /** The counting filter's mapper, from the geometry recorded in Redis (recorded now if absent). */
  private readonly filterFront = once(async () => {
    const { value, raw } = await adoptDescription(
      this.redis,
      `${this.prefix}cf:meta`,
      this.proposed!,
      parseCountingDescription,
      this.durability,
    );
    return { mapper: new PositionMapper(value.slots, 1, value.hashes), description: raw };
  });

  private async checkImpCb(digests: Uint8Array, count: number): Promise<{ isNew: Uint8Array; counts: Uint32Array }> {
    const { mapper, description } = await this.filterFront();
    const k = mapper.hashes;
    const fingerprints = Array.from({ length: count }, (_, i) => digests.subarray(16 * i, 16 * i + 16));
    const calls: Promise<unknown>[] = [];
    // Counter positions come from the fingerprint, so every process maps a key the same way.
    for (const { n, at, positions } of mapper.batches(fingerprints)) {
      for (let j = 0; j < n; j++) {
        const fp = fingerprints[at + j];
        const offsets = Array.from({ length: k }, (_, b) => `#${positions[(k + 1) * j + 1 + b]}`);
        calls.push(
          IMPCB_CHECK.run(
            this.redis,
            [`${this.prefix}cf`, this.bucketKey(fp), `${this.prefix}cf:meta`],
            [fp.subarray(2), description, ...offsets],
          ),
        );
      }
    }
    const replies = (await Promise.all(calls)) as [number, number, number][];
    const counts = Uint32Array.from(replies, (r) => Number(r[0]));
    for (const r of replies) {
      if (Number(r[1]) === 1) this.stats.lookups++;
      else this.stats.lookupsAvoided++;
      this.stats.staleFilter += Number(r[2]);
    }
    return { isNew: Uint8Array.from(counts, (c) => (c === 1 ? 1 : 0)), counts };
  }

  private bucketKey(fp: Uint8Array): string {
    return this.bucketKeyOf((fp[0] << 8) | fp[1]);
  }

  /** The key of bucket b (the first two bytes of a fingerprint). */
  private bucketKeyOf(b: number): string {
    const bucket = b.toString(16).padStart(4, "0");
    return this.adoptedSpread === true ? `cs:{${this.name}/${bucket}}:fp` : `${this.prefix}fp:${bucket}`;
  }
}

/** Checks a store's description: its buckets spread (a tag each) or tagged (the name's one tag). */
function parseStoreDescription(fields: Fields): { spread: boolean } {
  fields.kind("store");
  const layout = fields.json.layout;
  if (layout !== "spread" && layout !== "tagged") fields.fail("layout", '"spread" or "tagged"');
  return { spread: layout === "spread" };
}

/** Checks a counting filter's description: one shard of at most 64 MiB of 4-bit counters. */
function parseCountingDescription(fields: Fields): { slots: number; hashes: number } {
  fields.kind("counting");
  const counterBits = fields.integer("counterBits", 4, 4);
  const slots = fields.integer("slots", 1, (MAX_FILTER_BYTES * 8) / counterBits);
  const hashes = fields.integer("hashes", 1, MAX_HASHES);
  return { slots, hashes };
}
