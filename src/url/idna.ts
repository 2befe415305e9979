// Host names to ASCII exactly as Python's "idna" codec does (IDNA 2003: RFC 3490 ToASCII with
// nameprep, RFC 3491, and Punycode, RFC 3492), because every w3lib version encodes hosts with that
// codec. The platform's URL parser speaks UTS 46 instead, which rejects what IDNA 2003 maps
// (ZWJ/ZWNJ are mapped to nothing, fullwidth "％" to "%", NBSP to a space) and keeps "ß".
import { CASE_FOLD, L_CAT, MAP_TO_NOTHING, NFKC_SINCE_3_2, PROHIBITED, RAND_AL } from "./nameprep-tables.js";

const DOTS = /[.\u3002\uff0e\uff61]/;
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
const FOLD = new Map<number, string>();
for (let i = 0; i < CASE_FOLD.length; i += 2) FOLD.set(CASE_FOLD[i] as number, CASE_FOLD[i + 1] as string);

// Crawls meet the same hosts again and again: remember recent conversions (bounded).
const cache = new Map<string, string | undefined>();
const CACHE_LIMIT = 4096;

/** `text` encoded by Python's idna codec (`text.encode("idna")`), or undefined where the codec raises. */
export function idnaEncode(text: string): string | undefined {
  if (cache.has(text)) return cache.get(text);
  const ascii = encode(text);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, ascii);
  return ascii;
}

function encode(text: string): string | undefined {
  if (text === "") return "";
  if (ASCII.test(text)) {
    // The codec's ASCII fast path: only label lengths are checked, labels split on "." alone.
    const labels = text.split(".");
    for (let i = 0; i < labels.length - 1; i++) if (labels[i].length === 0 || labels[i].length > 63) return undefined;
    return labels[labels.length - 1].length > 63 ? undefined : text;
  }
  const labels = text.split(DOTS);
  let trailingDot = "";
  if (labels[labels.length - 1] === "") {
    trailingDot = ".";
    labels.pop();
  }
  const out: string[] = [];
  for (const label of labels) {
    const ascii = toAscii(label);
    if (ascii === undefined) return undefined;
    out.push(ascii);
  }
  return out.join(".") + trailingDot;
}

// RFC 3490 ToASCII with AllowUnassigned and without UseSTD3ASCIIRules, as Python runs it.
function toAscii(label: string): string | undefined {
  if (ASCII.test(label)) return label.length > 0 && label.length < 64 ? label : undefined;
  const prepared = nameprep(label);
  if (prepared === undefined) return undefined;
  if (ASCII.test(prepared)) return prepared.length > 0 && prepared.length < 64 ? prepared : undefined;
  if (prepared.startsWith("xn--")) return undefined;
  const ace = "xn--" + punycode(prepared);
  return ace.length < 64 ? ace : undefined;
}

function inRanges(ranges: readonly number[], cp: number): boolean {
  let lo = 0;
  let hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < ranges[2 * mid]) hi = mid - 1;
    else if (cp > ranges[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/** RFC 3491 nameprep: map (B.1, B.2), NFKC of Unicode 3.2, prohibit (C.*), bidi check (D.1, D.2). */
function nameprep(label: string): string | undefined {
  let mapped = "";
  for (const ch of label) {
    const cp = ch.codePointAt(0)!;
    if (inRanges(MAP_TO_NOTHING, cp)) continue;
    // One character at a time, so a final sigma stays "σ" as in Python's stringprep.
    mapped += FOLD.get(cp) ?? ch.toLowerCase();
  }
  const prepared = nfkc32(mapped);
  const codePoints = Array.from(prepared, (ch) => ch.codePointAt(0)!);
  let randAl = false;
  for (const cp of codePoints) {
    if (inRanges(PROHIBITED, cp)) return undefined;
    if (inRanges(RAND_AL, cp)) randAl = true;
  }
  if (randAl) {
    if (codePoints.some((cp) => inRanges(L_CAT, cp))) return undefined;
    if (!inRanges(RAND_AL, codePoints[0]) || !inRanges(RAND_AL, codePoints[codePoints.length - 1])) return undefined;
  }
  return prepared;
}

// NFKC as Unicode 3.2 defines it: characters whose normalization changed since are left alone
// (they break the text into runs normalized one by one).
function nfkc32(text: string): string {
  let out = "";
  let run = "";
  for (const ch of text) {
    if (inRanges(NFKC_SINCE_3_2, ch.codePointAt(0)!)) {
      out += run.normalize("NFKC") + ch;
      run = "";
    } else run += ch;
  }
  return out + run.normalize("NFKC");
}

const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;

function digit(d: number): string {
  return String.fromCharCode(d < 26 ? 0x61 + d : 0x16 + d);
}

function adapt(delta: number, points: number, first: boolean): number {
  delta = first ? Math.floor(delta / DAMP) : delta >> 1;
  delta += Math.floor(delta / points);
  let k = 0;
  while (delta > ((BASE - T_MIN) * T_MAX) >> 1) {
    delta = Math.floor(delta / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * delta) / (delta + SKEW));
}

/** RFC 3492 Punycode encoding of a label (section 6.3). */
export function punycode(label: string): string {
  const input = Array.from(label, (ch) => ch.codePointAt(0)!);
  let out = "";
  for (const cp of input) if (cp < 0x80) out += String.fromCharCode(cp);
  const basic = out.length;
  let handled = basic;
  if (basic > 0) out += "-";
  let n = 0x80;
  let delta = 0;
  let bias = 72;
  while (handled < input.length) {
    let m = Infinity;
    for (const cp of input) if (cp >= n && cp < m) m = cp;
    delta += (m - n) * (handled + 1);
    n = m;
    for (const cp of input) {
      if (cp < n) delta++;
      if (cp !== n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
        if (q < t) break;
        out += digit(t + ((q - t) % (BASE - t)));
        q = Math.floor((q - t) / (BASE - t));
      }
      out += digit(q);
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return out;
}
