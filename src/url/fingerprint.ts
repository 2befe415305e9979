// Request fingerprints: crawlsieve's MD5 default and three Scrapy-compatible SHA-1 forms, so a
// Node crawler can share a seen-set with Python ones. All synchronous (MD5 and SHA-1 are ours).
import { FilterTooLargeError, InvalidArgumentError } from "../errors.js";
import { md5, toHex } from "../hash/md5.js";
import { sha1 } from "../hash/sha1.js";
import * as check from "../validate.js";
import { canonicalizeUrl, type W3libRules } from "./canonicalize.js";
import { utf8Bytes } from "./text-encoding.js";
import { concat as concatChecked } from "../format/container.js";

const concat = (parts: readonly Uint8Array[]) =>
  concatChecked(
    parts,
    (bytes) => new FilterTooLargeError(bytes, "a request body that large cannot be fingerprinted in one piece"),
  );

/** A request as fingerprints see it. */
export interface RequestLike {
  /** HTTP method (default GET); compared upper-cased, as Scrapy stores it. */
  readonly method?: string;
  readonly url: string;
  /** Body bytes, or a string taken as UTF-8. */
  readonly body?: string | Uint8Array | null;
  /** Header values by name (any case); only headers named in includeHeaders count. */
  readonly headers?: Readonly<Record<string, string | Uint8Array | readonly (string | Uint8Array)[]>>;
}

/** Which fingerprint. */
export type FingerprintAlgorithm = "md5" | "scrapy" | "scrapy-legacy" | "scrapy-redis";

/** Options of requestFingerprint. */
export interface FingerprintOptions {
  /**
   * md5 (default): MD5 of method "\n" canonical URL "\n" body, 16 bytes.
   * scrapy: Scrapy >= 2.7 fingerprint(): SHA-1 of sorted-key JSON of body hex, headers, method, url.
   * scrapy-legacy: Scrapy < 2.7 request_fingerprint(): SHA-1 of method, URL, body, headers concatenated.
   * scrapy-redis: scrapy-redis 0.8 RFPDupeFilter: SHA-1 of sorted-key JSON of body hex, method, url.
   */
  readonly algorithm?: FingerprintAlgorithm;
  /** Header names to include (scrapy and scrapy-legacy only), any case. */
  readonly includeHeaders?: readonly string[];
  /** Keep the URL fragment (default false). */
  readonly keepFragments?: boolean;
  /** Whose canonical URL: w3lib "2.4.1" (default, what Scrapy installs) or "head" (see canonicalizeUrl). */
  readonly w3lib?: W3libRules;
}

const ALGORITHMS = new Set<FingerprintAlgorithm>(["md5", "scrapy", "scrapy-legacy", "scrapy-redis"]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The fingerprint of a request as lowercase hex (32 digits for md5, 40 for the SHA-1 forms). */
export function requestFingerprint(request: RequestLike, options?: FingerprintOptions): string {
  const req = check.options<RequestLike>("request", request);
  const opts = check.options<FingerprintOptions>("options", options);
  const algorithm = opts.algorithm ?? "md5";
  if (!ALGORITHMS.has(algorithm)) throw new InvalidArgumentError("algorithm", algorithm, [...ALGORITHMS].join(", "));
  if (typeof req.url !== "string") throw new InvalidArgumentError("request.url", req.url, "a string");
  const method = (req.method ?? "GET").toUpperCase();
  if (!TOKEN.test(method)) throw new InvalidArgumentError("request.method", req.method, "an HTTP method token");
  const body =
    req.body === undefined || req.body === null
      ? new Uint8Array(0)
      : typeof req.body === "string"
        ? utf8Bytes(req.body)
        : (check.key("request.body", req.body) as Uint8Array);
  const url = canonicalizeUrl(req.url, { keepFragments: opts.keepFragments === true, w3lib: opts.w3lib });

  switch (algorithm) {
    case "md5": {
      // Method and canonical URL hold no newline, so the separators make the input unambiguous.
      const head = `${method}\n${url}\n`;
      return toHex(md5(body.length === 0 ? head : concat([utf8Bytes(head), body])));
    }
    case "scrapy": {
      const headers = selectedHeaders(req, opts.includeHeaders, true);
      const headerJson = headers
        .map(([name, values]) => `${pyString(toHex(name))}: [${values.map((v) => pyString(toHex(v))).join(", ")}]`)
        .join(", ");
      return toHex(
        sha1(
          `{"body": ${pyString(toHex(body))}, "headers": {${headerJson}}, "method": ${pyString(method)}, "url": ${pyString(url)}}`,
        ),
      );
    }
    case "scrapy-redis":
      return toHex(sha1(`{"body": ${pyString(toHex(body))}, "method": ${pyString(method)}, "url": ${pyString(url)}}`));
    case "scrapy-legacy": {
      const headers = selectedHeaders(req, opts.includeHeaders, false);
      if (body.length === 0 && headers.length === 0) return toHex(sha1(method + url));
      const parts = [utf8Bytes(method), utf8Bytes(url), body];
      for (const [name, values] of headers) parts.push(name, ...values);
      return toHex(sha1(concat(parts)));
    }
  }
}

/**
 * The included headers present on the request, as Scrapy's `sorted(include_headers)` then
 * lower-cased: sorted as written (so "Accept" comes before "X-A" before "accept"), duplicates kept.
 * The legacy form hashes each occurrence; the JSON form keys on the name, so it keeps one of
 * each, in the order of their hex (the order of the lower-cased names).
 */
function selectedHeaders(
  req: Partial<RequestLike>,
  include: readonly string[] | undefined,
  unique: boolean,
): [Uint8Array, Uint8Array[]][] {
  if (include === undefined || include.length === 0) return [];
  if (!Array.isArray(include)) throw new InvalidArgumentError("includeHeaders", include, "an array of header names");
  const present = new Map<string, readonly (string | Uint8Array)[]>();
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    present.set(name.toLowerCase(), Array.isArray(value) ? value : [value as string | Uint8Array]);
  }
  // Python compares code points, not UTF-16 units: the same order for header names (ASCII tokens).
  const sorted = include
    .map(String)
    .sort()
    .map((name) => name.toLowerCase());
  const names = unique ? [...new Set(sorted)].sort() : sorted;
  const out: [Uint8Array, Uint8Array[]][] = [];
  for (const name of names) {
    const values = present.get(name);
    if (values === undefined) continue;
    out.push([utf8Bytes(name), values.map((v) => (typeof v === "string" ? utf8Bytes(v) : v))]);
  }
  return out;
}

/** A JSON string as Python's json.dumps writes it (ensure_ascii: everything outside space..~ escaped). */
function pyString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x08) out += "\\b";
    else if (c === 0x0c) out += "\\f";
    else if (c < 0x20 || c > 0x7e) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += text[i];
  }
  return out + '"';
}
