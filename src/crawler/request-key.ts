// The key a node-crawler request is deduplicated by: method, canonical URL (fragment dropped,
// query sorted, as w3lib/Scrapy canonicalize) and body, fingerprinted, so spellings of one request
// meet in one key whatever backend holds it.
import { InvalidArgumentError } from "../errors.js";
import { canonicalizeUrl } from "../url/canonicalize.js";
import { requestFingerprint } from "../url/fingerprint.js";

/** What a request is keyed by: "request" (MD5 fingerprint, default), "scrapy" (Scrapy-Redis SHA1), or a function. */
export type CrawlerKey = "request" | "scrapy" | ((request: CrawlerRequestLike) => string);

/** The fields of node-crawler's request options the key reads. */
export interface CrawlerRequestLike {
  readonly url?: unknown;
  readonly uri?: unknown;
  readonly method?: string;
  readonly body?: unknown;
  readonly form?: unknown;
  readonly json?: unknown;
}

/**
 * A key function for the `key` option (checked once, when the sieve is attached). With `urls`
 * (recrawl TTLs by host or URL prefix, which must see the URL), "request" keys a GET without a
 * body by its canonical URL, and any other request by that URL, a space and the MD5 fingerprint.
 */
export function keyFunction(
  key: CrawlerKey | undefined,
  urls = false,
): (request: CrawlerRequestLike) => string | undefined {
  if (typeof key === "function") return key;
  if (key !== undefined && key !== "request" && key !== "scrapy")
    throw new InvalidArgumentError("key", key, '"request", "scrapy" or a function (request) => string');
  const algorithm = key === "scrapy" ? "scrapy-redis" : "md5";
  return (request) => {
    const url = request.url ?? request.uri;
    // A URL given as a function is resolved by node-crawler at fetch time: nothing to key it by yet.
    if (typeof url !== "string") return undefined;
    const method = (request.method ?? "GET").toUpperCase();
    const body = bodyOf(request);
    try {
      const fingerprint = requestFingerprint({ method, url, body }, { algorithm });
      if (!urls) return fingerprint;
      const canonical = canonicalizeUrl(url);
      return method === "GET" && body === undefined ? canonical : `${canonical} ${fingerprint}`;
    } catch {
      // A URL the canonicalizer refuses still gets a key (it will fail at fetch): the exact text.
      return `${method} ${url}`;
    }
  };
}

/** The request body as bytes or text, as got would send it (body, form or json). */
function bodyOf(request: CrawlerRequestLike): string | Uint8Array | undefined {
  const { body, form, json } = request;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  if (body !== undefined && body !== null) return JSON.stringify(body);
  if (form !== undefined && form !== null) return new URLSearchParams(form as Record<string, string>).toString();
  if (json !== undefined) return JSON.stringify(json);
  return undefined;
}
