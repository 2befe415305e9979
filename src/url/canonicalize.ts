// canonicalizeUrl: Scrapy's canonical form of a URL (w3lib.url.canonicalize_url), byte for byte,
// so fingerprints computed here match a Python crawler's. The default follows the w3lib release
// current Scrapy installs (2.4.1, run on Python 3.11); `w3lib: "head"` follows w3lib's unreleased
// main branch. Optional extra normalizations are off by default so that the Scrapy rules stay exact.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { applyExtras, hasExtras, type ExtraNormalizations } from "./extras.js";
import { splitNetloc } from "./host.js";
import { idnaEncode } from "./idna.js";
import { FORM_SAFE, PATH_SAFE, quote, SAFE, unquote, USERINFO_SAFE } from "./quote.js";
import { splitParams, splitUrl } from "./split.js";
import { encodeText, encodingName, utf8ByteString } from "./text-encoding.js";

/** Which w3lib's rules: the release Scrapy installs today (default), or w3lib's unreleased main branch. */
export type W3libRules = "2.4.1" | "head";

/** Options of canonicalizeUrl; the first four mirror w3lib's keyword arguments. */
export interface CanonicalizeOptions extends ExtraNormalizations {
  /** Keep query arguments with blank values, "a=" (default true). */
  readonly keepBlankValues?: boolean;
  /** Keep the fragment (default false). */
  readonly keepFragments?: boolean;
  /** Encoding of the page the URL came from, for the query and fragment (default utf8). */
  readonly encoding?: string;
  /**
   * What separates query arguments, also used to join them. Unset: "&" and ";" both separate and
   * "&" joins (every w3lib release); "&" alone under `w3lib: "head"`. Set: that string alone, as
   * w3lib's main branch does with its query_separator keyword.
   */
  readonly querySeparator?: string;
  /** "2.4.1" (default: w3lib 2.1.2 to 2.4.1, what `pip install scrapy` gives) or "head" (w3lib's main branch). */
  readonly w3lib?: W3libRules;
}

const bytesDecoder = new TextDecoder("utf-8", { fatal: true });
const NO_OPTIONS: CanonicalizeOptions = Object.freeze({});
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
const RULES = new Set<W3libRules>(["2.4.1", "head"]);
// urllib.parse.uses_netloc of Python 3.11: schemes whose empty authority is still written "//".
const USES_NETLOC = new Set([
  "",
  "ftp",
  "http",
  "gopher",
  "nntp",
  "telnet",
  "imap",
  "wais",
  "file",
  "mms",
  "https",
  "shttp",
  "snews",
  "prospero",
  "rtsp",
  "rtspu",
  "rsync",
  "svn",
  "svn+ssh",
  "sftp",
  "nfs",
  "git",
  "git+ssh",
  "ws",
  "wss",
]);

/**
 * The canonical form of `url`: IDNA 2003 host in lowercase, query arguments sorted (blank values
 * kept by default), path and query re-quoted with uppercase escapes and unreserved characters
 * decoded, empty path as "/", no fragment unless keepFragments, surrounding whitespace and
 * tabs/newlines removed. Never throws on a string (where w3lib raises, a best-effort form is
 * returned); bytes that are not UTF-8 are percent-encoded, and a relative reference stays
 * relative ("a?b=1#x" -> "a?b=1").
 */
export function canonicalizeUrl(url: string | Uint8Array, options?: CanonicalizeOptions): string {
  const opts = options === undefined ? NO_OPTIONS : check.options<CanonicalizeOptions>("options", options);
  const text = typeof url === "string" ? url : url instanceof Uint8Array ? decodeBytes(url) : invalid(url);
  const keepBlank = opts.keepBlankValues ?? true;
  const head = opts.w3lib === "head";
  if (opts.w3lib !== undefined && !RULES.has(opts.w3lib))
    throw new InvalidArgumentError("w3lib", opts.w3lib, '"2.4.1" or "head"');
  const separator = opts.querySeparator;
  if (separator !== undefined && (typeof separator !== "string" || separator.length === 0))
    throw new InvalidArgumentError("querySeparator", separator, "a non-empty string");
  const requested = opts.encoding === undefined ? "utf8" : encodingName(opts.encoding);

  const parts = splitUrl(strip(text), head);
  const [rawPath, rawParams] = splitParams(parts.scheme, parts.path);
  const netloc = head ? headNetloc(parts.netloc) : releaseNetloc(parts.netloc);
  // As w3lib does: when the page encoding cannot represent the query or fragment, both use UTF-8.
  // The main branch also falls back when a non-ASCII host fails IDNA (it re-encodes the host).
  let queryBytes = netloc === undefined ? undefined : encodeText(parts.query, requested);
  let fragmentBytes = encodeText(parts.fragment, requested);
  if (queryBytes === undefined || fragmentBytes === undefined) {
    queryBytes = utf8ByteString(parts.query);
    fragmentBytes = utf8ByteString(parts.fragment);
  }

  const quotedPath = quote(utf8ByteString(rawPath), PATH_SAFE);
  // Without escapes, decoding changes nothing and quoting quoted text is the identity.
  const path = (quotedPath.includes("%") ? quote(unquotePath(quotedPath), PATH_SAFE) : quotedPath) || "/";
  const params = quote(utf8ByteString(rawParams), SAFE);
  let quotedQuery = quote(queryBytes, SAFE);
  // Every w3lib release splits queries on ";" as on "&" (parse_qsl_to_bytes); the main branch does not.
  if (separator === undefined && !head && quotedQuery.includes(";")) quotedQuery = quotedQuery.replaceAll(";", "&");
  const query = canonicalQuery(quotedQuery, keepBlank, separator ?? "&");
  const fragment = opts.keepFragments ? quote(fragmentBytes, head ? FRAGMENT_SAFE_HEAD : SAFE) : "";

  const canonical = {
    scheme: parts.scheme,
    netloc: netloc ?? headNetloc(parts.netloc, true)!,
    path: params === "" ? path : path + ";" + params,
    query,
    fragment,
  };
  return join(hasExtras(opts) ? applyExtras(canonical, opts, separator ?? "&") : canonical, head);
}

