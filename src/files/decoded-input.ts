// Input as datasets come (Node only): a gzip or Zstandard stream is recognised by its first bytes,
// not its name, and decompressed as it is read, so memory stays a chunk's whatever the file's
// size. gzip is node:zlib's (every member of a concatenated file); Zstandard is node:zlib's where
// the runtime has it (Node 22.15 and later), else the zstd tool in a child process where it is on
// PATH (zstd-tool.ts), and otherwise fzstd, an optional dependency loaded only then (pure
// JavaScript, streaming, from the author of fflate), its frames checked beside it. Damaged or cut-off data is a
// typed error naming the input and how far into its compressed bytes the damage was found.
import { pipeline, Readable, Transform } from "node:stream";
import { createGunzip } from "node:zlib";
import * as zlib from "node:zlib";
import { CrawlsieveError } from "../errors.js";
import { Xxh64Stream } from "../hash/xxh64-stream.js";
import { type FrameEnd, ZstdFrames } from "./zstd-frames.js";
import { hasZstdTool, zstdToolStream } from "./zstd-tool.js";

/** How an input's bytes are encoded: as they are, gzip or Zstandard. */
export type InputCoding = "plain" | "gzip" | "zstd";

/** Bytes needed to tell the coding. */
export const MAGIC_BYTES = 4;

/** The coding that the first bytes of an input announce (fewer than MAGIC_BYTES: plain). */
export function codingOf(head: Uint8Array): InputCoding {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  if (head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return "zstd";
  return "plain";
}

/** Compressed input that cannot be decoded: names the input, the coding and the compressed byte where it failed. */
export class DamagedInputError extends CrawlsieveError {
  constructor(name: string, coding: InputCoding, at: number, why: string) {
    super(
      "ERR_INPUT_DAMAGED",
      `${name}: the ${coding === "gzip" ? "gzip" : "Zstandard"} data is damaged or cut off (${why}), found after ${at} of its bytes`,
    );
  }
}

/**
 * The decoded bytes of `source` (named `name` in errors), whose first bytes are `head` (already
 * read from it, and not in `source`), as `coding` says.
 */
export async function* decodedChunks(
  head: Uint8Array,
  source: AsyncIterable<Uint8Array>,
  coding: InputCoding,
  name: string,
): AsyncGenerator<Uint8Array> {
  if (coding === "plain") {
    if (head.length > 0) yield head;
    yield* source;
    return;
  }
  const decoder = coding === "gzip" ? createGunzip({ chunkSize: 1 << 20 }) : await zstdStream(name);
  let fed = 0;
  let readError: unknown;
  async function* compressed(): AsyncGenerator<Uint8Array> {
    if (head.length > 0) yield head;
    fed += head.length;
    try {
      for await (const chunk of source) {
        yield chunk;
        fed += chunk.length;
      }
    } catch (error) {
      readError = error;
      throw error;
    }
  }
  // The pipeline ends the decoder with any error of either side; the loop below hears it.
  const input = Readable.from(compressed(), { objectMode: false });
  pipeline(input, decoder, () => undefined);
  try {
    for await (const chunk of decoder as AsyncIterable<Uint8Array>) yield chunk;
  } catch (error) {
    if (readError !== undefined) throw readError;
    if (error instanceof CrawlsieveError) throw error;
    throw new DamagedInputError(name, coding, fed, (error as Error).message);
  } finally {
    input.destroy();
    decoder.destroy();
  }
}

/** A Zstandard decoding stream: node:zlib's, or fzstd's wrapped as one. */
async function zstdStream(name: string): Promise<NodeJS.ReadWriteStream & { destroy(error?: Error): void }> {
  const native = (
    zlib as unknown as { createZstdDecompress?: () => NodeJS.ReadWriteStream & { destroy(error?: Error): void } }
  ).createZstdDecompress;
  if (native !== undefined) return native();
  if (hasZstdTool()) return zstdToolStream() as unknown as NodeJS.ReadWriteStream & { destroy(error?: Error): void };
  let fzstd: typeof import("fzstd");
  try {
    fzstd = await import("fzstd");
  } catch {
    throw new CrawlsieveError(
      "ERR_MISSING_DEPENDENCY",
      `${name} is Zstandard data, which this Node reads with the fzstd package: npm install fzstd (or Node 22.15 or later)`,
    );
  }
  let ended = false;
  let out: ((chunk: Uint8Array) => void) | undefined;
  // fzstd checks neither the content checksum nor the content size: the frames are walked beside it
  // (zstd-frames.ts) and what it decodes of each frame is held to what the frame's header promised.
  const frames = new ZstdFrames();
  const content = new Xxh64Stream();
  let decoded = 0;
  const inner = new fzstd.Decompress((chunk, final) => {
    if (chunk.length > 0) {
      content.update(chunk);
      decoded += chunk.length;
      out?.(chunk);
    }
    if (final) ended = true;
  });
  const frameEnded = (end: FrameEnd): void => {
    if (end.contentSize !== undefined && decoded !== end.contentSize)
      throw new Error(`a frame decodes to ${decoded} bytes where its header says ${end.contentSize}`);
    if (end.checksum !== undefined && Number(content.digest() & 0xffffffffn) !== end.checksum)
      throw new Error("a frame's content checksum does not match");
    content.reset();
    decoded = 0;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      out = (bytes) => this.push(bytes);
      try {
        for (const piece of frames.feed(chunk)) {
          inner.push(piece.bytes);
          if (piece.end !== undefined) frameEnded(piece.end);
        }
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback) {
      out = (bytes) => this.push(bytes);
      try {
        inner.push(new Uint8Array(0), true);
        // A stream that stops inside a frame decodes to what came before and never says it ended.
        callback(ended && frames.atBoundary ? undefined : new Error("the data ends inside a frame"));
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}

/** The decoded bytes of a byte stream whose coding its first bytes tell (see codingOf). */
export async function* decodedInput(source: AsyncIterable<Uint8Array>, name: string): AsyncGenerator<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  const pieces: Uint8Array[] = [];
  let have = 0;
  while (have < MAGIC_BYTES) {
    const next = await iterator.next();
    if (next.done) break;
    pieces.push(next.value);
    have += next.value.length;
  }
  const head = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
  const rest: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => iterator };
  yield* decodedChunks(head, rest, codingOf(head), name);
}
