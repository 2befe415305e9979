// What a request is deduplicated by. "crawlee" (the default) is the request's own uniqueKey, so
// the sieve and the queue agree on every URL; "scrapy" is a Scrapy request fingerprint over the
// w3lib-canonical URL, method and body, written into uniqueKey so the queue agrees with it too
// (and a Scrapy-Redis dupefilter holding the same fingerprints is shared); a function is the
// caller's own key, the uniqueKey left as it is.
import type { Request, Source } from "@crawlee/core";
import { Request as CrawleeRequest } from "./core.js";
import { InvalidArgumentError } from "../errors.js";
import {
  canonicalizeUrl,
  requestFingerprint,
  type ExtraNormalizations,
  type FingerprintAlgorithm,
} from "../index.node.js";
import { crawleeUniqueKey } from "./unique-key.js";

/** How requests are keyed: Crawlee's uniqueKey, a Scrapy fingerprint, or a function of the Request. */
export type SieveKey = "crawlee" | "scrapy" | ((request: Request) => string);

/** Options of the "scrapy" key. */
export interface ScrapyKeyOptions {
  /** Which fingerprint (default "scrapy-redis": the 40-hex SHA-1 scrapy-redis stores in its dupefilter SET). */
  readonly fingerprint?: FingerprintAlgorithm;
  /** Extra normalizations applied before Scrapy's canonicalization (e.g. removeTrackingParams); Python fleets must apply the same. */
  readonly canonicalize?: ExtraNormalizations;
}

/** A source after keying: what to forward (uniqueKey rewritten where the key says so) and its keys. */
export interface Keyed {
  /** The request as it goes on to the queue. */
  readonly source: Source;
  /** The key in the seen-set. */
  readonly key: string;
  /** The uniqueKey the queue will see. */
  readonly uniqueKey: string;
}

/** A function that keys one source (a plain object with url, or a Request). */
export type Keyer = (source: Source) => Keyed;

/**
 * True for a Crawlee Request, also one built by another copy of @crawlee/core (a crawler of
 * another 3.x version beside this one): it has a uniqueKey and Request's own methods.
 */
export function isRequest(value: unknown): value is Request {
  if (value instanceof CrawleeRequest) return true;
  const v = value as { uniqueKey?: unknown; pushErrorMessage?: unknown };
  return (
    v !== null && typeof v === "object" && typeof v.uniqueKey === "string" && typeof v.pushErrorMessage === "function"
  );
}

const ALGORITHMS: readonly FingerprintAlgorithm[] = ["scrapy-redis", "scrapy", "scrapy-legacy", "md5"];

/** The keyer a SieveKey describes. */
export function keyer(key: SieveKey | undefined, scrapy: ScrapyKeyOptions = {}): Keyer {
  if (key === undefined || key === "crawlee") return crawleeKey;
  if (typeof key === "function") {
    return (source) => {
      const request = isRequest(source)
        ? source
        : new CrawleeRequest(checkedUrl(source) as ConstructorParameters<typeof CrawleeRequest>[0]);
      const custom = key(request);
      if (typeof custom !== "string") throw new InvalidArgumentError("key(request)", custom, "a string");
      return { source: request, key: custom, uniqueKey: request.uniqueKey };
    };
  }
  if (key !== "scrapy") throw new InvalidArgumentError("key", key, '"crawlee", "scrapy" or a function of the Request');
  const algorithm = scrapy.fingerprint ?? "scrapy-redis";
  if (!ALGORITHMS.includes(algorithm)) throw new InvalidArgumentError("fingerprint", algorithm, ALGORITHMS.join(", "));
  const extras = scrapy.canonicalize;
  return (source) => {
    const { url, method, payload } = checkedUrl(source);
    const fingerprint = requestFingerprint(
      { url: extras === undefined ? url : canonicalizeUrl(url, extras), method, body: payload },
      { algorithm },
    );
    if (isRequest(source)) {
      source.uniqueKey = fingerprint;
      return { source, key: fingerprint, uniqueKey: fingerprint };
    }
    return { source: { ...source, uniqueKey: fingerprint }, key: fingerprint, uniqueKey: fingerprint };
  };
}

/** Crawlee's own key: the Request's uniqueKey, or what its constructor would compute. */
function crawleeKey(source: Source): Keyed {
  if (isRequest(source)) return { source, key: source.uniqueKey, uniqueKey: source.uniqueKey };
  const s = checkedUrl(source);
  // Request's constructor: an explicit uniqueKey wins unless empty.
  const uniqueKey =
    s.uniqueKey ||
    crawleeUniqueKey(s.url, {
      keepUrlFragment: s.keepUrlFragment,
      useExtendedUniqueKey: s.useExtendedUniqueKey,
      method: s.method,
      payload: s.payload as string | Uint8Array | undefined,
    });
  return { source, key: uniqueKey, uniqueKey };
}

/** The source's request fields, its url checked to be a string. */
function checkedUrl(source: Source): {
  url: string;
  uniqueKey?: string;
  method?: string;
  payload?: string | Uint8Array;
  keepUrlFragment?: boolean;
  useExtendedUniqueKey?: boolean;
} {
  const s = source as { url?: unknown };
  if (s === null || typeof s !== "object" || typeof s.url !== "string")
    throw new InvalidArgumentError("request.url", s?.url, "a string (Request options are not valid)");
  return source as ReturnType<typeof checkedUrl>;
}
