// What a keyed dedup compares instead of the whole line: a record's field or JSON value
// (record-keys.ts), the canonical URL of the line or of that value, or both. The line engine hands
// a batch of scanned lines here and fingerprints the keys that come back; the line itself is
// printed as it came.
import { canonicalizeUrl, type CanonicalizeOptions } from "../../url/canonicalize.js";
import { recordKeys, type KeySpec, type MissingPolicy, type RecordKeys } from "./record-keys.js";

/** The key of a keyed line dedup: a field or JSON value (`record`), compared as a canonical URL with `canonicalize`. */
export interface LineKeySpec {
  readonly record?: KeySpec;
  /** What a record without its key does: an error naming it (default), kept as it is, or dropped. */
  readonly missing?: MissingPolicy;
  readonly canonicalize?: CanonicalizeOptions;
  /** Longest line read whole for its key; a longer one is an error naming it. */
  readonly maxLineBytes: number;
  /** Whose limit maxLineBytes is, for that error. */
  readonly limitOf: string;
}

const encoder = new TextEncoder();

/** Cuts the keys of batches of lines for the line engine (see LineKeySpec). */
export class LineKeys {
  /** The input being read, named in errors ("file:line"); the caller sets it before each input. */
  source = "input";
  readonly missing: MissingPolicy;

  constructor(readonly spec: LineKeySpec) {
    this.missing = spec.missing ?? "error";
    // A bad option (an unknown encoding) is an error now, not at the first line.
    if (spec.canonicalize !== undefined) canonicalizeUrl("http://check.options/", spec.canonicalize);
  }

  /**
   * The keys of `count` lines of `data`, line i being data[lines[stride i], lines[stride i + 1]),
   * the first of them line `first` of the input: spans of `data`, or of a buffer of their own.
   */
  cut(data: Uint8Array, lines: ArrayLike<number>, stride: number, count: number, first: number): RecordKeys {
    const record = this.spec.record;
    const cut =
      record === undefined
        ? wholeLines(data, lines, stride, count)
        : recordKeys(data, lines, stride, count, record, this.missing, (i) => `${this.source}:${first + i}`);
    return this.spec.canonicalize === undefined ? cut : canonical(cut, this.spec.canonicalize);
  }
}

/** Every line its own key. */
function wholeLines(data: Uint8Array, lines: ArrayLike<number>, stride: number, count: number): RecordKeys {
  const spans = new Uint32Array(2 * count);
  for (let i = 0; i < count; i++) {
    spans[2 * i] = lines[stride * i];
    spans[2 * i + 1] = lines[stride * i + 1];
  }
  return { data, spans, has: new Uint8Array(count).fill(1), count };
}

/** The keys made canonical URLs, in a buffer of their own. */
function canonical(cut: RecordKeys, options: CanonicalizeOptions): RecordKeys {
  const texts = new Array<Uint8Array>(cut.count);
  let total = 0;
  for (let j = 0; j < cut.count; j++) {
    texts[j] = encoder.encode(canonicalizeUrl(cut.data.subarray(cut.spans[2 * j], cut.spans[2 * j + 1]), options));
    total += texts[j].length;
  }
  const data = new Uint8Array(total);
  const spans = new Uint32Array(2 * cut.count);
  let at = 0;
  for (let j = 0; j < cut.count; j++) {
    data.set(texts[j], at);
    spans[2 * j] = at;
    spans[2 * j + 1] = at += texts[j].length;
  }
  return { data, spans, has: cut.has, count: cut.count };
}
