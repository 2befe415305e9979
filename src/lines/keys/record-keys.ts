// The key `dedup` compares when a line is a record: a field of delimited text (--field N, with
// --delimiter; RFC 4180 quoting with --csv) or a value of a JSON line (--json-key a.b). The keys of
// a batch come out as spans of one buffer, the batch's own when no key needed decoding, so they
// are fingerprinted in one call; the record is printed as it came.
import { CrawlsieveError } from "../../errors.js";
import { JsonKeyReader } from "./json-key.js";

/** What to compare: a delimited field (1-based) or a JSON value at a dotted path. */
export type KeySpec =
  | { readonly kind: "field"; readonly field: number; readonly delimiter: number; readonly csv: boolean }
  | { readonly kind: "json"; readonly path: readonly string[] };

/** What happens to a record without the key: an error naming it (default), kept as it is, or dropped. */
export type MissingPolicy = "error" | "keep" | "drop";

/** The keys of a batch's records: key j of the records that have one is data[spans[2j] .. spans[2j + 1]); has[i] = 1 when record i has a key. */
export interface RecordKeys {
  readonly data: Uint8Array;
  readonly spans: Uint32Array;
  readonly has: Uint8Array;
  readonly count: number;
}

const QUOTE = 0x22;

/** A record whose key cannot be read: names the file, the line and why. */
export class RecordKeyError extends CrawlsieveError {
  constructor(where: string, why: string) {
    super("ERR_RECORD_KEY", `${where}: ${why}; --missing keep or --missing drop passes such lines`);
  }
}

/**
 * Cuts the key of `count` records of `data`, record i being data[lines[stride i], lines[stride i + 1])
 * (its line ending left out); `where(i)` names record i ("file:line") in errors.
 */
export function recordKeys(
  data: Uint8Array,
  lines: ArrayLike<number>,
  stride: number,
  count: number,
  spec: KeySpec,
  missing: MissingPolicy,
  where: (i: number) => string,
): RecordKeys {
  const keys = new KeyList(data, count);
  const has = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const start = lines[stride * i];
    const end = lines[stride * i + 1];
    const why =
      spec.kind === "json"
        ? jsonKey(data, start, end, spec.path, keys)
        : spec.csv
          ? csvField(data, start, end, spec, keys)
          : plainField(data, start, end, spec, keys);
    if (why === undefined) has[i] = 1;
    else if (missing === "error") throw new RecordKeyError(where(i), why);
  }
  return { ...keys.finish(), has };
}

/**
 * The first `byte` in data[from, end), or -1. The search stops at the line's end: an indexOf
 * over the rest of the buffer would read to its end for every line without the byte (quadratic
 * in the lines of a read).
 */
function find(data: Uint8Array, byte: number, from: number, end: number): number {
  if (end - from < 64) {
    for (let i = from; i < end; i++) if (data[i] === byte) return i;
    return -1;
  }
  const at = data.subarray(from, end).indexOf(byte);
  return at === -1 ? -1 : from + at;
}

/** Field `field` between single-byte delimiters, no quoting (cut, awk -F). */
function plainField(
  data: Uint8Array,
  start: number,
  end: number,
  spec: { field: number; delimiter: number },
  keys: KeyList,
): string | undefined {
  let from = start;
  for (let n = 1; n < spec.field; n++) {
    const at = find(data, spec.delimiter, from, end);
    if (at === -1) return `no field ${spec.field} (the line has ${n})`;
    from = at + 1;
  }
  const at = find(data, spec.delimiter, from, end);
  keys.span(from, at === -1 ? end : at);
  return undefined;
}

