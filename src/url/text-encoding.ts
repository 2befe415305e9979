// Text to bytes (as byte strings, see quote.ts) in the encodings a page may declare, as Python's
// codecs write them (w3lib encodes with those). TextEncoder speaks only UTF-8, so a single-byte
// encoding is encoded by inverting TextDecoder's table for it; "latin1" means ISO-8859-1 (code
// points 0-255) as in Python, not the WHATWG alias of windows-1252. Two corrections to the
// WHATWG tables: Node 20's TextDecoder decodes windows-1252 as ISO-8859-1 (so 0x80-0x9F come from
// CP1252 below), and the bytes a Python cp125x codec leaves undefined, which WHATWG decodes to
// the C1 control of the same number, encode nothing.
import { InvalidArgumentError } from "../errors.js";

const utf8 = new TextEncoder();
const tables = new Map<string, Map<number, number>>();
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

const UTF8_NAMES = new Set(["utf8", "utf-8"]);
const LATIN1_NAMES = new Set(["latin1", "latin-1", "iso-8859-1", "iso8859-1", "l1"]);
const ALIASES: Record<string, string> = {
  cp1251: "windows-1251",
  cp1252: "windows-1252",
  cp1250: "windows-1250",
  koi8r: "koi8-r",
};

// Python's cp1252 for 0x80-0x9F; "\0" where the codec has no character.
const CP1252_HIGH =
  "\u20ac\0\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\0\u017d\0\0\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\0\u017e\u0178";

function singleByteTable(label: string): Map<number, number> {
  let table = tables.get(label);
  if (table !== undefined) return table;
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    throw new InvalidArgumentError(
      "encoding",
      label,
      "utf8, latin1 or a single-byte encoding TextDecoder knows (e.g. cp1251)",
    );
  }
  let chars = decoder.decode(new Uint8Array(256).map((_, i) => i));
  if (chars.length !== 256) throw new InvalidArgumentError("encoding", label, "a single-byte encoding");
  if (label === "windows-1252") chars = chars.slice(0, 0x80) + CP1252_HIGH + chars.slice(0xa0);
  const windows = label.startsWith("windows-");
  table = new Map();
  for (let i = 255; i >= 0; i--) {
    const c = chars.charCodeAt(i);
    if (c === 0 && i !== 0) continue;
    if (windows && i >= 0x80 && i <= 0x9f && c === i) continue;
    table.set(c, i);
  }
  tables.set(label, table);
  return table;
}

/** Checks an encoding name and returns its canonical form. */
export function encodingName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0)
    throw new InvalidArgumentError("encoding", name, "an encoding name such as utf8, latin1 or cp1251");
  const key = name.toLowerCase().replace(/[_\s]/g, "-");
  if (UTF8_NAMES.has(key)) return "utf8";
  if (LATIN1_NAMES.has(key)) return "latin1";
  const label = ALIASES[key] ?? key;
  singleByteTable(label);
  return label;
}

/** The UTF-8 bytes of `text` as a byte string (lone surrogates become U+FFFD, as TextEncoder does). */
export function utf8ByteString(text: string): string {
  if (text.length === 0 || ASCII.test(text)) return text;
  const bytes = utf8.encode(text);
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

/** `text` in `encoding` (a name from encodingName) as a byte string, or undefined when a character has no byte there. */
export function encodeText(text: string, encoding: string): string | undefined {
  if (encoding === "utf8" || ASCII.test(text)) return utf8ByteString(text);
  if (encoding === "latin1") {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 255) return undefined;
    return text;
  }
  const table = singleByteTable(encoding);
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const b = table.get(text.charCodeAt(i));
    if (b === undefined) return undefined;
    out += String.fromCharCode(b);
  }
  return out;
}

/** UTF-8 bytes of a string. */
export function utf8Bytes(text: string): Uint8Array {
  return utf8.encode(text);
}
