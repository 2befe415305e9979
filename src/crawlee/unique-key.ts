// Crawlee's request key without building a Request: the same steps as Crawlee 3.x's
// Request.computeUniqueKey and @apify/utilities' normalizeUrl, so a sieve keyed on it agrees
// with the queue's own duplicate check, and seed files or sitemaps can be filtered before any
// Request exists (building one costs a validation pass per URL).
//
// normalizeUrl: WHATWG URL of the trimmed string (the raw string is the key when that fails);
// query keys starting "utm_" deleted; the query sorted by key (stable, UTF-16 order) and
// re-serialized as form data (space as "+"); scheme and host lower-cased (so userinfo and
// default ports fall away); one trailing "/" removed from the path; the fragment kept only with
// keepUrlFragment. The extended key prefixes "METHOD(payloadhash):", the hash being the first
// 8 characters of base64(SHA-256(payload)) with "+", "/" and "=" removed.
import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../errors.js";

/** The Request options that decide Crawlee's uniqueKey. */
export interface CrawleeKeyOptions {
  /** Keep the "#fragment" in the key (Crawlee's default: false). */
  readonly keepUrlFragment?: boolean;
  /** Prefix method and a payload hash, so POSTs with different bodies differ (default false). */
  readonly useExtendedUniqueKey?: boolean;
  /** HTTP method (default "GET"), compared upper-cased. */
  readonly method?: string;
  /** Request body; Crawlee rejects one on a GET. */
  readonly payload?: string | Uint8Array;
}

/** The uniqueKey `new Request({ url, ...options })` of Crawlee 3.x computes, bit for bit. */
export function crawleeUniqueKey(url: string, options?: CrawleeKeyOptions): string {
  if (typeof url !== "string") throw new InvalidArgumentError("url", url, "a string");
  if (options === undefined) return normalizeUrl(url, false) ?? url;
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError("options", options, "an options object");
  const { keepUrlFragment = false, useExtendedUniqueKey = false, method = "GET", payload } = options;
  if (typeof keepUrlFragment !== "boolean")
    throw new InvalidArgumentError("keepUrlFragment", keepUrlFragment, "a boolean");
  if (typeof useExtendedUniqueKey !== "boolean")
    throw new InvalidArgumentError("useExtendedUniqueKey", useExtendedUniqueKey, "a boolean");
  if (typeof method !== "string") throw new InvalidArgumentError("method", method, "a string");
  if (payload !== undefined && typeof payload !== "string" && !(payload instanceof Uint8Array))
    throw new InvalidArgumentError("payload", payload, "a string or a Uint8Array");
  const upper = method.toUpperCase();
  // Crawlee's Request throws here too; an empty string payload is falsy there and allowed.
  if (upper === "GET" && payload)
    throw new InvalidArgumentError(
      "payload",
      payload,
      "absent on a GET request (Crawlee's Request rejects a GET with a payload)",
    );
  const normalized = normalizeUrl(url, keepUrlFragment) ?? url;
  if (!useExtendedUniqueKey) return normalized;
  return `${upper}(${payload ? hashPayload(payload) : ""}):${normalized}`;
}

/** @apify/utilities normalizeUrl: null where the URL does not parse. */
function normalizeUrl(url: string, keepFragment: boolean): string | null {
  if (url.length === 0) return null;
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return null;
  }
  const { searchParams } = parsed;
  for (const key of [...searchParams.keys()]) if (key.startsWith("utm_")) searchParams.delete(key);
  searchParams.sort();
  const query = searchParams.toString();
  const path = parsed.pathname.replace(/\/$/, "");
  return `${parsed.protocol.toLowerCase()}//${parsed.host.toLowerCase()}${path}${query ? `?${query}` : ""}${keepFragment ? parsed.hash : ""}`;
}

/** Request.hashPayload: 8 characters of the URL-unsafe-stripped base64 SHA-256. */
function hashPayload(payload: string | Uint8Array): string {
  return createHash("sha256").update(payload).digest("base64").replace(/[+/=]/g, "").substring(0, 8);
}
