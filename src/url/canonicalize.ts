// canonicalizeUrl: Scrapy's canonical form of a URL (w3lib.url.canonicalize_url), byte for byte,
// so fingerprints computed here match a Python crawler's. Optional extra normalizations are off
// by default so that the Scrapy rules stay exact.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { applyExtras, hasExtras, type ExtraNormalizations } from "./extras.js";
import { hostToAscii, splitNetloc } from "./host.js";
import { FORM_SAFE, PATH_SAFE, quote, SAFE, unquote } from "./quote.js";
import { splitUrl } from "./split.js";
import { encodeText, encodingName, utf8ByteString } from "./text-encoding.js";

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
const NO_OPTIONS: CanonicalizeOptions = Object.freeze({});

/**
 * The canonical form of `url`: IDNA host in lowercase, query arguments sorted (blank values kept
 * by default), path and query re-quoted with uppercase escapes and unreserved characters decoded,
 * empty path as "/", no fragment unless keepFragments, surrounding whitespace and tabs/newlines
 * removed. Never throws on a string; bytes that are not UTF-8 are percent-encoded, and a relative
 * reference stays relative ("a?b=1#x" -> "a?b=1").
 */
export function canonicalizeUrl(url: string | Uint8Array, options?: CanonicalizeOptions): string {
  const opts = options === undefined ? NO_OPTIONS : check.options<CanonicalizeOptions>("options", options);
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
    queryBytes = utf8ByteString(parts.query);
    fragmentBytes = utf8ByteString(parts.fragment);
  }

  const { userinfo, host, port } = splitNetloc(parts.netloc);
  let hostPort = ((hostToAscii(host) ?? host) + port).toLowerCase();
  while (hostPort.endsWith(":")) hostPort = hostPort.slice(0, -1);
  const netloc = parts.netloc === "" ? "" : userinfo + hostPort;

  const quotedPath = quote(utf8ByteString(parts.path), PATH_SAFE);
  // Without escapes, decoding changes nothing and quoting quoted text is the identity.
  const path = (quotedPath.includes("%") ? quote(unquotePath(quotedPath), PATH_SAFE) : quotedPath) || "/";
  const query = canonicalQuery(quote(queryBytes, SAFE), keepBlank, separator);
  const fragment = opts.keepFragments ? quote(fragmentBytes, SAFE) : "";

  const canonical = { scheme: parts.scheme, netloc, path, query, fragment };
  return join(hasExtras(opts) ? applyExtras(canonical, opts, separator) : canonical);
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
  const trimmed = start === 0 && end === url.length ? url : url.slice(start, end);
  const clean = trimmed.indexOf("\t") === -1 && trimmed.indexOf("\n") === -1 && trimmed.indexOf("\r") === -1;
  return clean ? trimmed : trimmed.replace(TAB_OR_NEWLINE, "");
}

const TAB_OR_NEWLINE = /[\t\n\r]/g;

// Escaped "/" and "?" must stay escaped: decoding them would change the path's structure.
function unquotePath(quoted: string): string {
  return unquote(quoted.replace(/%(2f|3f)/gi, (_, hex: string) => "%25" + hex.toUpperCase()));
}

/** Splits, decodes, sorts by (name, value) bytes and re-encodes the query as Python's urlencode does. */
function canonicalQuery(query: string, keepBlank: boolean, separator: string): string {
  if (query === "") return "";
  // Names and values are byte strings: < and > order them as Python orders bytes.
  const names: string[] = [];
  const values: string[] = [];
  for (let from = 0; from <= query.length; ) {
    let to = query.indexOf(separator, from);
    if (to === -1) to = query.length;
    if (to > from) {
      const eq = query.indexOf("=", from);
      const hasValue = eq !== -1 && eq < to;
      if (hasValue || keepBlank) {
        const value = hasValue ? query.slice(eq + 1, to) : "";
        if (value !== "" || keepBlank) {
          names.push(decodeFormPart(query.slice(from, hasValue ? eq : to)));
          values.push(decodeFormPart(value));
        }
      }
    }
    from = to + separator.length;
  }
  const order = sortedOrder(names, values);
  let out = "";
  for (let i = 0; i < order.length; i++) {
    if (i > 0) out += separator;
    out += quote(names[order[i]], FORM_SAFE, true) + "=" + quote(values[order[i]], FORM_SAFE, true);
  }
  return out;
}

/** Indices of the pairs in (name, value) order: insertion sort for the usual short query, else Array.sort. */
function sortedOrder(names: string[], values: string[]): number[] {
  if (names.length > 32) {
    const order = Array.from(names, (_, i) => i);
    return order.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : values[a] < values[b] ? -1 : values[a] > values[b] ? 1 : 0));
  }
  const order = new Array<number>(names.length);
  for (let i = 0; i < names.length; i++) {
    let j = i;
    while (j > 0) {
      const prev = order[j - 1];
      const before = names[prev] > names[i] || (names[prev] === names[i] && values[prev] > values[i]);
      if (!before) break;
      order[j] = prev;
      j--;
    }
    order[j] = i;
  }
  return order;
}

// "+" means space in a query, before escapes are decoded.
function decodeFormPart(part: string): string {
  return unquote(part.includes("+") ? part.replaceAll("+", " ") : part);
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
