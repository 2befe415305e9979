// An exact seen-set with recrawl windows in Redis, shared by a fleet: each key keeps the second it
// was recorded (XXH3-128 fingerprint -> seconds since the epoch, in small shard hashes, see
// windowed-shards.ts), and a key is "seen" while that time is within its TTL (a default, or the
// rule of its host or URL prefix, TtlPolicy) and after the latest forget of its host or prefix
// (tombstones, forgotten.ts). The rules are applied at each look-up, so a changed TTL map takes
// effect on keys already stored. The check and the write are one Lua script a batch of a shard
// group (WINDOWED_BATCH), so among concurrent callers exactly one sees a key as new, and the
// clock is Redis's TIME read inside the script unless one is injected (`now`, for tests and
// replayed logs), so processes with skewed clocks agree.
//
// Per key: about 20 bytes of listpack entry (12-byte field, integer time) plus a share of its
// shard's key and allocation: 23.6 bytes measured at 2 M keys, against 151.2 for a key a URL with
// SET NX EX (bench/RESULTS.md). Per batch: one GET of the tombstones' version and one script call
// per group (1 on one server, up to 256 on a cluster, pipelined). On a cluster each master reads
// its own TIME: a forget is exact up to the masters' clock skew (a key added within that skew
// before the forget, on a master whose clock is ahead, may stay seen). Expired fields are not dropped by Redis: Redis 7.0 (Debian's)
// has no hash-field expiry (HEXPIRE came in 7.4), so a write that brings a shard to 96 fields, and
// every 32 more, sweeps it of fields every TTL has passed. The sweep serves every server version;
// the version read at open (`serverVersion`) is reported, not used to pick another path.
import { DisposedError, InvalidArgumentError } from "../errors.js";
import { FingerprintSet } from "../exact/fingerprint-set.js";
import * as check from "../validate.js";
import type { ExactWindowSetOptions } from "../window/exact-window-set.js";
import { TtlPolicy, type Ttl, type WindowSemantics } from "../window/ttl-rules.js";
import type { RedisCommander } from "./commander.js";
import { adoptDescription, once } from "./description.js";
import { durabilityOption, durableBatch, orFlags, type Durability } from "./durability.js";
import { ForgottenRules } from "./forgotten.js";
import { keyPrefix } from "./keys.js";
import { DEL_ALL, HLEN_SUM, WINDOWED_BATCH } from "./scripts.js";
import { parseShardLayout, proposedLayout, shardCalls, ShardMap } from "./windowed-shards.js";

/** Options of RedisWindowedSeenSet. */
export interface RedisWindowedSeenSetOptions extends Omit<ExactWindowSetOptions, "items" | "now"> {
  readonly name: string;
  /** Keys held at once (within their TTL), planned: sizes the shards when no process created the set yet (default 1e6). */
  readonly items?: number;
  /** "local" (default) or "replicated": a batch returns once a replica of every master written to has it (WAIT). */
  readonly durability?: Durability;
  /** A clock in ms since the epoch (floored to seconds), for tests and replayed logs; default the server's TIME. */
  readonly now?: () => number;
}

/** Records a script call takes: a batch's keys of one group are cut into calls of this many. */
const KEYS_PER_CALL = 1024;
const MAX_ITEMS = 2 ** 32;
type Mode = "a" | "r" | "h" | "d" | "x" | "t";

// Every member of the main entry's WindowedSeenSet (src/seen/seen-set.ts), kept structural: src/seen
// opens this set, so this file does not import from there.
/** An exact, windowed, shared seen-set in Redis (WindowedSeenSet): exactly one caller sees a key new per window. */
export class RedisWindowedSeenSet {
  readonly backend = "redis";
  readonly exact = true;
  readonly semantics: WindowSemantics;
  /** The TTLs this process applies. */
  private readonly policy: TtlPolicy;
  private readonly prefix: string;
  private readonly name: string;
  private readonly items: number;
  private readonly durability: Durability;
  private readonly clock: (() => number) | undefined;
  private readonly forgotten: ForgottenRules;
  private closed = false;
  private version: string | undefined;

