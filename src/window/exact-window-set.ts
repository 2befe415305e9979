// The exact windowed seen-set in this process: each key's 128-bit XXH3 fingerprint kept with its
// time in whole seconds (timed slots of one FingerprintShard, assembly/timed-set.ts), so "seen in
// the last N days?" has no false answer (a key compares 102 bits, as the exact line table's).
// A key's TTL comes from a TtlPolicy (a default, and rules by host or URL prefix) at each look-up.
// Forgetting a host or prefix is a tombstone (pattern -> the second it was forgotten): every key
// it matches recorded at or before that second counts as absent from then on, so a forget takes
// no time and touches no other key. Both fold into one number per key, its cutoff: a key is held
// when its time is at or past it (see cutoffFor).
// Memory: 16 bytes a slot, 0.85 full at most and grown by 1.5x, so 19-28 bytes a key. Expired keys
// are dropped when the table would grow (a sweep by the longest TTL of the policy), so a crawl's
// memory follows the keys within their windows, not every key ever seen. One WebAssembly memory
// holds the table: about 200 M keys (FilterTooLargeError past it).
import { DisposedError, FilterTooLargeError, FormatError, InvalidArgumentError } from "../errors.js";
import { Kind, writeContainer } from "../format/container.js";
import { payloadOf, readStored, type Recipe } from "../format/recipe.js";
import * as check from "../validate.js";
import { FingerprintShard } from "../exact/fingerprint-shard.js";
import { keyList, packedDigests } from "../wasm/batch.js";
import { LOG_PARTS, TIMED } from "../wasm/bucket-layout.js";
import { sharedEngine } from "../wasm/engine.js";
import { BATCH } from "../wasm/staging.js";
import { decodeTombstones, PrefixRules, type Ttl, type TtlMap, TtlPolicy, type WindowSemantics } from "./ttl-rules.js";

/** A key: a string (its UTF-8 bytes) or bytes. */
type SeenKey = string | Uint8Array;

/** Options of ExactWindowSet. */
export interface ExactWindowSetOptions {
  /** How long a key stays seen when no rule of `ttlMap` matches it: a Duration of whole seconds, or "never". */
  readonly ttl: Ttl;
  /** TTLs by host (with its subdomains) or URL prefix; the longest URL prefix wins, then the most specific host. */
  readonly ttlMap?: TtlMap;
  /** "first-seen" (default): due a TTL after the sighting reported new; "refresh": every sighting restarts the TTL. */
  readonly semantics?: WindowSemantics;
  /** Keys planned: the table holds them without growing (default 4,096; it grows past any number to one memory's). */
  readonly items?: number;
  /** The clock in ms since the epoch (default Date.now); its whole seconds are the set's time. */
  readonly now?: () => number;
}

/** Fingerprint scheme in the serialized parameters: 1 = XXH3-128 of the key's bytes. */
const SCHEME_XXH3_128 = 1;
const PARAM_BYTES = 16;
/** Bytes of a serialized key: its fingerprint as the table compares it (16) and its time (4). */
const RECORD = 20;
const MAX_SECONDS = 2 ** 32 - 1;

/** Format v1, kind 14: scheme, bytes of the tombstones' JSON, keys held; payload: the keys, then the tombstones. */
const RECIPE: Recipe<{ size: number; tombstoneBytes: number }> = {
  kind: Kind.ExactWindowSet,
  what: "an exact window set",
  paramBytes: PARAM_BYTES,
  read(params, payloadBytes) {
    const scheme = params.getUint32(0, true);
    if (scheme !== SCHEME_XXH3_128)
      throw new FormatError(`fingerprint scheme ${scheme} is not known (1 = XXH3-128)`, "ERR_BAD_PARAMS");
    const tombstoneBytes = params.getUint32(4, true);
    const size = params.getFloat64(8, true);
    if (!Number.isSafeInteger(size) || size < 0 || RECORD * size + tombstoneBytes !== payloadBytes)
      throw new FormatError(
        `${size} keys and ${tombstoneBytes} bytes of tombstones do not fit a payload of ${payloadBytes} bytes`,
        "ERR_BAD_PARAMS",
      );
    return { size, tombstoneBytes };
  },
};

