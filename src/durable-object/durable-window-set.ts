// The Worker side of the exact windowed Durable Object seen-set: a WindowedSeenSet whose keys are
// hashed here only to pick their shard (the same as durableSeenSet's, so a key always goes to one
// object) and sent whole, one call per shard per batch, to the objects named `${name}/${i}`, which
// keep each key's time and the forgotten hosts and prefixes (window-shard.ts). A forget goes to
// every shard. The time of a call is the client's `now` when given (a fleet given one clock
// agrees), else each object's own clock.
import {
  DisposedError,
  FingerprintSet,
  initSync,
  InvalidArgumentError,
  type SeenKey,
  type WindowedSeenSet,
} from "../index.workerd.js";
import * as check from "../validate.js";
import { type Ttl, type TtlMap, TtlPolicy, type WindowSemantics } from "../window/ttl-rules.js";
import {
  errorFromWire,
  ROW_FINGERPRINTS,
  SHARD_HEADER,
  SHARDS_HEADER,
  shardOf,
  WINDOW_HEADER,
  type WireError,
} from "./protocol.js";
import { CALL_BYTES, encodeCall, WINDOW_PROTOCOL, type WindowHead, type WindowOperation } from "./window-protocol.js";
import type { DurableObjectNamespaceLike, DurableObjectStubLike } from "./workers-types.js";

/** Options of durableWindowSet. */
export interface DurableWindowSetOptions {
  /** The set's name: its objects are named `${name}/0` .. `${name}/${shards - 1}` (a name is a plain set or a window, never both). */
  readonly name: string;
  /** Objects the keys are spread over (default 1); fixed for a name once it is used. */
  readonly shards?: number;
  /** How long a key stays seen when no rule of `ttlMap` matches it: a Duration of whole seconds, or "never". */
  readonly ttl: Ttl;
  /** TTLs by host (with its subdomains) or URL prefix; the longest URL prefix wins, then the most specific host. */
  readonly ttlMap?: TtlMap;
  /** "first-seen" (default): due a TTL after the sighting reported new; "refresh": every sighting restarts the TTL. */
  readonly semantics?: WindowSemantics;
  /** The clock in ms since the epoch, sent with every call; default: each object's own clock. */
  readonly now?: () => number;
}

/** A WindowedSeenSet whose calls may name their time (`at`, ms since the epoch). */
export interface DurableWindowSet extends WindowedSeenSet {
  readonly backend: "durable-object";
  /** Records keys at `at` (ms; default the clock): 1 where a key was not seen within its TTL. */
  addMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array>;
  /** 1 where a key is seen at `at` (ms; default the clock). */
  hasMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array>;
  /** Forgets every key of a host and its subdomains recorded until now (`at`, ms). */
  forgetHost(host: string, at?: number): Promise<void>;
  /** Forgets every key that starts with a URL prefix recorded until now (`at`, ms). */
  forgetPrefix(prefix: string, at?: number): Promise<void>;
}

/** Most shards a set may have. */
const MAX_SHARDS = 4096;

/** An exact windowed seen-set kept in SeenSetDurableObject objects of `namespace` (call from a Worker). */
export function durableWindowSet(
  namespace: DurableObjectNamespaceLike,
  options: DurableWindowSetOptions,
): DurableWindowSet {
  const opts = check.options<DurableWindowSetOptions>("options", options);
  if (typeof opts.name !== "string" || opts.name.length === 0)
    throw new InvalidArgumentError("name", opts.name, "a non-empty string");
  const shards = opts.shards ?? 1;
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new InvalidArgumentError("shards", shards, `an integer from 1 to ${MAX_SHARDS}`);
  new TtlPolicy(opts.ttl as Ttl, opts.ttlMap);
  const semantics = check.oneOf("semantics", opts.semantics ?? "first-seen", ["first-seen", "refresh"] as const);
  if (opts.now !== undefined && typeof opts.now !== "function")
    throw new InvalidArgumentError("now", opts.now, "a function returning ms since the epoch");
  initSync();
  const stubs = Array.from({ length: shards }, (_, i) =>
    namespace.get(namespace.idFromName(`${opts.name}/${i}`) as never),
  );
  const head = { v: WINDOW_PROTOCOL, ttl: opts.ttl as Ttl, ttlMap: opts.ttlMap, semantics };
  return new DurableWindow(stubs, head, opts.now);
}

const encoder = new TextEncoder();

/** The WindowedSeenSet over one stub per shard. */
class DurableWindow implements DurableWindowSet {
  readonly exact = true;
  readonly backend = "durable-object" as const;
  readonly semantics: WindowSemantics;
  private closed = false;
  /** Shard 0 records the shard count; it is asked before any other call (as durableSeenSet does). */
  private checked: Promise<unknown> | undefined;

  constructor(
    private readonly stubs: readonly DurableObjectStubLike[],
    private readonly head: WindowHead,
    private readonly now: (() => number) | undefined,
  ) {
    this.semantics = head.semantics ?? "first-seen";
  }

  addMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    return this.flags("add", keys, at);
  }

  hasMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    return this.flags("has", keys, at);
  }

  dueMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    return this.flags("due", keys, at);
  }

  removeMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    return this.flags("remove", keys, undefined);
  }

  async seenAtMany(keys: readonly SeenKey[]): Promise<Float64Array> {
    const out = new Float64Array(keys.length);
    await this.scatter("seen-at", keys, undefined, (bytes, indexes) => {
      const times = new Float64Array(bytes.buffer, bytes.byteOffset, indexes.length);
      indexes.forEach((key, j) => (out[key] = times[j]));
    });
    return out;
  }

  forgetHost(host: string, at?: number): Promise<void> {
    if (typeof host !== "string" || host.includes("/"))
      throw new InvalidArgumentError("host", host, 'a host such as "a.example" (no scheme, no path)');
    return this.everyShard("forget-host", at, host);
  }

  forgetPrefix(prefix: string, at?: number): Promise<void> {
    if (typeof prefix !== "string" || !/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]+/.test(prefix))
      throw new InvalidArgumentError("prefix", prefix, 'a URL prefix such as "https://a.example/news/"');
    return this.everyShard("forget-prefix", at, prefix);
  }

  async size(): Promise<number> {
    const sizes = await Promise.all(
      this.stubs.map(
        async (_, i) => ((await (await this.call(i, "size", this.body())).json()) as { size: number }).size,
      ),
    );
    return sizes.reduce((a, b) => a + b, 0);
  }

  async clear(): Promise<void> {
    await Promise.all(this.stubs.map((_, i) => this.call(i, "clear", this.body())));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** A call's body: the head with the call's time, and keys. */
  private body(at?: number, keys: readonly Uint8Array[] = [], pattern?: string): Uint8Array {
    if (at !== undefined && !(typeof at === "number" && Number.isFinite(at)))
      throw new InvalidArgumentError("at", at, "a time in ms since the epoch");
    const time = at ?? this.now?.();
    return encodeCall(
      { ...this.head, ...(time === undefined ? {} : { at: time }), ...(pattern === undefined ? {} : { pattern }) },
      keys,
    );
  }

  /** A forget sent to every shard (each holds keys of every host), at one time. */
  private async everyShard(operation: WindowOperation, at: number | undefined, pattern: string): Promise<void> {
    this.live();
    const body = this.body(at, [], pattern);
    await Promise.all(this.stubs.map((_, i) => this.call(i, operation, body)));
  }

  /** Flags of an operation, in key order. */
  private async flags(
    operation: WindowOperation,
    keys: readonly SeenKey[],
    at: number | undefined,
  ): Promise<Uint8Array> {
    const out = new Uint8Array(keys.length);
    await this.scatter(operation, keys, at, (bytes, indexes) => indexes.forEach((key, j) => (out[key] = bytes[j])));
    return out;
  }

  /** Sends each shard its keys (in calls of at most ROW_FINGERPRINTS keys and about CALL_BYTES), all at one time, and hands each answer to `take`. */
  private async scatter(
    operation: WindowOperation,
    keys: readonly SeenKey[],
    at: number | undefined,
    take: (bytes: Uint8Array, indexes: number[]) => void,
  ): Promise<void> {
    this.live();
    check.keyList("keys", keys);
    // One time for the whole batch, read once, so every shard decides at the same second.
    const time = at ?? this.now?.();
    const bytes = keys.map((key) => (typeof key === "string" ? encoder.encode(key) : key));
    const fingerprints = FingerprintSet.fingerprintMany(bytes);
    const shards = this.stubs.length;
    const members: number[][] = Array.from({ length: shards }, () => []);
    for (let i = 0; i < keys.length; i++) members[shardOf(fingerprints, 16 * i, shards)].push(i);
    await Promise.all(
      members.map(async (indexes, shard) => {
        // Calls to one shard go one after another, so a repeat of a key later in the batch finds it.
        for (let from = 0; from < indexes.length; ) {
          let to = from;
          let size = 0;
          while (
            to < indexes.length &&
            to - from < ROW_FINGERPRINTS &&
            (to === from || size + bytes[indexes[to]].length < CALL_BYTES)
          )
            size += bytes[indexes[to++]].length;
          const part = indexes.slice(from, to);
          const body = this.body(
            time,
            part.map((key) => bytes[key]),
          );
          take(new Uint8Array(await (await this.call(shard, operation, body)).arrayBuffer()), part);
          from = to;
        }
      }),
    );
  }

  /** One POST to one shard; a refusal becomes its typed error. */
  private async call(shard: number, operation: WindowOperation, body: Uint8Array): Promise<Response> {
    this.live();
    if (this.stubs.length > 1 && operation !== "claim") {
      this.checked ??= this.call(0, "claim", this.body());
      try {
        await this.checked;
      } catch (error) {
        this.checked = undefined;
        throw error;
      }
    }
    const response = await this.stubs[shard].fetch(`https://crawlsieve/window/${operation}`, {
      method: "POST",
      headers: { [SHARDS_HEADER]: String(this.stubs.length), [SHARD_HEADER]: String(shard), [WINDOW_HEADER]: "0" },
      body: body as Uint8Array<ArrayBuffer>,
    });
    if (!response.ok) throw errorFromWire((await response.json()) as WireError);
    return response;
  }

  private live(): void {
    if (this.closed) throw new DisposedError("the durable-object window set");
  }
}