  constructor(
    private readonly redis: RedisCommander,
    options: RedisWindowedSeenSetOptions,
  ) {
    const opts = check.options<RedisWindowedSeenSetOptions>("options", options);
    this.prefix = keyPrefix(opts.name as string);
    this.name = opts.name as string;
    this.items = check.positiveInteger("items", opts.items ?? 1e6, MAX_ITEMS);
    this.policy = new TtlPolicy(opts.ttl as Ttl, opts.ttlMap);
    this.semantics = check.oneOf("semantics", opts.semantics ?? "first-seen", ["first-seen", "refresh"] as const);
    this.durability = durabilityOption(opts.durability);
    if (opts.now !== undefined && typeof opts.now !== "function")
      throw new InvalidArgumentError("now", opts.now, "a function returning milliseconds since the epoch");
    this.clock = opts.now;
    this.forgotten = new ForgottenRules(redis, this.prefix, this.durability);
  }

  /** Opens the set: adopts (or records) its shard layout and reads the server's version before returning. */
  static async open(redis: RedisCommander, options: RedisWindowedSeenSetOptions): Promise<RedisWindowedSeenSet> {
    const set = new RedisWindowedSeenSet(redis, options);
    await set.shards();
    return set;
  }

  /** The server's redis_version (INFO server), once opened: informative only, the sweep serves every version. */
  get serverVersion(): string | undefined {
    return this.version;
  }

  /** Shards the set is cut into, as the first process recorded them (once opened). */
  async shardCount(): Promise<number> {
    return (await this.shards()).shards;
  }