// The main branch quotes fragments with its "safest" set, which leaves out "#", "[", "]" and "|".
const FRAGMENT_SAFE_HEAD = PATH_SAFE.map((safe, b) => (b === 0x5b || b === 0x5d || b === 0x7c ? 0 : safe));

// w3lib 2.4.1: the whole netloc, userinfo and port included, goes through the idna codec (so
// non-ASCII userinfo is folded into the first label); then the part after the last "@" is
// lower-cased and loses trailing colons.
function releaseNetloc(raw: string): string {
  if (raw === "") return "";
  const netloc = idnaEncode(raw) ?? raw;
  const at = netloc.lastIndexOf("@");
  let hostPort = netloc.slice(at + 1).toLowerCase();
  while (hostPort.endsWith(":")) hostPort = hostPort.slice(0, -1);
  return netloc.slice(0, at + 1) + hostPort;
}

// w3lib's main branch rebuilds the netloc from urlsplit's parts: user and password decoded and
// re-quoted (UTF-8), the host alone through the idna codec, the port as a number. Undefined
// where a non-ASCII host fails IDNA and the page encoding is not UTF-8 (unless `utf8`).
function headNetloc(raw: string, utf8 = false): string | undefined {
  if (raw === "") return "";
  const { userinfo, host, port } = splitNetloc(raw);
  let out = "";
  if (userinfo !== "") {
    const credentials = userinfo.slice(0, -1);
    const colon = credentials.indexOf(":");
    const user = colon === -1 ? credentials : credentials.slice(0, colon);
    out += quote(unquote(utf8ByteString(user)), USERINFO_SAFE);
    if (colon !== -1) out += ":" + quote(unquote(utf8ByteString(credentials.slice(colon + 1))), USERINFO_SAFE);
    out += "@";
  }
  // Brackets are urlsplit's: only a hostname with a ":" gets them back.
  const hostname = (host.startsWith("[") ? host.slice(1, -1) : host).toLowerCase();
  if (hostname.includes(":")) out += "[" + hostname + "]";
  else {
    const ascii = idnaEncode(hostname);
    if (ascii === undefined && !utf8 && !ASCII.test(hostname)) return undefined;
    out += ascii ?? hostname;
  }
  const digits = port.slice(1);
  if (digits !== "") out += ":" + (/^\d+$/.test(digits) && Number(digits) <= 65535 ? String(Number(digits)) : digits);
  return out;
}

/**
 * Joins canonical parts back into a URL as urlunsplit does: Python 3.11's for the release rules
 * (an empty authority of a uses_netloc scheme is written "//", so "file:///x" keeps its slashes),
 * w3lib's own for the main branch.
 */
function join(
  parts: { scheme: string; netloc: string; path: string; query: string; fragment: string },
  head: boolean,
): string {
  let url = parts.scheme ? parts.scheme + ":" : "";
  let path = parts.path;
  if (parts.netloc) {
    if (path && !path.startsWith("/")) path = "/" + path;
    url += "//" + parts.netloc;
  } else if (
    head
      ? path.startsWith("//") || (parts.scheme && USES_NETLOC.has(parts.scheme) && (!path || path.startsWith("/")))
      : parts.scheme && USES_NETLOC.has(parts.scheme) && !path.startsWith("//")
  ) {
    if (!head && path && !path.startsWith("/")) path = "/" + path;
    url += "//";
  }
  url += path;
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
    return order.sort((a, b) =>
      names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : values[a] < values[b] ? -1 : values[a] > values[b] ? 1 : 0,
    );
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
    for (const b of bytes)
      out += b < 0x80 ? String.fromCharCode(b) : "%" + b.toString(16).toUpperCase().padStart(2, "0");
    return out;
  }
}

function invalid(url: unknown): never {
  throw new InvalidArgumentError("url", url, "a string or a Uint8Array");
}
