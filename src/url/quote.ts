// Percent-encoding as w3lib does it (byte tables, uppercase escapes). Written here because the
// platform's encodeURIComponent and URLSearchParams use other safe sets and would not reproduce
// Scrapy's canonical URLs byte for byte.
//
// Bytes travel as "byte strings": one char per byte (codes 0-255). V8 stores them compactly,
// they compare in byte order with < and >, and the common all-ASCII URL never leaves string
// land, so canonicalization allocates no typed arrays.

const UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
const RESERVED = ":/?#[]@!$&'()*+,;=";
const HEX = Array.from({ length: 256 }, (_, b) => "%" + b.toString(16).toUpperCase().padStart(2, "0"));

function table(safe: string): Uint8Array {
  const out = new Uint8Array(256);
  for (const c of UNRESERVED + safe) out[c.charCodeAt(0)] = 1;
  return out;
}

/** w3lib's _safe_chars: reserved, unreserved, "|" and "%". */
export const SAFE = table(RESERVED + "|%");
/** w3lib's _path_safe_chars: SAFE without "#". */
export const PATH_SAFE = table(RESERVED.replace("#", "") + "|%");
/** w3lib's _USERINFO_SAFEST_CHARS (its main branch): unreserved and the sub-delimiters but ";" and "=". */
export const USERINFO_SAFE = table("!$&'()*+,");
/** Python's quote_plus(safe=""): only unreserved characters stay (space becomes "+"). */
export const FORM_SAFE = table("");

/** Percent-encodes every byte of a byte string not marked in `safe`; `plus` writes space as "+". */
export function quote(bytes: string, safe: Uint8Array, plus = false): string {
  let i = 0;
  while (i < bytes.length && safe[bytes.charCodeAt(i)] === 1) i++;
  if (i === bytes.length) return bytes;
  let out = bytes.slice(0, i);
  for (; i < bytes.length; i++) {
    const b = bytes.charCodeAt(i);
    if (safe[b] === 1) out += bytes[i];
    else if (plus && b === 0x20) out += "+";
    else out += HEX[b];
  }
  return out;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** Decodes %XX escapes (valid hex only; anything else is kept as it is) of a byte string. */
export function unquote(bytes: string): string {
  let at = bytes.indexOf("%");
  if (at === -1) return bytes;
  let out = "";
  let from = 0;
  for (; at !== -1 && at + 2 < bytes.length; at = bytes.indexOf("%", at + 1)) {
    const hi = hexValue(bytes.charCodeAt(at + 1));
    const lo = hexValue(bytes.charCodeAt(at + 2));
    if (hi < 0 || lo < 0) continue;
    out += bytes.slice(from, at) + String.fromCharCode((hi << 4) | lo);
    from = at + 3;
    at += 2;
  }
  return out + bytes.slice(from);
}
