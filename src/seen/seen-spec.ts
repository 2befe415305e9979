// What openSeenSet accepts: a plain object naming a backend and its few options, so integrations
// can take `seen: { backend: 'disk', path }` from configuration files as well as a ready SeenSet.
import type { Duration } from "../window/ttl-rules.js";
import type { Granularity } from "../window/granularity.js";
import type { TtlMap } from "../window/ttl-rules.js";
import type { WindowSemantics } from "../window/ttl-rules.js";

/** A duration: milliseconds, or a number with a unit: "90s", "30m", "12h", "7d", "2w". */
export type { Duration } from "../window/ttl-rules.js";

/** In this process: exact (default, 128-bit fingerprints) or a Bloom filter (`exact: false`). */
export interface MemorySeenSpec {
  readonly backend: "memory";
  /** true (default): never a false "seen"; false: a scalable Bloom filter at `fpRate`. */
  readonly exact?: boolean;
  /** Keys planned (a hint; both kinds grow past it). */
  readonly items?: number;
  /** exact: false only: the false-"seen" rate (default 1e-6). */
  readonly fpRate?: number;
  /** Bytes from an earlier `serialize()` to start from. */
  readonly bytes?: Uint8Array;
}

/**
 * In this process, a key seen again after `window` is new again ("recrawl after 7 days"): exact by
 * default (each key kept with its time, TTLs per host or URL prefix with `ttlMap`), or the Bloom
 * window (TimeWindowFilter) with `exact: false`.
 */
export interface WindowSeenSpec {
  readonly backend: "window";
  /**
   * How long a key stays seen. Exact: a Duration of whole seconds, or "never" (only `ttlMap`'s
   * rules expire keys). exact: false: a whole number of slices (at most 10,080 of them; "30s" and "90s" are refused).
   */
  readonly window: Duration | "never";
  /** true (default): no false answer, 19-28 bytes a key; false: a Bloom window at `fpRate`. */
  readonly exact?: boolean;
  /** Exact only: TTLs by host (matching its subdomains) or URL prefix ("https://a.example/news/": "1h"), "never" allowed; the longest URL prefix wins, then the most specific host. */
  readonly ttlMap?: TtlMap;
  /** Exact only: "first-seen" (default: new again a window after the sighting reported new) or "refresh" (every sighting restarts the window). */
  readonly semantics?: WindowSemantics;
  /** exact: false only: length of one slice (default: the coarsest of month (30 days), day, hour and minute cutting the window into at least 4 whole slices). */
  readonly granularity?: Granularity;
  /** Keys planned per window (default 1e6; exact: 4,096, and it grows): a Bloom slice is sized for items / slices of them; a slice given more answers with a higher false-"seen" rate. */
  readonly items?: number;
  /** exact: false only: false-"seen" rate of a query when the window holds `items` keys evenly (default 1e-6). */
  readonly fpRate?: number;
  /** Bytes from an earlier `serialize()` to start from. */
  readonly bytes?: Uint8Array;
  /** The clock in ms since the epoch (default Date.now). */
  readonly now?: () => number;
}

/**
 * On disk (Node): exact, durable per batch, shared by processes on one machine. Every key is
 * looked up in memory, or past `memory` through a filter and one block read; each batch appends
 * its new fingerprints to one file. "lmdb" is the old name of this backend (an LMDB store of an
 * earlier version found in `path` is imported once).
 */
export interface DiskSeenSpec {
  readonly backend: "disk" | "lmdb";
  /** The store's directory (created with its parents when missing). */
  readonly path: string;
  /** Keys planned: sizes the table in memory (it grows past any number; with `memory`, sized for at most the keys it holds, 32 bytes each). */
  readonly items?: number;
  /** true (default): each batch is flushed to disk before its keys are reported new (survives a power loss); false: kill -9 safe only. */
  readonly durable?: boolean;
  /** Bytes of memory the keys may take (at least 16 MiB; unset: all in memory); a store past it stays on disk, sorted, behind a filter (see DiskSeenSetOptions.memory). */
  readonly memory?: number;
  /**
   * Told what the store recovered from (a cut tail, kept aside; a failed merge or compaction;
   * lines a killed `dedup --store` run did not print). Unset: each is a process warning
   * (`process.emitWarning`, type "CrawlsieveWarning"), never silent.
   */
  readonly onRecover?: (message: string) => void;
  /** A windowed store ("30d", or "never" with a `ttlMap`): each key kept with its time, new again after its TTL (a directory of its own: window.log). Not with `memory`. */
  readonly window?: Duration | "never";
  /** With `window`: TTLs by host or URL prefix, as WindowSeenSpec's. */
  readonly ttlMap?: TtlMap;
  /** With `window`: "first-seen" (default) or "refresh". */
  readonly semantics?: WindowSemantics;
  /** With `window`: the clock in ms since the epoch (default Date.now), read under the store's lock. */
  readonly now?: () => number;
}

