// The time window in Redis: one bitmap per slice ("cs:{name}:w:<granule>"), its key expiring at
// the slice's end plus the window. Which slices are live is computed from the clock, as in
// memory (an expired-but-not-yet-evicted key is never consulted); checking the live slices and
// recording in the current one is one Lua script per batch, so concurrent processes agree.
import { InvalidArgumentError } from "../errors.js";
import { optimalBloom } from "../sizing.js";
import * as check from "../validate.js";
import { granularity, granuleOf, granuleStart, type Granularity } from "../window/granularity.js";
import type { RedisCommander } from "./commander.js";
import { keyPrefix } from "./keys.js";
import { PositionMapper, redisBitOffset } from "./positions.js";
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

/** Same guarantee as TimeWindowFilter: seen at every time in [t, t + window - granularity], not after t + window. */
export class RedisTimeWindowFilter {
  readonly granularity: Granularity;
  readonly slices: number;
  private readonly mapper: PositionMapper;
  private readonly clock: () => number;
  private readonly prefix: string;

  constructor(private readonly redis: RedisCommander, options: RedisTimeWindowFilterOptions) {
    const opts = check.options<RedisTimeWindowFilterOptions>("options", options);
    this.prefix = keyPrefix(opts.name as string);
    this.granularity = granularity(opts.granularity);
    this.slices = check.positiveInteger("slices", opts.slices, 100_000);
    const size = optimalBloom({ items: check.positiveInteger("itemsPerSlice", opts.itemsPerSlice), fpRate: check.probability("fpRate", opts.fpRate) });
    if (size.bytes > MAX_SLICE_BYTES) throw new InvalidArgumentError("itemsPerSlice", opts.itemsPerSlice, `a slice of at most ${MAX_SLICE_BYTES} bytes (this one needs ${size.bytes})`);
    if (opts.now !== undefined && typeof opts.now !== "function") throw new InvalidArgumentError("now", opts.now, "a function returning milliseconds");
    this.clock = opts.now ?? Date.now;
    this.mapper = new PositionMapper(size.bits, 1, size.hashes);
  }

  /** True when the key was seen within the window; otherwise records it now. */
  async seen(key: string | Uint8Array, now?: number): Promise<boolean> {
    return (await this.seenMany([check.key("key", key)], now))[0] === 1;
  }

  /** seen() for many keys at one instant, in order. */
  seenMany(keys: readonly (string | Uint8Array)[], now?: number): Promise<Uint8Array> {
    return this.run(check.keyList("keys", keys), now, true);
  }

  /** True when the key was seen within the window (records nothing). */
  async has(key: string | Uint8Array, now?: number): Promise<boolean> {
    return (await this.hasMany([check.key("key", key)], now))[0] === 1;
  }

  /** has() for many keys. */
  hasMany(keys: readonly (string | Uint8Array)[], now?: number): Promise<Uint8Array> {
    return this.run(check.keyList("keys", keys), now, false);
  }

  /** The key of the slice holding granule g. */
  sliceKey(g: number): string {
    return `${this.prefix}w:${g}`;
  }

  private async run(keys: readonly (string | Uint8Array)[], now: number | undefined, record: boolean): Promise<Uint8Array> {
    const t = now ?? this.clock();
    if (typeof t !== "number" || !Number.isFinite(t)) throw new InvalidArgumentError("now", t, "a finite time in milliseconds");
    const g = granuleOf(this.granularity, t);
    const live = Array.from({ length: this.slices }, (_, i) => this.sliceKey(g - i));
    const expireAt = String(granuleStart(this.granularity, g + 1 + this.slices));
    const k = this.mapper.hashes;
    const out = new Uint8Array(keys.length);
    const calls: Promise<void>[] = [];
    for (let i = 0; i < keys.length; ) {
      const { n, positions } = this.mapper.map(keys, i);
      for (let c = 0; c < n; c += KEYS_PER_CALL) {
        const m = Math.min(KEYS_PER_CALL, n - c);
        const args: string[] = [String(k), String(m), expireAt, record ? "1" : "0"];
        for (let j = c; j < c + m; j++) for (let b = 1; b <= k; b++) args.push(String(redisBitOffset(positions[(k + 1) * j + b])));
        const at = i + c;
        calls.push(WINDOW_SEEN.run(this.redis, live, args).then((reply) => (reply as number[]).forEach((flag, x) => (out[at + x] = Number(flag)))));
      }
      i += n;
    }
    // Batches run in order: a key repeated across batches must see its first insert.
    for (const call of calls) await call;
    return out;
  }
}
