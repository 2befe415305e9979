// The seen-set of `dedup --redis`: node-redis (an optional peer dependency, loaded only here)
// with no offline queue and no reconnects, so a server that goes away fails the command at once
// instead of buffering lines that were never acknowledged.
import { CrawlsieveError, InvalidArgumentError, RedisUnavailableError } from "../errors.js";
import { fromNodeRedis, type RedisCommander } from "../redis/commander.js";
import type { Durability } from "../redis/durability.js";
import { RedisBloomFilter } from "../redis/redis-bloom-filter.js";
import { RedisDeduplicator } from "../redis/redis-deduplicator.js";
import { RedisTimeWindowFilter } from "../redis/redis-time-window-filter.js";
import { RedisWindowedSeenSet } from "../redis/redis-windowed-set.js";
import { exactWindowOptions } from "./window-set.js";
import { ScrapyRedisDupeFilter } from "../redis/scrapy-redis.js";
import type { Granularity } from "../window/granularity.js";

const UNITS: Record<string, Granularity> = { m: "minute", h: "hour", d: "day", mo: "month" };

/** What dedup needs, backed by Redis. */
export interface RedisSeenSet {
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Promise<Uint8Array>;
  addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array>;
  readonly byteLength: number;
  report(): Record<string, unknown>;
  close(): Promise<void>;
}

/** Connects (to one server, or to a cluster through its nodes' URLs) and opens the structure the flags ask for. */
export async function redisSet(options: {
  url: string;
  cluster?: boolean;
  namespace?: string;
  dupefilter?: string;
  window?: string;
  /** The exact window's --ttl-map, --refresh and --now. */
  ttlMap?: string;
  refresh?: boolean;
  now?: string;
  durability?: Durability;
  exact: boolean;
  items?: number;
  fpRate: number;
}): Promise<RedisSeenSet> {
  if (options.namespace === undefined && options.dupefilter === undefined)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--redis needs --namespace NAME (the shared seen-set's name) or --dupefilter KEY (a Scrapy-Redis dupefilter SET)",
    );
  // The exact window takes every duration (and --ttl-map); the Bloom one a count of m, h, d or mo slices.
  const exactWindow =
    options.window !== undefined && options.exact
      ? exactWindowOptions({ ...options, window: options.window })
      : undefined;
  const window =
    options.window === undefined || exactWindow !== undefined
      ? undefined
      : /^([1-9]\d*)(mo|m|h|d)$/.exec(options.window);
  if (options.window !== undefined && exactWindow === undefined && window === null)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `--window must be a count and a unit (m, h, d, mo), e.g. 7d; got ${JSON.stringify(options.window)}`,
    );
  const { commander, close, checked } = await connectRedis(options.url, options.cluster === true, "during dedup");
  const keysOf = (data: Uint8Array, spans: ArrayLike<number>) =>
    Array.from({ length: spans.length >>> 1 }, (_, i) => data.subarray(spans[2 * i], spans[2 * i + 1]));
  let addMany: (keys: readonly (string | Uint8Array)[]) => Promise<Uint8Array>;
  try {
    addMany = await openStructure();
  } catch (error) {
    // Nothing else will close the connection, and an open one keeps the process alive.
    await close();
    throw error;
  }
  return {
    addSpans: (data, spans) => checked(addMany(keysOf(data, spans))),
    addMany: (keys) => checked(addMany(keys)),
    byteLength: 0,
    report: () => ({
      redis: options.url,
      cluster: options.cluster === true,
      ...(options.dupefilter === undefined ? { namespace: options.namespace } : { dupefilter: options.dupefilter }),
    }),
    close,
  };

  async function openStructure(): Promise<(keys: readonly (string | Uint8Array)[]) => Promise<Uint8Array>> {
    if (options.dupefilter !== undefined) {
      // A Scrapy-Redis fleet's SET: each line is a URL, recorded as the fingerprint Scrapy-Redis
      // gives a GET request for it (SADD decides, as its RFPDupeFilter does).
      const filter = new ScrapyRedisDupeFilter(commander, { key: options.dupefilter });
      const text = new TextDecoder();
      return async (keys) =>
        (await filter.requestsSeen(keys.map((key) => ({ url: typeof key === "string" ? key : text.decode(key) })))).map(
          (seen) => seen ^ 1,
        );
    }
    const name = options.namespace!;
    if (exactWindow !== undefined) {
      const set = await RedisWindowedSeenSet.open(commander, { name, ...exactWindow, durability: options.durability });
      return (keys) => set.addMany(keys);
    }
    if (window !== null && window !== undefined) {
      const filter = new RedisTimeWindowFilter(commander, {
        name,
        granularity: UNITS[window[2]],
        slices: Number(window[1]),
        itemsPerSlice: options.items ?? 1_000_000,
        fpRate: options.fpRate,
      });
      return async (keys) => (await filter.seenMany(keys)).map((seen) => seen ^ 1);
    }
    if (!options.exact) {
      const filter = await RedisBloomFilter.open(commander, {
        name,
        items: options.items ?? 1_000_000,
        fpRate: options.fpRate,
        durability: options.durability,
      });
      return (keys) => filter.addMany(keys);
    }
    const dedup = new RedisDeduplicator(commander, { name, durability: options.durability });
    return async (keys) => (await dedup.checkMany(keys)).isNew;
  }
}

/** A Redis connection for a command (one server, or a cluster through its nodes' comma-separated URLs): `checked` turns a client's failure during `what` into RedisUnavailableError. */
export async function connectRedis(
  url: string,
  cluster: boolean,
  what: string,
): Promise<{ commander: RedisCommander; close: () => Promise<void>; checked: <T>(work: Promise<T>) => Promise<T> }> {
  const urls = cluster ? url.split(",") : [url];
  for (const url of urls) {
    if (!/^rediss?:\/\/[^\s,]+$/.test(url) || !URL.canParse(url)) {
      throw new InvalidArgumentError(
        "--redis",
        url,
        cluster
          ? "Redis URLs of cluster nodes, comma-separated, such as redis://127.0.0.1:7000,redis://127.0.0.1:7001"
          : "a Redis URL such as redis://127.0.0.1:6379 (or rediss:// for TLS)",
      );
    }
  }
  let redis: typeof import("redis");
  try {
    redis = await import("redis");
  } catch {
    throw new CrawlsieveError("ERR_MISSING_DEPENDENCY", "--redis needs the node-redis package: npm install redis");
  }
  const defaults = { disableOfflineQueue: true, socket: { reconnectStrategy: false as const, connectTimeout: 5_000 } };
  const client = cluster
    ? redis.createCluster({ rootNodes: urls.map((url) => ({ url })), defaults })
    : redis.createClient({ url, ...defaults });
  let failure: unknown;
  client.on("error", (error: unknown) => (failure ??= error));
  try {
    await client.connect();
  } catch (error) {
    throw new RedisUnavailableError(`connecting to ${url}`, error);
  }
  const commander = fromNodeRedis(client as unknown as Parameters<typeof fromNodeRedis>[0]);
  const close = async () => {
    if (client.isOpen) await client.close().catch(() => undefined);
  };
  const checked = async <T>(work: Promise<T>): Promise<T> => {
    try {
      return await work;
    } catch (error) {
      throw error instanceof CrawlsieveError ? error : new RedisUnavailableError(what, failure ?? error);
    }
  };
  return { commander, close, checked };
}