/** The old name of DiskSeenSpec. */
export type LmdbSeenSpec = DiskSeenSpec;

/**
 * In Redis: shared by a fleet. Exact by default; a Bloom filter with `exact: false`. With `window`,
 * an exact windowed set (RedisWindowedSeenSet: TTLs by host or prefix, forgetting hosts), or with
 * `window` and `exact: false` the Bloom time window (RedisTimeWindowFilter).
 */
export interface RedisSeenSpec {
  readonly backend: "redis";
  /** A node-redis client or cluster (connected), or a RedisCommander. */
  readonly client: unknown;
  /** The structure's name (its keys are `cs:{name}:...`); not with `dupefilter`. */
  readonly name?: string;
  /**
   * Instead of a crawlsieve structure, a Scrapy-Redis dupefilter SET such as "spider:dupefilter",
   * shared with Python crawlers: keys go in as they are, so give it request fingerprints
   * (requestFingerprint with algorithm "scrapy-redis"; the integrations' `key: 'scrapy'` does).
   */
  readonly dupefilter?: string;
  readonly exact?: boolean;
  readonly items?: number;
  readonly fpRate?: number;
  /** A key stays seen this long: whole seconds for the exact window ("30d"), a whole number of slices with `exact: false`. */
  readonly window?: Duration;
  /** Exact window only: TTLs by host or URL prefix ("news.example": "1h", "https://a.example/archive/": "never"). */
  readonly ttlMap?: TtlMap;
  /** Exact window only: "first-seen" (default) or "refresh" (every sighting restarts the TTL). */
  readonly semantics?: WindowSemantics;
  /** Exact window only: a clock in ms since the epoch (default the Redis server's TIME), for tests and replayed logs. */
  readonly now?: () => number;
  /** "replicated": a key is reported new only once a replica has it (exact and Bloom). */
  readonly durability?: "local" | "replicated";
}

/**
 * In a browser (page, dedicated worker, service worker, extension): exact, kept across reloads and
 * restarts in the Origin Private File System, or IndexedDB where OPFS is missing; tabs and workers
 * of one origin opening the same name share it.
 */
export interface BrowserSeenSpec {
  readonly backend: "browser";
  /** The set's name in this origin (the OPFS file crawlsieve/<name>.seen, or the IndexedDB database crawlsieve-seen:<name>). */
  readonly name: string;
  /** "auto" (default): OPFS where this context can use it, else IndexedDB; or one of them, refused (ERR_UNSUPPORTED) where missing. */
  readonly storage?: "auto" | "opfs" | "indexeddb";
  /** Keys planned: sizes the table in memory (it grows past any number). */
  readonly items?: number;
  /** An exact windowed set ("30d", or "never" with a `ttlMap`): each key kept with its time, new again after its TTL (the disk window's records, in the same store). */
  readonly window?: Duration | "never";
  /** With `window`: TTLs by host or URL prefix, as WindowSeenSpec's. */
  readonly ttlMap?: TtlMap;
  /** With `window`: "first-seen" (default) or "refresh". */
  readonly semantics?: WindowSemantics;
  /** With `window`: the clock in ms since the epoch (default Date.now), read under the name's Web Lock. */
  readonly now?: () => number;
}

/** Any backend openSeenSet knows. */
export type SeenSpec = MemorySeenSpec | WindowSeenSpec | DiskSeenSpec | RedisSeenSpec | BrowserSeenSpec;
