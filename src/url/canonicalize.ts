// canonicalizeUrl: Scrapy's canonical form of a URL (w3lib.url.canonicalize_url), byte for byte,
// so fingerprints computed here match a Python crawler's. Optional extra normalizations are off
// by default so that the Scrapy rules stay exact.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { applyExtras, type ExtraNormalizations } from "./extras.js";
import { hostToAscii, splitNetloc } from "./host.js";
import { asciiBytes, compareBytes, FORM_SAFE, PATH_SAFE, quote, SAFE, unquote } from "./quote.js";
import { splitUrl } from "./split.js";
import { encodeText, encodingName, utf8Bytes } from "./text-encoding.js";

/** Options of canonicalizeUrl; the first four mirror w3lib's keyword arguments. */
export interface CanonicalizeOptions extends ExtraNormalizations {
  /** Keep query arguments with blank values, "a=" (default true). */
  readonly keepBlankValues?: boolean;
  /** Keep the fragment (default false). */
  readonly keepFragments?: boolean;
  /** Encoding of the page the URL came from, for the query and fragment (default utf8). */
  readonly encoding?: string;
  /** What separates query arguments (default "&"), also used to join them. */
  readonly querySeparator?: string;
}

const bytesDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The canonical form of `url`: IDNA host in lowercase, query arguments sorted (blank values kept
 * by default), path and query re-quoted with uppercase escapes and unreserved characters decoded,
 * empty path as "/", no fragment unless keepFragments, surrounding whitespace and tabs/newlines
 * removed. Never throws on a string; bytes that are not UTF-8 are percent-encoded, and a relative
 * reference stays relative ("a?b=1#x" -> "a?b=1").
 */
export function canonicalizeUrl(url: string | Uint8Array, options?: CanonicalizeOptions): string {
  const opts = check.options<CanonicalizeOptions>("options", options);
  const text = typeof url === "string" ? url : url instanceof Uint8Array ? decodeBytes(url) : invalid(url);
  const keepBlank = opts.keepBlankValues ?? true;
  const separator = opts.querySeparator ?? "&";
  if (typeof separator !== "string" || separator.length === 0) throw new InvalidArgumentError("querySeparator", separator, "a non-empty string");
  const requested = opts.encoding === undefined ? "utf8" : encodingName(opts.encoding);

  const parts = splitUrl(strip(text));
  // As w3lib does: when the page encoding cannot represent the query or fragment, both use UTF-8.
  let queryBytes = encodeText(parts.query, requested);
  let fragmentBytes = encodeText(parts.fragment, requested);
  if (queryBytes === undefined || fragmentBytes === undefined) {
    queryBytes = utf8Bytes(parts.query);
    fragmentBytes = utf8Bytes(parts.fragment);
  }

  const { userinfo, host, port } = splitNetloc(parts.netloc);
  let hostPort = ((hostToAscii(host) ?? host) + port).toLowerCase();
  while (hostPort.endsWith(":")) hostPort = hostPort.slice(0, -1);
  const netloc = parts.netloc === "" ? "" : userinfo + hostPort;

  const path = quote(unquotePath(quote(utf8Bytes(parts.path), PATH_SAFE)), PATH_SAFE) || "/";
  const query = canonicalQuery(quote(queryBytes, SAFE), keepBlank, separator);
  const fragment = opts.keepFragments ? quote(fragmentBytes, SAFE) : "";

  const canonical = { scheme: parts.scheme, netloc, path, query, fragment };
  return join(applyExtras(canonical, opts, separator));
}

/** Joins canonical parts back into a URL. */
export function join(parts: { scheme: string; netloc: string; path: string; query: string; fragment: string }): string {
  let url = parts.scheme ? parts.scheme + ":" : "";
  if (parts.netloc) url += "//" + parts.netloc;
  url += parts.path;
  if (parts.query) url += "?" + parts.query;
  if (parts.fragment) url += "#" + parts.fragment;
  return url;
}

// C0 controls and space at either end go; ASCII tab and newline go from everywhere (WHATWG).
function strip(url: string): string {
  let start = 0;
  let end = url.length;
  while (start < end && url.charCodeAt(start) <= 0x20) start++;
  while (end > start && url.charCodeAt(end - 1) <= 0x20) end--;
  return url.slice(start, end).replace(/[\t\n\r]/g, "");
}

// Escaped "/" and "?" must stay escaped: decoding them would change the path's structure.
function unquotePath(quoted: string): Uint8Array {
  return unquote(asciiBytes(quoted.replace(/%(2f|3f)/gi, (_, hex: string) => "%25" + hex.toUpperCase())));
}

/** Splits, decodes, sorts by (name, value) bytes and re-encodes the query as Python's urlencode does. */
function canonicalQuery(query: string, keepBlank: boolean, separator: string): string {
  if (query === "") return "";
  const pairs: [Uint8Array, Uint8Array][] = [];
  for (const field of query.split(separator)) {
    if (field === "") continue;
    const eq = field.indexOf("=");
    if (eq === -1 && !keepBlank) continue;
    const name = eq === -1 ? field : field.slice(0, eq);
    const value = eq === -1 ? "" : field.slice(eq + 1);
    if (value === "" && !keepBlank) continue;
    pairs.push([unquote(asciiBytes(name.replaceAll("+", " "))), unquote(asciiBytes(value.replaceAll("+", " ")))]);
  }
  pairs.sort((a, b) => compareBytes(a[0], b[0]) || compareBytes(a[1], b[1]));
  return pairs.map(([name, value]) => quote(name, FORM_SAFE, true) + "=" + quote(value, FORM_SAFE, true)).join(separator);
}

function decodeBytes(bytes: Uint8Array): string {
  try {
    return bytesDecoder.decode(bytes);
  } catch {
    // Not UTF-8: keep the ASCII bytes and percent-encode the rest, so nothing is lost or replaced.
    let out = "";
    for (const b of bytes) out += b < 0x80 ? String.fromCharCode(b) : "%" + b.toString(16).toUpperCase().padStart(2, "0");
    return out;
  }
}

function invalid(url: unknown): never {
  throw new InvalidArgumentError("url", url, "a string or a Uint8Array");
}
