// Host names to ASCII the way Python's "idna" codec does (IDNA 2003 per label), so canonical
// URLs match Scrapy's: ASCII labels pass through, empty or over-long labels make the whole
// conversion fail (the caller then keeps the host as written), and each non-ASCII label is
// converted by the platform's URL parser (UTS 46), which agrees with IDNA 2003 on the names
// crawlers meet; the rare differences (e.g. "ß", kept by UTS 46 and mapped to "ss" by IDNA 2003)
// are documented in the README.

const DOTS = /[.\u3002\uff0e\uff61]/;
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

// Crawls meet the same hosts again and again: remember recent conversions (bounded).
const cache = new Map<string, string | undefined>();
const CACHE_LIMIT = 4096;

/** The ASCII form of a host, or undefined where Python's idna codec would raise. */
export function hostToAscii(host: string): string | undefined {
  if (cache.has(host)) return cache.get(host);
  const ascii = convert(host);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(host, ascii);
  return ascii;
}

function convert(host: string): string | undefined {
  if (host === "") return "";
  if (ASCII.test(host)) {
    const labels = host.split(".");
    for (let i = 0; i < labels.length - 1; i++) if (labels[i].length === 0 || labels[i].length > 63) return undefined;
    return labels[labels.length - 1].length > 63 ? undefined : host;
  }
  const labels = host.split(DOTS);
  let trailingDot = "";
  if (labels.length > 0 && labels[labels.length - 1] === "") {
    trailingDot = ".";
    labels.pop();
  }
  const out: string[] = [];
  for (const label of labels) {
    const ascii = labelToAscii(label);
    if (ascii === undefined) return undefined;
    out.push(ascii);
  }
  return out.join(".") + trailingDot;
}

function labelToAscii(label: string): string | undefined {
  if (label.length === 0) return undefined;
  if (ASCII.test(label)) return label.length > 63 ? undefined : label;
  let ascii: string;
  try {
    ascii = new URL(`http://${label}/`).hostname;
  } catch {
    return undefined;
  }
  if (ascii.length === 0 || ascii.length > 63 || ascii.includes(".")) return undefined;
  return ascii;
}

/** Splits a netloc into userinfo (with its "@"), host and port part (with its ":"). */
export function splitNetloc(netloc: string): { userinfo: string; host: string; port: string } {
  const at = netloc.lastIndexOf("@");
  const userinfo = at === -1 ? "" : netloc.slice(0, at + 1);
  const hostport = netloc.slice(at + 1);
  if (hostport.startsWith("[")) {
    const close = hostport.indexOf("]");
    if (close !== -1) return { userinfo, host: hostport.slice(0, close + 1), port: hostport.slice(close + 1) };
  }
  const colon = hostport.lastIndexOf(":");
  if (colon === -1) return { userinfo, host: hostport, port: "" };
  return { userinfo, host: hostport.slice(0, colon), port: hostport.slice(colon) };
}