/** Whole seconds of a time in ms since the epoch, checked to fit the set's 32-bit times. */
function secondsOf(name: string, ms: unknown): number {
  const s = typeof ms === "number" ? Math.floor(ms / 1000) : NaN;
  if (!(s >= 0 && s <= MAX_SECONDS))
    throw new InvalidArgumentError(name, ms, "a time in ms since the epoch, from 1970 to 2106");
  return s;
}

/** An exact seen-set of keys with a time to live each: "seen within its window?" with no false answer. */
export class ExactWindowSet {
  /** "first-seen" or "refresh". */
  readonly semantics: WindowSemantics;
  private shard: FingerprintShard | undefined;
  private readonly policy: TtlPolicy;
  /** Forgotten hosts and prefixes: pattern -> the second it was forgotten. */
  private readonly tombstones = new PrefixRules<number>();
  private readonly clock: () => number;
  private due = 0;

  constructor(options: ExactWindowSetOptions) {
    const opts = check.options<ExactWindowSetOptions>("options", options);
    this.policy = new TtlPolicy(opts.ttl as Ttl, opts.ttlMap);
    this.semantics = check.oneOf("semantics", opts.semantics ?? "first-seen", ["first-seen", "refresh"] as const);
    if (opts.now !== undefined && typeof opts.now !== "function")
      throw new InvalidArgumentError("now", opts.now, "a function returning ms since the epoch");
    this.clock = opts.now ?? Date.now;
    const items = check.positiveInteger("items", opts.items ?? 4096);
    this.shard = new FingerprintShard(items, 0, TIMED);
  }

  /** Records keys at `at` (ms; default the clock): out[i] = 1 where keys[i] was not seen within its TTL (a repeat inside the batch is not new). */
  addMany(keys: readonly SeenKey[], at?: number): Uint8Array {
    const now = this.time(at);
    const flags = this.batches(keys, now, (shard, n, cutoff) => {
      const took = shard.addTimedStaged(n, now, cutoff, this.semantics === "refresh", () => this.sweep(now));
      if (took < n) throw new FilterTooLargeError(shard.byteLength * 1.5, "one WebAssembly memory holds the table");
    });
    // The kernel tells a key due again (2) from one never held (1).
    for (let i = 0; i < flags.length; i++) {
      if (flags[i] !== 2) continue;
      this.due++;
      flags[i] = 1;
    }
    return flags;
  }

  /** Keys reported new because they were held and their TTL had passed, or their host or prefix was forgotten (not those dropped as expired before). */
  get dueAgain(): number {
    return this.due;
  }

  /** out[i] = 1 where keys[i] is seen at `at` (ms; default now): recorded within its TTL and not forgotten since. */
  hasMany(keys: readonly SeenKey[], at?: number): Uint8Array {
    const now = this.time(at);
    return this.batches(keys, now, (shard, n, cutoff) => shard.readTimedStaged(n, cutoff));
  }

  /** out[i] = 1 where keys[i] is due at `at` (ms; default now): not seen, or its TTL passed, or forgotten. */
  dueMany(keys: readonly SeenKey[], at?: number): Uint8Array {
    const held = this.hasMany(keys, at);
    for (let i = 0; i < held.length; i++) held[i] ^= 1;
    return held;
  }

  /** When each key was last recorded, in ms since the epoch (a whole second), NaN where hasMany would answer 0. */
  seenAtMany(keys: readonly SeenKey[]): Float64Array {
    const now = this.time(undefined);
    const out = new Float64Array(keys.length);
    this.batches(keys, now, (shard, n, cutoff, at) => {
      shard.readTimedStaged(n, cutoff);
      const held = shard.flags(n);
      const times = shard.stagedTimes(n);
      for (let i = 0; i < n; i++) out[at + i] = held[i] === 1 ? times[i] * 1000 : NaN;
    });
    return out;
  }