  /** Atomic check-and-insert: 1 where keys[i] was not held (new, expired or forgotten); a repeat inside the batch is not new. */
  async addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    const mode = this.semantics === "refresh" ? "r" : "a";
    return this.flags(keys, mode, this.nowArgument());
  }

  /** Read-only: 1 where keys[i] is held (within its TTL, not forgotten since). */
  async hasMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    return this.flags(keys, "h", this.nowArgument());
  }

  /** 1 where keys[i] is due at `at` (ms since the epoch, floored to seconds; default now): not held then. */
  async dueMany(keys: readonly (string | Uint8Array)[], at?: number): Promise<Uint8Array> {
    return this.flags(keys, "d", at === undefined ? this.nowArgument() : seconds("at", at));
  }

  /** Forgets keys; 1 where a key was held. */
  async removeMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    return this.flags(keys, "x", this.nowArgument());
  }

  /** When each key was recorded (ms since the epoch, a whole second), NaN where hasMany would answer 0. */
  async seenAtMany(keys: readonly (string | Uint8Array)[]): Promise<Float64Array> {
    const out = new Float64Array(keys.length);
    await this.run(keys, "t", this.nowArgument(), (i, reply) => {
      const t = Number(reply);
      out[i] = t < 0 ? Number.NaN : t * 1000;
    });
    return out;
  }

  /** Forgets every key of a host and its subdomains ("a.example"), and no other key: one tombstone, read by every process. */
  async forgetHost(host: string, at?: number): Promise<void> {
    return this.forget("host", host, at);
  }

  /** Forgets every key that starts with a URL prefix ("https://a.example/news/"), and no other key. */
  async forgetPrefix(prefix: string, at?: number): Promise<void> {
    return this.forget("prefix", prefix, at);
  }

  /**
   * Fields held over every shard: keys within their TTL and expired ones no sweep has reached yet
   * (a shard is swept only when it fills to 96 fields), so it is an upper bound on the keys held.
   */
  async size(): Promise<number> {
    this.open();
    const map = await this.shards();
    const sums = await Promise.all(
      map.keysByGroup().map((keys) => (keys.length === 0 ? 0 : HLEN_SUM.run(this.redis, keys, []))),
    );
    return sums.reduce<number>((sum, n) => sum + Number(n), 0);
  }

  /** Forgets every key and every tombstone; the shard layout stays. */
  async clear(): Promise<void> {
    this.open();
    const map = await this.shards();
    await Promise.all(map.keysByGroup().map((keys) => (keys.length === 0 ? 0 : DEL_ALL.run(this.redis, keys, []))));
    await this.forgotten.clear();
  }

  /** Nothing to save (Redis holds it all); later calls throw DisposedError. */
  async close(): Promise<void> {
    this.closed = true;
  }

  /** Records the tombstone as of `at` (ms; default the clock: the server's TIME unless one was given). */
  private async forget(what: "host" | "prefix", pattern: string, at?: number): Promise<void> {
    this.open();
    await this.shards();
    const now = at === undefined ? this.nowArgument() : seconds("at", at);
    await this.forgotten.forget(what, pattern, now, this.longestArgument());
  }

  /** The shard layout recorded in Redis (recorded now if absent), and the server's version. */
  private readonly shards = once(async () => {
    const { value } = await adoptDescription(
      this.redis,
      `${this.prefix}ws:meta`,
      proposedLayout(this.items, this.redis.cluster === true),
      parseShardLayout,
      this.durability,
    );
    const info = String(await this.redis.send(["INFO", "server"], { route: `${this.prefix}ws:meta` }));
    this.version = /^redis_version:(\S+)/m.exec(info)?.[1];
    return new ShardMap(this.name, value);
  });

  private async flags(keys: readonly (string | Uint8Array)[], mode: Mode, now: string): Promise<Uint8Array> {
    const out = new Uint8Array(keys.length);
    await this.run(keys, mode, now, (i, reply) => (out[i] = reply === 49 ? 1 : 0));
    return out;
  }

  /** Runs one mode over a batch: a script call per group's slice of it, all sent at once; `answer(i, reply)` for each key. */
  private async run(
    keys: readonly (string | Uint8Array)[],
    mode: Mode,
    now: string,
    answer: (i: number, reply: unknown) => void,
  ): Promise<void> {
    this.open();
    const packed = FingerprintSet.fingerprintMany(check.keyList("keys", keys));
    const map = await this.shards();
    await this.forgotten.refresh();
    const ttl = new Uint32Array(keys.length);
    const forgotten = new Uint32Array(keys.length);
    const uniform = this.policy.uniform;
    const byDefault = ttlArgument(this.policy.defaultSeconds);
    for (let i = 0; i < keys.length; i++) {
      ttl[i] = uniform ? byDefault : ttlArgument(this.policy.secondsFor(keys[i]));
      forgotten[i] = this.forgotten.latest(keys[i]);
    }
    const calls = shardCalls(map, packed, ttl, forgotten, KEYS_PER_CALL);
    const longest = this.longestArgument();
    const send = (call: (typeof calls)[number]) =>
      WINDOWED_BATCH.run(this.redis, call.keys, [mode, now, longest, call.records]);
    const writes = mode === "a" || mode === "r" || mode === "x";
    if (!writes || this.durability === "local") {
      const replies = await Promise.all(calls.map(send));
      calls.forEach((call, c) => replyEach(replies[c], call.members, answer));
      return;
    }
    // Sent again after a WAIT that could not confirm them, a key new (or removed) either time counts.
    const written = [...new Set(calls.flatMap((call) => call.keys))];
    const write = async () => {
      const flags = new Uint8Array(keys.length);
      const replies = await Promise.all(calls.map(send));
      calls.forEach((call, c) => replyEach(replies[c], call.members, (i, r) => (flags[i] = r === 49 ? 1 : 0)));
      return flags;
    };
    const flags = await durableBatch(this.redis, this.durability, written, write, orFlags);
    flags.forEach((flag, i) => answer(i, flag === 1 ? 49 : 48));
  }

  /** The clock as the script takes it: whole seconds as text, or "" for the server's TIME. */
  private nowArgument(): string {
    return this.clock === undefined ? "" : seconds("now", this.clock());
  }

  /** The longest TTL as the script takes it: seconds, or -1 when some key never expires (no sweep). */
  private longestArgument(): string {
    const longest = this.policy.longestSeconds;
    return Number.isFinite(longest) ? String(longest) : "-1";
  }

  private open(): void {
    if (this.closed) throw new DisposedError("RedisWindowedSeenSet");
  }
}

/** A TTL as a record holds it: seconds, 0 for never. */
function ttlArgument(seconds: number): number {
  return Number.isFinite(seconds) ? seconds : 0;
}

/** ms since the epoch as whole seconds in text, checked (u32 seconds). */
function seconds(name: string, ms: unknown): string {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms / 1000 >= 2 ** 32)
    throw new InvalidArgumentError(name, ms, "a time in ms since the epoch, from 1970 to 2106");
  return String(Math.floor(ms / 1000));
}

/** Hands each record's reply to `answer`: a character "0"/"1" of a string reply (as a byte), or an element of an array reply. */
function replyEach(reply: unknown, members: readonly number[], answer: (i: number, reply: unknown) => void): void {
  if (Array.isArray(reply)) {
    members.forEach((i, r) => answer(i, reply[r]));
    return;
  }
  const bytes = typeof reply === "string" ? Buffer.from(reply, "latin1") : (reply as Uint8Array);
  members.forEach((i, r) => answer(i, bytes[r]));
}