/** Field `field` of an RFC 4180 record: a quoted field's value without its quotes, "" read as ". */
function csvField(
  data: Uint8Array,
  start: number,
  end: number,
  spec: { field: number; delimiter: number },
  keys: KeyList,
): string | undefined {
  let at = start;
  for (let n = 1; ; n++) {
    const wanted = n === spec.field;
    if (at < end && data[at] === QUOTE) {
      // A quoted field: up to the quote not doubled, which must end the field.
      let close = at + 1;
      let doubled = false;
      for (;;) {
        close = find(data, QUOTE, close, end);
        if (close === -1)
          return `field ${n} opens a quote that the line does not close (a quoted line break is not read)`;
        if (close + 1 < end && data[close + 1] === QUOTE) {
          doubled = true;
          close += 2;
          continue;
        }
        break;
      }
      if (close + 1 < end && data[close + 1] !== spec.delimiter) return `field ${n} has bytes after its closing quote`;
      if (wanted) {
        if (doubled) keys.bytes(undoubled(data.subarray(at + 1, close)));
        else keys.span(at + 1, close);
        return undefined;
      }
      at = close + 1;
    } else {
      const next = find(data, spec.delimiter, at, end);
      const fieldEnd = next === -1 ? end : next;
      if (wanted) {
        keys.span(at, fieldEnd);
        return undefined;
      }
      at = fieldEnd;
    }
    if (at >= end) return `no field ${spec.field} (the line has ${n})`;
    at++; // the delimiter
  }
}

/** A quoted field's bytes with each "" made one ". */
function undoubled(inner: Uint8Array): Uint8Array {
  const out = new Uint8Array(inner.length);
  let n = 0;
  for (let i = 0; i < inner.length; i++) {
    out[n++] = inner[i];
    if (inner[i] === QUOTE) i++;
  }
  return out.subarray(0, n);
}

/** Whether `key` is data[start, end) byte for byte (no Buffer: this runs in browsers and workers too). */
function sameBytes(key: Uint8Array, data: Uint8Array, start: number, end: number): boolean {
  if (end - start !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (key[i] !== data[start + i]) return false;
  return true;
}

/** One reader a key spec: it holds the path's names as bytes and reuses its buffers. */
const readers = new WeakMap<readonly string[], JsonKeyReader>();

/** The JSON value at `path` of a JSON line, compared as its own JSON text (json-key.ts says how). */
function jsonKey(
  data: Uint8Array,
  start: number,
  end: number,
  path: readonly string[],
  keys: KeyList,
): string | undefined {
  let reader = readers.get(path);
  if (reader === undefined) readers.set(path, (reader = new JsonKeyReader(path)));
  const read = reader.read(data, start, end);
  if (typeof read === "string") return read;
  const { key, rawStart, rawEnd } = read;
  if (sameBytes(key, data, rawStart, rawEnd)) keys.span(rawStart, rawEnd);
  else keys.bytes(key.slice());
  return undefined;
}

/** Keys as spans of the batch's buffer, copied into one buffer of their own once a key had to be decoded. */
class KeyList {
  private readonly spans: Uint32Array;
  private n = 0;
  /** Decoded keys, by index; a key without one is a span of `data`. */
  private decoded: (Uint8Array | undefined)[] | undefined;

  constructor(
    private readonly data: Uint8Array,
    capacity: number,
  ) {
    this.spans = new Uint32Array(2 * capacity);
  }

  span(start: number, end: number): void {
    this.spans[2 * this.n] = start;
    this.spans[2 * this.n + 1] = end;
    this.n++;
  }

  bytes(key: Uint8Array): void {
    (this.decoded ??= [])[this.n] = key;
    this.n++;
  }

  finish(): { data: Uint8Array; spans: Uint32Array; count: number } {
    if (this.decoded === undefined)
      return { data: this.data, spans: this.spans.subarray(0, 2 * this.n), count: this.n };
    let total = 0;
    for (let j = 0; j < this.n; j++) total += this.decoded[j]?.length ?? this.spans[2 * j + 1] - this.spans[2 * j];
    const data = new Uint8Array(total);
    const spans = new Uint32Array(2 * this.n);
    let at = 0;
    for (let j = 0; j < this.n; j++) {
      const key = this.decoded[j] ?? this.data.subarray(this.spans[2 * j], this.spans[2 * j + 1]);
      data.set(key, at);
      spans[2 * j] = at;
      spans[2 * j + 1] = at += key.length;
    }
    return { data, spans, count: this.n };
  }
}
