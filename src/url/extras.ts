// Opt-in normalizations beyond Scrapy's rules (all off by default, so canonical URLs stay
// Scrapy-compatible unless asked): default ports, dot segments, tracking parameters, "www.".

/** Extra normalizations; each is off unless set. */
export interface ExtraNormalizations {
  /** Drop ":80" from http and ws, ":443" from https and wss, ":21" from ftp. */
  readonly removeDefaultPort?: boolean;
  /** Resolve "." and ".." path segments (RFC 3986, section 5.2.4). */
  readonly removeDotSegments?: boolean;
  /** Drop tracking parameters: true for TRACKING_PARAMETERS, or your own list ("prefix*" matches a prefix). */
  readonly removeTrackingParams?: boolean | readonly string[];
  /** Drop a leading "www." from the host. */
  readonly foldWww?: boolean;
}

/** The default tracking parameters: analytics campaign tags and ad click identifiers. */
export const TRACKING_PARAMETERS: readonly string[] = Object.freeze([
  "utm_*",
  "fbclid",
  "gclid",
  "gclsrc",
  "dclid",
  "gbraid",
  "wbraid",
  "msclkid",
  "yclid",
  "twclid",
  "ttclid",
  "li_fat_id",
  "igshid",
  "mc_cid",
  "mc_eid",
  "_hsenc",
  "_hsmi",
  "mkt_tok",
  "_ga",
  "_gl",
]);

const DEFAULT_PORTS: Record<string, string> = { http: ":80", https: ":443", ws: ":80", wss: ":443", ftp: ":21" };

type Parts = { scheme: string; netloc: string; path: string; query: string; fragment: string };

/** True when `options` turns any extra on. */
export function hasExtras(options: ExtraNormalizations): boolean {
  return Boolean(
    options.removeDefaultPort || options.removeDotSegments || options.removeTrackingParams || options.foldWww,
  );
}

/** Applies the extras that `options` turns on to canonical parts. */
export function applyExtras(parts: Parts, options: ExtraNormalizations, separator: string): Parts {
  let { netloc, path, query } = parts;
  if (options.removeDefaultPort || options.foldWww) {
    const at = netloc.lastIndexOf("@");
    const userinfo = netloc.slice(0, at + 1);
    let hostPort = netloc.slice(at + 1);
    const port = DEFAULT_PORTS[parts.scheme];
    if (options.removeDefaultPort && port !== undefined && hostPort.endsWith(port))
      hostPort = hostPort.slice(0, -port.length);
    if (options.foldWww && hostPort.startsWith("www.") && hostPort.length > 4) hostPort = hostPort.slice(4);
    netloc = userinfo + hostPort;
  }
  if (options.removeDotSegments) path = removeDotSegments(path);
  if (options.removeTrackingParams && query !== "") {
    const list = options.removeTrackingParams === true ? TRACKING_PARAMETERS : options.removeTrackingParams;
    const exact = new Set(list.filter((name) => !name.endsWith("*")));
    const prefixes = list.filter((name) => name.endsWith("*")).map((name) => name.slice(0, -1));
    const tracked = (name: string) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
    query = query
      .split(separator)
      .filter((pair) => !tracked(decodeURIComponentSafe(pair.split("=")[0])))
      .join(separator);
  }
  return { ...parts, netloc, path, query };
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
  }
}

/** RFC 3986 remove_dot_segments. */
export function removeDotSegments(path: string): string {
  const output: string[] = [];
  const segments = path.split("/");
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const last = i === segments.length - 1;
    if (segment === ".") {
      if (last) output.push("");
    } else if (segment === "..") {
      if (output.length > 1) output.pop();
      if (last) output.push("");
    } else {
      output.push(segment);
    }
  }
  const joined = output.join("/");
  return path.startsWith("/") && !joined.startsWith("/") ? "/" + joined : joined;
}
