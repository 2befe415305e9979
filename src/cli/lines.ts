// Input as batches of lines, byte-exact: a line ends at "\n"; its key leaves out the "\n" and a
// "\r" before it (CRLF and LF files compare the same), and its bytes are passed through untouched,
// invalid UTF-8 included. Memory stays bounded by the read size plus the longest line.
import { createReadStream, statSync } from "node:fs";
import { decodedInput } from "../files/decoded-input.js";
import { CrawlsieveError } from "../errors.js";
import { joinPieces } from "../lines/join-pieces.js";

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
  /** True for a batch standing for one line handed to a LongLines sink (data is empty): the sink has its key. */
  readonly long?: boolean;
}

/**
 * Takes lines too long to gather, as a streaming hash does: the key's bytes in order, in pieces
 * (the "\n", and a "\r" before it, left out). lineBatches then yields a `long` batch where the
 * line ends, so the caller asks the sink for its answer in input order.
 */
export interface LongLines {
  /** Lines of more bytes than this go to the sink. */
  readonly threshold: number;
  /** The next bytes of the current long line's key. */
  feed(bytes: Uint8Array): void;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/** Most lines in one batch: what a durable store commits at once, so output follows commits closely. */
export const MAX_BATCH_LINES = 4096;

/**
 * Splits a byte stream into line batches; a last line without "\n" still counts as a line.
 * A partial line is kept as a list of chunks and joined once, when its "\n" arrives, and each
 * chunk is scanned for "\n" once: time and memory stay linear in the longest line. Given a
 * LongLines sink, a partial line past its threshold goes there instead, and memory stays bounded.
 */
export async function* lineBatches(source: AsyncIterable<Uint8Array>, long?: LongLines): AsyncGenerator<LineBatch> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  // A long line in the sink: its last byte is held back, as a last "\r" is no part of the key.
  let streaming = false;
  let held: Uint8Array | undefined;
  const toSink = (bytes: Uint8Array) => {
    if (bytes.length === 0) return;
    if (held !== undefined) long!.feed(held);
    long!.feed(bytes.subarray(0, bytes.length - 1));
    held = bytes.slice(bytes.length - 1);
  };
  const endLong = (terminated: boolean): LineBatch => {
    if (held !== undefined && held[0] !== CR) long!.feed(held);
    held = undefined;
    streaming = false;
    return {
      data: new Uint8Array(0),
      spans: Uint32Array.of(0, 0),
      ends: Uint32Array.of(0),
      count: 1,
      unterminated: !terminated,
      long: true,
    };
  };
  for await (const chunk of source) {
    let data = chunk;
    if (streaming || pending.length > 0) {
      const nl = chunk.indexOf(NEWLINE);
      if (streaming) {
        toSink(nl === -1 ? chunk : chunk.subarray(0, nl));
        if (nl === -1) continue;
        yield endLong(true);
        data = chunk.subarray(nl + 1);
      } else if (nl === -1) {
        pending.push(chunk.slice());
        pendingBytes += chunk.length;
        if (long !== undefined && pendingBytes > long.threshold) {
          for (const piece of pending) toSink(piece);
          pending = [];
          pendingBytes = 0;
          streaming = true;
        }
        continue;
      } else {
        // The partial line ends in this chunk: its pieces joined with the chunk's bytes up to its
        // "\n", a batch of its own; the rest of the chunk is split where it lies (no copy of it).
        pending.push(chunk.subarray(0, nl + 1));
        const line = joinPieces(pending);
        pending = [];
        pendingBytes = 0;
        yield split(line);
        data = chunk.subarray(nl + 1);
      }
    }
    const batch = split(data);
    for (let from = 0; from < batch.count; from += MAX_BATCH_LINES) {
      const to = Math.min(batch.count, from + MAX_BATCH_LINES);
      yield {
        data,
        spans: batch.spans.subarray(2 * from, 2 * to),
        ends: batch.ends.subarray(from, to),
        count: to - from,
        unterminated: false,
      };
    }
    const consumed = batch.count > 0 ? batch.ends[batch.count - 1] : 0;
    if (consumed < data.length) {
      pending.push(data.slice(consumed));
      pendingBytes += data.length - consumed;
    }
  }
  if (streaming) {
    yield endLong(false);
  } else if (pending.length > 0) {
    const carry = joinPieces(pending);
    let keyEnd = carry.length;
    if (keyEnd > 0 && carry[keyEnd - 1] === CR) keyEnd--;
    yield {
      data: carry,
      spans: Uint32Array.of(0, keyEnd),
      ends: Uint32Array.of(carry.length),
      count: 1,
      unterminated: true,
    };
  }
}

/**
 * Byte chunks of each named file in turn ("-" is stdin), or of stdin when there are none; with
 * `decode`, gzip and Zstandard input decompressed (told by its first bytes).
 */
export async function* readInputs(files: readonly string[], decode = false): AsyncGenerator<AsyncIterable<Uint8Array>> {
  const read = (source: AsyncIterable<Uint8Array>, name: string) => (decode ? decodedInput(source, name) : source);
  if (files.length === 0) {
    yield read(process.stdin, "stdin");
    return;
  }
  for (const file of files) {
    if (file === "-") {
      yield read(process.stdin, "stdin");
      continue;
    }
    checkInputFile(file);
    yield read(createReadStream(file, { highWaterMark: 1 << 20 }), file);
  }
}

/** Refuses a directory by name: its first read would fail with an EISDIR that names no path. */
export function checkInputFile(file: string): void {
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory())
    throw new CrawlsieveError("ERR_IS_DIRECTORY", `${file} is a directory; give files (or no FILE to read stdin)`);
}

function split(data: Uint8Array): LineBatch {
  // One pass, one indexOf a line; the arrays grow by doubling from a guess of 32 bytes a line.
  let capacity = Math.max(16, data.length >>> 5);
  let spans = new Uint32Array(2 * capacity);
  let ends = new Uint32Array(capacity);
  let start = 0;
  let count = 0;
  for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) {
    if (count === capacity) {
      capacity *= 2;
      const grownSpans = new Uint32Array(2 * capacity);
      grownSpans.set(spans);
      spans = grownSpans;
      const grownEnds = new Uint32Array(capacity);
      grownEnds.set(ends);
      ends = grownEnds;
    }
    spans[2 * count] = start;
    spans[2 * count + 1] = at > start && data[at - 1] === CR ? at - 1 : at;
    ends[count] = at + 1;
    start = at + 1;
    count++;
  }
  return { data, spans: spans.subarray(0, 2 * count), ends: ends.subarray(0, count), count, unterminated: false };
}
