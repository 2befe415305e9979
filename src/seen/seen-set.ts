// The one interface every "seen before?" backend offers to integrations (Crawlee, node-crawler,
// the CLI): async, batched, and atomic where it matters, so an integration never cares whether
// the keys live in this process, on disk or in Redis.
import type { WindowSemantics } from "../window/ttl-rules.js";

/** A key: a string (encoded as UTF-8) or bytes. */
export type SeenKey = string | Uint8Array;

/** A set of keys seen before, shared by whoever holds it. */
export interface SeenSet {
  /**
   * Atomic check-and-insert: 1 where keys[i] was new (a repeat inside the batch is not new).
   * Among concurrent callers on one set exactly one sees a key as new. When the promise
   * resolves, the keys are as durable as the backend makes them.
   */
  addMany(keys: readonly SeenKey[]): Promise<Uint8Array>;
  /** Read-only: 1 where keys[i] was added before (for a Bloom backend: probably added). */
  hasMany(keys: readonly SeenKey[]): Promise<Uint8Array>;
  /**
   * Forgets keys, so a later addMany reports them new again; 1 where a key was there. Present
   * only on backends that can forget one key without touching others (the exact ones).
   */
  removeMany?(keys: readonly SeenKey[]): Promise<Uint8Array>;
  /** True when a "seen" answer is never wrong; false for Bloom backends (rate `fpRate`). */
  readonly exact: boolean;
  /** What the set is kept in: "memory", "window", "disk", "redis", "durable-object" or "browser". */
  readonly backend: SeenBackend;
  /** Distinct keys held (Bloom backends: keys reported new so far, an estimate). */
  size(): Promise<number>;
  /** Forgets every key. */
  clear(): Promise<void>;
  /**
   * In-memory backends: the whole state as bytes (format v1), to be given back as `bytes` in
   * the spec to openSeenSet. Absent on backends that persist themselves (disk, redis, browser).
   */
  serialize?(): Uint8Array;
  /** Saves what the backend saves and releases memory and handles; later calls throw. */
  close(): Promise<void>;
}

/** A seen-set held in this process (memory, window): its whole state can be saved as bytes. */
export interface LocalSeenSet extends SeenSet {
  /** The whole state as bytes (format v1), to be given back as `bytes` in the spec to openSeenSet. */
  serialize(): Uint8Array;
}

/** An exact seen-set that can forget single keys (memory with exact fingerprints, disk, redis, browser). */
export interface ForgettingSeenSet extends SeenSet {
  /** Forgets keys, so a later addMany reports them new again; 1 where a key was there. */
  removeMany(keys: readonly SeenKey[]): Promise<Uint8Array>;
}

/** Where a SeenSet keeps its keys. */
export type SeenBackend = "memory" | "window" | "disk" | "redis" | "durable-object" | "browser";

/** When a windowed set's keys come due again: a TTL after the sighting reported new, or after the last sighting. */
export type { WindowSemantics } from "../window/ttl-rules.js";

/**
 * An exact seen-set where a key stays seen for its TTL (a default, or a rule of its host or URL
 * prefix): addMany answers 1 for a key never seen, or whose TTL has passed, or whose host or prefix
 * was forgotten since. Times are whole seconds since the Unix epoch, on the set's one clock.
 */
export interface WindowedSeenSet extends ForgettingSeenSet {
  /** "first-seen": due a TTL after the sighting reported new; "refresh": every sighting restarts the TTL. */
  readonly semantics: WindowSemantics;
  /** When each key was last recorded (ms since the epoch, a whole second), NaN where hasMany would answer 0. */
  seenAtMany(keys: readonly SeenKey[]): Promise<Float64Array>;
  /** 1 where a key is due (not seen, or its TTL passed) at `at` (ms since the epoch; default now). */
  dueMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array>;
  /** Forgets every key of a host and its subdomains ("a.example"), and no other key. */
  forgetHost(host: string): Promise<void>;
  /** Forgets every key that starts with a URL prefix ("https://a.example/news/"), and no other key. */
  forgetPrefix(prefix: string): Promise<void>;
}