  /** Forgets keys; out[i] = 1 where keys[i] was seen. */
  removeMany(keys: readonly SeenKey[]): Uint8Array {
    const now = this.time(undefined);
    return this.batches(keys, now, (shard, n, cutoff) => shard.removeTimedStaged(n, cutoff));
  }

  /** Forgets every key of `host` and its subdomains recorded until now; keys recorded later are seen again as usual. */
  forgetHost(host: string, at?: number): void {
    if (typeof host !== "string" || host.includes("/"))
      throw new InvalidArgumentError("host", host, 'a host such as "a.example" (no scheme, no path)');
    this.forget(host, at);
  }

  /** Forgets every key that starts with a URL prefix ("https://a.example/news/") recorded until now. */
  forgetPrefix(prefix: string, at?: number): void {
    if (typeof prefix !== "string" || !/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]+/.test(prefix))
      throw new InvalidArgumentError("prefix", prefix, 'a URL prefix such as "https://a.example/news/"');
    this.forget(prefix, at);
  }

  /** Keys held, including expired ones not dropped yet (they are dropped when the table would grow). */
  get size(): number {
    return this.live().size;
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.live().byteLength;
  }

  /** Forgets every key and every tombstone. */
  clear(): void {
    this.live().clear();
    for (const [pattern] of this.tombstones.entries()) this.tombstones.delete(pattern);
  }

  /** The set in format v1: its keys with their times, and its tombstones (the TTLs and semantics are the opener's). */
  serialize(): Uint8Array {
    const shard = this.live();
    const size = shard.size;
    const list = this.tombstones.entries();
    const tombstones = list.length === 0 ? new Uint8Array(0) : new TextEncoder().encode(JSON.stringify(list));
    const tooLarge = (bytes: number) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it");
    if (RECORD * size + tombstones.length > 2 ** 32) throw tooLarge(RECORD * size);
    const params = new DataView(new ArrayBuffer(PARAM_BYTES));
    params.setUint32(0, SCHEME_XXH3_128, true);
    params.setUint32(4, tombstones.length, true);
    params.setFloat64(8, size, true);
    const payload = new Uint8Array(RECORD * size + tombstones.length);
    let at = 0;
    this.eachEntry((entries) => {
      payload.set(entries, at);
      at += entries.length;
    });
    payload.set(tombstones, at);
    return writeContainer(Kind.ExactWindowSet, new Uint8Array(params.buffer), payload, tooLarge);
  }

  /** Loads a set written by serialize(), with the opener's options (TTLs, semantics, clock); a FormatError subclass on bad bytes. */
  static deserialize(bytes: Uint8Array, options: ExactWindowSetOptions): ExactWindowSet {
    const stored = readStored(bytes, RECIPE);
    const { size, tombstoneBytes } = stored.params;
    const payload = payloadOf(stored);
    const tombstones =
      tombstoneBytes === 0
        ? []
        : decodeTombstones(payload.subarray(RECORD * size, RECORD * size + tombstoneBytes), "an exact window set");
    try {
      new PrefixRules(tombstones);
    } catch {
      throw new FormatError("a tombstone of an exact window set is neither a host nor a URL prefix", "ERR_BAD_PARAMS");
    }
    const set = new ExactWindowSet({ ...options, items: Math.max(1, size) });
    try {
      set.applyTimed(payload.subarray(0, RECORD * size));
      const shard = set.live();
      if (shard.size !== size)
        throw new FormatError(`${size - shard.size} of ${size} stored keys are repeated`, "ERR_BAD_PARAMS");
      for (const [pattern, second] of tombstones) set.tombstones.set(pattern, second);
    } catch (error) {
      set.dispose();
      throw error;
    }
    return set;
  }

  /** @internal The packed 16-byte fingerprints of keys (XXH3-128), as a store writes them. */
  static fingerprintsOf(keys: readonly SeenKey[]): Uint8Array {
    return packedDigests(sharedEngine().staging, keyList(keys), "xxh128");
  }

  /** @internal Timed entries (fingerprint, then time: RECORD bytes each) of the keys flagged 1 (every key without flags), as held now. */
  entriesOf(keys: readonly SeenKey[], flags?: Uint8Array): Uint8Array {
    const chosen = flags === undefined ? keys : keys.filter((_, i) => flags[i] === 1);
    const packed = ExactWindowSet.fingerprintsOf(chosen);
    const entries = new Uint8Array(RECORD * chosen.length);
    for (let at = 0; at < chosen.length; at += BATCH) {
      const n = Math.min(BATCH, chosen.length - at);
      const shard = this.live();
      shard.stage(packed.subarray(16 * at, 16 * (at + n)));
      shard.readTimedStaged(n, 0);
      const times = shard.stagedTimes(n);
      for (let i = 0; i < n; i++) {
        entries.set(packed.subarray(16 * (at + i), 16 * (at + i + 1)), RECORD * (at + i));
        new DataView(entries.buffer).setUint32(RECORD * (at + i) + 16, times[i], true);
      }
    }
    return entries;
  }

  /** @internal Takes timed entries (a store's log, a serialized set): each key's time becomes the later of its own and the entry's. */
  applyTimed(entries: Uint8Array): void {
    const count = entries.length / RECORD;
    const view = new DataView(entries.buffer, entries.byteOffset, entries.byteLength);
    const digests = new Uint8Array(16 * Math.min(BATCH, count));
    const times = new Uint32Array(Math.min(BATCH, count));
    for (let done = 0; done < count; ) {
      const n = Math.min(BATCH, count - done);
      for (let i = 0; i < n; i++) {
        const r = RECORD * (done + i);
        digests.set(entries.subarray(r, r + 16), 16 * i);
        times[i] = view.getUint32(r + 16, true);
      }
      const shard = this.live();
      shard.stage(digests.subarray(0, 16 * n));
      shard.stageTimes(times.subarray(0, n));
      // Recorded at time 0 with the entry's time as the cutoff: a key held before keeps its later
      // time, any other takes the entry's.
      const took = shard.addTimedStaged(n, 0, undefined, false, () => {});
      if (took < n) throw new FilterTooLargeError(shard.byteLength * 1.5, "one WebAssembly memory holds the table");
      done += n;
    }
  }

  /** @internal Forgets packed 16-byte fingerprints (a store's log of removals). */
  applyRemovals(packed: Uint8Array): void {
    for (let at = 0; at < packed.length / 16; at += BATCH) {
      const n = Math.min(BATCH, packed.length / 16 - at);
      const shard = this.live();
      shard.stage(packed.subarray(16 * at, 16 * (at + n)));
      shard.removeTimedStaged(n, 0);
    }
  }

  /** @internal The tombstones: [pattern, second] pairs. */
  tombstoneList(): [string, number][] {
    return this.tombstones.entries();
  }

  /** @internal Takes tombstones (a store's log): each pattern's second becomes the later of the two. */
  applyTombstones(list: readonly (readonly [string, number])[]): void {
    for (const [pattern, second] of list)
      this.tombstones.set(pattern, Math.max(second, this.tombstones.exact(pattern) ?? 0));
  }

  /** @internal Drops the keys no TTL holds at `at` (ms; default now), and the tombstones only they needed (a store's compaction). */
  dropExpired(at?: number): void {
    this.sweep(this.time(at));
  }

  /** @internal Visits the keys held as timed entries (RECORD bytes each), a partition at a time. */
  eachEntry(visit: (entries: Uint8Array) => void): void {
    this.live().eachPacked((slots, partition) => {
      const words = new DataView(slots.buffer, slots.byteOffset, slots.byteLength);
      const entries = new Uint8Array((slots.length / 16) * RECORD);
      const out = new DataView(entries.buffer);
      for (let s = 0, at = 0; s < slots.length; s += 16, at += RECORD) {
        // The fingerprint as the table compares it: the low word, the high word's low half, and
        // the partition's bits on top (the bits between are not kept, and not compared).
        out.setUint32(at, words.getUint32(s, true), true);
        out.setUint32(at + 4, words.getUint32(s + 4, true), true);
        out.setUint32(at + 8, words.getUint32(s + 8, true), true);
        out.setUint32(at + 12, (partition << (32 - LOG_PARTS)) >>> 0, true);
        out.setUint32(at + 16, words.getUint32(s + 12, true), true);
      }
      visit(entries);
    });
  }

  /** Releases the memory; later calls throw DisposedError. */
  dispose(): void {
    this.shard?.dispose();
    this.shard = undefined;
  }

  /** The set's time in whole seconds: `at` (ms) or the clock's. */
  private time(at: number | undefined): number {
    this.live();
    return at === undefined ? secondsOf("now()", this.clock()) : secondsOf("at", at);
  }

  /**
   * The time from which key's recording holds at `now`: past its TTL (now - ttl + 1: a key recorded
   * ttl seconds ago is due) and past the last forget of its host or prefix (F + 1).
   */
  private cutoffFor(key: SeenKey, now: number): number {
    const ttl = this.policy.secondsFor(key);
    let cutoff = ttl === Infinity ? 0 : Math.max(0, now - ttl + 1);
    this.tombstones.all(key, (second) => {
      cutoff = Math.max(cutoff, second + 1);
    });
    return cutoff;
  }

  /**
   * Fingerprints keys and runs `op` a batch at a time on the staged fingerprints with one cutoff
   * for the batch, or per-key cutoffs staged (undefined) when a rule or a tombstone may differ
   * from key to key; returns the flags op leaves.
   */
  private batches(
    keys: readonly SeenKey[],
    now: number,
    op: (shard: FingerprintShard, n: number, cutoff: number | undefined, at: number) => void,
  ): Uint8Array {
    const list = keyList(keys);
    const packed = packedDigests(sharedEngine().staging, list, "xxh128");
    const perKey = !this.policy.uniform || this.tombstones.size > 0;
    const ttl = this.policy.defaultSeconds;
    const uniform = ttl === Infinity ? 0 : Math.max(0, now - ttl + 1);
    const cutoffs = new Uint32Array(perKey ? Math.min(BATCH, keys.length) : 0);
    const out = new Uint8Array(keys.length);
    for (let at = 0; at < keys.length; at += BATCH) {
      const n = Math.min(BATCH, keys.length - at);
      const shard = this.live();
      shard.stage(packed.subarray(16 * at, 16 * (at + n)));
      if (perKey) {
        for (let i = 0; i < n; i++) cutoffs[i] = this.cutoffFor(keys[at + i], now);
        shard.stageTimes(cutoffs.subarray(0, n));
      }
      op(shard, n, perKey ? undefined : uniform, at);
      out.set(shard.flags(n), at);
    }
    return out;
  }

  /** Records a tombstone for `pattern` at now (or `at`), dropping the ones no key can still need. */
  private forget(pattern: string, at: number | undefined): void {
    const now = this.time(at);
    this.tombstones.set(pattern, Math.max(now, this.tombstones.exact(pattern) ?? 0));
    this.dropStaleTombstones(now);
  }

  /** Drops the keys no TTL of the policy still holds (when the table would grow), and the tombstones only they needed. */
  private sweep(now: number): void {
    const longest = this.policy.longestSeconds;
    if (longest === Infinity) return;
    this.live().sweep(Math.max(0, now - longest + 1));
    this.dropStaleTombstones(now);
  }

  /** A tombstone of second F matters to keys recorded at or before F: none is held once F is older than the longest TTL. */
  private dropStaleTombstones(now: number): void {
    const longest = this.policy.longestSeconds;
    if (longest === Infinity) return;
    for (const [pattern, second] of this.tombstones.entries())
      if (second < now - longest + 1) this.tombstones.delete(pattern);
  }

  private live(): FingerprintShard {
    if (this.shard === undefined) throw new DisposedError("ExactWindowSet");
    return this.shard;
  }
}
