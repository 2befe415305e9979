// A structure of format v1 (src/format/) kept in a file too large to read into one array: its
// header and parameters are read first and checked through the kind's recipe, then each payload
// segment straight from the file into where it lives (a region of a WebAssembly memory, or an
// array), its checksum folded where the bytes lie, and the trailer compared last. Writing is the
// mirror: each segment written from where it lies, none copied. Node only.
import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { ChecksumMismatchError, TruncatedInputError } from "../errors.js";
import { checksumBytes, checksumRegion } from "../format/checksum.js";
import { TRAILER_BYTES, writeHead, writeTrailer, type KindCode } from "../format/container.js";
import { headBytes, readStoredHead, type Recipe, type Region } from "../format/recipe.js";

/** Where a payload segment lies: a region of a WebAssembly memory, or bytes of an array. */
export type Segment = Region | Uint8Array;

/** Bytes a read or write moves at most (readSync and writeSync take an int32 length). */
const PIECE = 1 << 28;

const lengthOf = (segment: Segment): number => (segment instanceof Uint8Array ? segment.length : segment.bytes);

/** The bytes of `segment` from `at` on, at most PIECE (a region's view is taken anew each time: its memory may have been replaced). */
function bytesOf(segment: Segment, at: number): Uint8Array {
  const end = Math.min(lengthOf(segment), at + PIECE);
  return segment instanceof Uint8Array ? segment.subarray(at, end) : segment.arena.bytes(segment.ptr + at, end - at);
}

/** Folds the checksum over a segment where it lies. */
function fold(sum: bigint, segment: Segment): bigint {
  return segment instanceof Uint8Array
    ? checksumBytes(sum, segment)
    : checksumRegion(sum, segment.arena, segment.ptr, segment.bytes);
}

/** Bytes of a piece of shared memory copied at a time before it is folded and written (a whole number of checksum pieces, so the sum is the one a read folds). */
const SHARED_PIECE = 1 << 22;

/**
 * Writes the structure of `kind` (its parameters, then `segments` in order as its payload) to the
 * new file `path`; the caller renames it into place. Each piece is folded into the checksum as it
 * is written; a piece of shared memory (another thread may be changing it: a disk seen-set's
 * filter, whose bits are only ever set) is copied first, so the sum is that of the bytes written.
 */
export function writeStoredFile(path: string, kind: KindCode, params: Uint8Array, segments: readonly Segment[]): void {
  const head = writeHead(
    kind,
    params,
    segments.reduce((sum, s) => sum + lengthOf(s), 0),
  );
  let sum = checksumBytes(0n, head);
  const fd = openSync(path, "wx");
  try {
    let at = 0;
    const write = (bytes: Uint8Array) => {
      for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, at + done);
      at += bytes.length;
    };
    write(head);
    let copy: Uint8Array | undefined;
    for (const segment of segments) {
      if (segment instanceof Uint8Array && segment.buffer instanceof SharedArrayBuffer) {
        // One copy buffer for the whole segment: a fresh one a piece would leave the collector
        // up to a filter's size of garbage (the merge thread saves a 100 MB filter).
        if (copy === undefined || copy.length < Math.min(SHARED_PIECE, segment.length))
          copy = new Uint8Array(Math.min(SHARED_PIECE, segment.length));
        for (let from = 0; from < segment.length; from += SHARED_PIECE) {
          const end = Math.min(segment.length, from + SHARED_PIECE);
          const piece = copy.subarray(0, end - from);
          piece.set(segment.subarray(from, end));
          sum = checksumBytes(sum, piece);
          write(piece);
        }
        continue;
      }
      sum = fold(sum, segment);
      for (let from = 0; from < lengthOf(segment); from += PIECE) write(bytesOf(segment, from));
    }
    write(writeTrailer(sum));
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the structure in the file `path` through `recipe`: `place` is given its parameters and
 * says where each payload segment goes (covering the payload exactly, in order); the parameters
 * are returned once every byte is read and the checksum holds. Every refusal of the bytes is a
 * FormatError; a missing file is the system's ENOENT.
 */
export function readStoredFile<P>(path: string, recipe: Recipe<P>, place: (params: P) => readonly Segment[]): P {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const read = (into: Uint8Array, at: number): void => {
      for (let done = 0; done < into.length; ) {
        const got = readSync(fd, into, done, into.length - done, at + done);
        if (got === 0) throw new TruncatedInputError(at + into.length, at + done);
        done += got;
      }
    };
    const first = new Uint8Array(Math.min(size, 24));
    read(first, 0);
    const head = new Uint8Array(Math.min(size, headBytes(first)));
    read(head, 0);
    const stored = readStoredHead(head, size, recipe);
    const segments = place(stored.params);
    const placed = segments.reduce((sum, s) => sum + lengthOf(s), 0);
    if (placed !== stored.payloadBytes)
      throw new RangeError(`segments of ${placed} bytes for a payload of ${stored.payloadBytes}`);
    let at = head.length;
    let sum = stored.checksum;
    for (const segment of segments) {
      for (let from = 0; from < lengthOf(segment); from += PIECE) {
        const into = bytesOf(segment, from);
        read(into, at);
        at += into.length;
      }
      sum = fold(sum, segment);
    }
    const trailer = new Uint8Array(TRAILER_BYTES);
    read(trailer, at);
    const want = new DataView(trailer.buffer).getBigUint64(0, true);
    if (want !== sum) throw new ChecksumMismatchError(want, sum);
    return stored.params;
  } finally {
    closeSync(fd);
  }
}
