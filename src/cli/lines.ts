// Input as batches of lines, byte-exact: a line ends at "\n"; its key leaves out the "\n" and a
// "\r" before it (CRLF and LF files compare the same), and its bytes are passed through untouched,
// invalid UTF-8 included. Memory stays bounded by the read size plus the longest line.
import { createReadStream, statSync } from "node:fs";
import { CrawlsieveError } from "../errors.js";

/** A run of complete lines inside one buffer. */
export interface LineBatch {
  readonly data: Uint8Array;
  /** Key spans: line i's key is data[spans[2i] .. spans[2i + 1]). */
  readonly spans: Uint32Array;
  /** Line i with its terminator is data[spans[2i] .. ends[i]). */
  readonly ends: Uint32Array;
  readonly count: number;
  /** True for a final line that had no "\n". */
  readonly unterminated: boolean;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/** Most lines in one batch: what a durable store commits at once, so output follows commits closely. */
export const MAX_BATCH_LINES = 4096;

/** Splits a byte stream into line batches; a last line without "\n" still counts as a line. */
export async function* lineBatches(source: AsyncIterable<Uint8Array>): AsyncGenerator<LineBatch> {
  let carry: Uint8Array | undefined;
  for await (const chunk of source) {
    const data = carry === undefined ? chunk : join(carry, chunk);
    const batch = split(data);
    for (let from = 0; from < batch.count; from += MAX_BATCH_LINES) {
      const to = Math.min(batch.count, from + MAX_BATCH_LINES);
      yield { data, spans: batch.spans.subarray(2 * from, 2 * to), ends: batch.ends.subarray(from, to), count: to - from, unterminated: false };
    }
    const consumed = batch.count > 0 ? batch.ends[batch.count - 1] : 0;
    carry = consumed < data.length ? data.slice(consumed) : undefined;
  }
  if (carry !== undefined) {
    let keyEnd = carry.length;
    if (keyEnd > 0 && carry[keyEnd - 1] === CR) keyEnd--;
    yield { data: carry, spans: Uint32Array.of(0, keyEnd), ends: Uint32Array.of(carry.length), count: 1, unterminated: true };
  }
}

/** Byte chunks of each named file in turn, or of stdin when there are none. */
export async function* readInputs(files: readonly string[]): AsyncGenerator<AsyncIterable<Uint8Array>> {
  if (files.length === 0) {
    yield process.stdin;
    return;
  }
  for (const file of files) {
    // A directory would fail on its first read with an EISDIR that names no path.
    if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new CrawlsieveError("ERR_IS_DIRECTORY", `${file} is a directory; give files (or no FILE to read stdin)`);
    yield createReadStream(file, { highWaterMark: 1 << 20 });
  }
}

function split(data: Uint8Array): LineBatch {
  let count = 0;
  for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) count++;
  const spans = new Uint32Array(2 * count);
  const ends = new Uint32Array(count);
  let start = 0;
  let i = 0;
  for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) {
    spans[2 * i] = start;
    spans[2 * i + 1] = at > start && data[at - 1] === CR ? at - 1 : at;
    ends[i] = at + 1;
    start = at + 1;
    i++;
  }
  return { data, spans, ends, count, unterminated: false };
}

function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
