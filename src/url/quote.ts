// Percent-encoding as w3lib does it (byte tables, uppercase escapes). Written here because the
// platform's encodeURIComponent and URLSearchParams use other safe sets and would not reproduce
// Scrapy's canonical URLs byte for byte.

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
/** Python's quote_plus(safe=""): only unreserved characters stay (space becomes "+"). */
export const FORM_SAFE = table("");

/** Percent-encodes every byte not marked in `safe`; `plus` writes space as "+". */
export function quote(bytes: Uint8Array, safe: Uint8Array, plus = false): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (safe[b] === 1) out += String.fromCharCode(b);
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

/** Decodes %XX escapes (valid hex only; anything else is kept as it is) into raw bytes. */
export function unquote(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x25 && i + 2 < bytes.length) {
      const hi = hexValue(bytes[i + 1]);
      const lo = hexValue(bytes[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out[n++] = (hi << 4) | lo;
        i += 2;
        continue;
      }
    }
    out[n++] = c;
  }
  return out.subarray(0, n);
}

/** Bytes of an ASCII string (the output of quote); other characters keep their low byte. */
export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Lexicographic order of byte strings, as Python sorts bytes. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
