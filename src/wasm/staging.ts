// The staging region of an arena: where a batch of keys is encoded (bytes + u32 spans) for one
// kernel call, with room for the kernel's hash pairs and per-key result flags. Keys are encoded
// here, never inside a kernel: WASM sees only bytes, so strings are hashed as UTF-8, not UTF-16.
import { InvalidArgumentError } from "../errors.js";
import type { Arena } from "./arena.js";
import { array, type ArrayRegion } from "./array-region.js";

/**
 * A 16-byte digest a key as the kernels make it: MD5, XXH3-128, two XXH64s (fingerprintsXxh), or
 * XXH3-128 of the text as near-dups' exact-first compares it ("exact-text", which rewrites the staged bytes).
 */
export type Digest = "md5" | "xxh128" | "xxh64x2" | "exact-text";

/** Most keys one kernel call serves. */
export const BATCH = 4096;
/** Characters of string keys gathered into one batch before it is cut (a single longer key goes alone). */
const BATCH_CHARS = 1 << 18;
/**
 * Characters joined into one string for one native encode. V8 allocates a string above 128 KiB in
 * its large-object space, and a batch joined and encoded whole cost 80-120 ns a key against 35-40
 * in pieces of up to 2^15 characters (measured at 1e6 URL keys; a two-byte piece stays below too).
 */
const JOIN_CHARS = 1 << 15;
const INITIAL_KEY_BYTES = 1 << 16;

const encoder = new TextEncoder();
// Spans (start, end pairs) are gathered here first: growing the key region may detach the arena's views.
const spanScratch = new Uint32Array(2 * BATCH);

/** Batch staging inside one arena, starting at a fixed offset after the structure's own data. */
export class Staging {
  /** Key i is keys[spans[2i] .. spans[2i + 1]). */
  readonly spansPtr: number;
  /** The kernels' hash pairs, 16 bytes a key. */
  readonly hashesPtr: number;
  /** One result byte a key. */
  readonly outPtr: number;
  /** One skip flag a key (set kernels leave flagged keys alone). */
  readonly skipPtr: number;
  /** The spans as an array region (a start and an end, u32 each, a key). */
  readonly spans: ArrayRegion;
  /** The hash pairs as an array region (16 bytes a key), for structures that read or route them. */
  readonly hashes: ArrayRegion;
  /** The result bytes as an array region (one a key). */
  readonly out: ArrayRegion;
  /** The skip flags as an array region (one a key). */
  readonly skip: ArrayRegion;
  /** Scratch for MD5: a streaming state (MD5_STATE_BYTES) or md5Batch's lanes (MD5_LANES_SCRATCH_BYTES), as the module says. */
  readonly statePtr: number;
  /** The keys' bytes; the last region, grown by ensureKeyBytes. */
  readonly keysPtr: number;
  private keyCapacity = 0;
  private keyView: Uint8Array | undefined;
  private keyViewGeneration = -1;

  constructor(
    private readonly arena: Arena,
    start: number,
  ) {
    // The key bytes lie last: they are the one region of the batch that grows.
    const regions = arena.place(
      {
        spans: array(8, BATCH),
        hashes: array(16, BATCH),
        out: array(1, BATCH),
        skip: array(1, BATCH),
        state: Math.max(arena.k.MD5_STATE_BYTES.value, arena.k.MD5_LANES_SCRATCH_BYTES.value),
        keys: 0,
      },
      start,
    );
    this.spans = regions.spans;
    this.spansPtr = regions.spans.ptr;
    this.hashes = regions.hashes;
    this.out = regions.out;
    this.skip = regions.skip;
    this.hashesPtr = regions.hashes.ptr;
    this.outPtr = regions.out.ptr;
    this.skipPtr = regions.skip.ptr;
    this.statePtr = regions.state;
    this.keysPtr = regions.keys;
    this.ensureKeyBytes(INITIAL_KEY_BYTES);
  }

  /** End of the staging region as laid out now. */
  get end(): number {
    return this.keysPtr + this.keyCapacity;
  }

  /** Makes room for `bytes` bytes of keys; may grow memory. */
  ensureKeyBytes(bytes: number): void {
    if (bytes <= this.keyCapacity) return;
    const capacity = Math.max(bytes, this.keyCapacity * 2);
    this.arena.place({ keys: capacity }, this.keysPtr, "a batch of keys");
    this.keyCapacity = capacity;
    this.keyViewGeneration = -1;
  }

  /** Encodes one key at keysPtr and returns its byte length. */
  encodeOne(key: string | Uint8Array): number {
    if (typeof key === "string") {
      if (key.length * 3 > this.keyCapacity) this.ensureKeyBytes(key.length * 3);
      const view = this.keyRegion();
      return encoder.encodeInto(key, view).written;
    }
    if (!(key instanceof Uint8Array)) throw new InvalidArgumentError("key", key, "a string or a Uint8Array");
    this.ensureKeyBytes(key.length);
    this.arena.u8.set(key, this.keysPtr);
    return key.length;
  }

  /**
   * Encodes keys[from ..] into the batch region (bytes + spans) and returns how many
   * it took: at most BATCH and at most `limit`, stopping early where the batch is full.
   */
  encodeBatch(keys: readonly (string | Uint8Array)[], from: number, limit = BATCH): number {
    const last = Math.min(keys.length, from + Math.min(limit, BATCH));
    const first = keys[from];
    if (typeof first === "string") return this.encodeStrings(keys, from, last);
    if (first instanceof Uint8Array) return this.copyBytes(keys, from, last);
    throw new InvalidArgumentError(`keys[${from}]`, first, "a string or a Uint8Array");
  }

  /**
   * Stages keys given as spans of one buffer: key i = data[spans[2i] .. spans[2i + 1]), spans in
   * ascending order and not overlapping (as lines of a read buffer are). Takes keys from index
   * `from` and returns how many it took; the covered bytes are copied once.
   */
  stageSpans(data: Uint8Array, spans: ArrayLike<number>, from: number, limit = BATCH): number {
    const count = spans.length >>> 1;
    const last = Math.min(count, from + Math.min(limit, BATCH));
    const first = spans[2 * from];
    let end = first;
    let n = 0;
    for (let i = from; i < last; i++) {
      const s = spans[2 * i];
      const e = spans[2 * i + 1];
      if (!(s >= end && e >= s && e <= data.length && Number.isInteger(s) && Number.isInteger(e))) {
        throw new InvalidArgumentError(
          `spans[${2 * i}..${2 * i + 1}]`,
          [s, e],
          `an ascending, non-overlapping span within the data (0..${data.length})`,
        );
      }
      if (n > 0 && e - first > this.keyCapacity) break;
      spanScratch[2 * n] = s - first;
      spanScratch[2 * n + 1] = e - first;
      end = e;
      n++;
    }
    this.ensureKeyBytes(end - first);
    this.arena.u8.set(data.subarray(first, end), this.keysPtr);
    this.writeSpans(n);
    return n;
  }

  private encodeStrings(keys: readonly (string | Uint8Array)[], from: number, last: number): number {
    // First the batch's extent (lengths only: cheap, no characters read), so the key region can
    // be sized once for the worst case of 3 UTF-8 bytes per UTF-16 unit before any view is taken.
    let chars = 0;
    let n = 0;
    for (let i = from; i < last; i++) {
      const key = keys[i];
      if (typeof key !== "string") {
        if (key instanceof Uint8Array) break;
        throw new InvalidArgumentError(`keys[${i}]`, key, "a string or a Uint8Array");
      }
      if (n > 0 && chars + key.length > BATCH_CHARS) break;
      chars += key.length;
      n++;
    }
    this.ensureKeyBytes(chars * 3);
    const view = this.keyRegion();
    // Then the keys are joined in pieces of at most JOIN_CHARS and each piece encoded by one native
    // call; when every character of a piece was ASCII (written == its length) byte offsets equal
    // character offsets, else the piece's keys are encoded one by one to find their boundaries.
    let bytes = 0;
    let piece = "";
    let pieceStart = 0;
    for (let j = 0; j < n; j++) {
      const key = keys[from + j] as string;
      if (j > pieceStart && piece.length + key.length > JOIN_CHARS) {
        bytes = this.encodePiece(piece, keys, from, pieceStart, j - pieceStart, view, bytes);
        piece = "";
        pieceStart = j;
      }
      spanScratch[2 * j] = bytes + piece.length;
      piece += key;
      spanScratch[2 * j + 1] = bytes + piece.length;
    }
    this.encodePiece(piece, keys, from, pieceStart, n - pieceStart, view, bytes);
    this.writeSpans(n);
    return n;
  }

  /**
   * Encodes `piece` (keys[from + first .. from + first + count) joined, whose spans at batch index
   * `first` on were written as if it were ASCII from byte `at`) into `view` at `at`; when it was
   * not ASCII, encodes its keys one by one and rewrites their spans. Returns the end.
   */
  private encodePiece(
    piece: string,
    keys: readonly (string | Uint8Array)[],
    from: number,
    first: number,
    count: number,
    view: Uint8Array,
    at: number,
  ): number {
    const { written } = encoder.encodeInto(piece, at === 0 ? view : view.subarray(at));
    if (written === piece.length) return at + written;
    // Each key is encoded alone: a key is hashed as its own UTF-8, and a surrogate pair split
    // between two keys must not be joined into one character.
    let end = at;
    for (let j = first; j < first + count; j++) {
      spanScratch[2 * j] = end;
      end += encoder.encodeInto(keys[from + j] as string, view.subarray(end)).written;
      spanScratch[2 * j + 1] = end;
    }
    return end;
  }

  private copyBytes(keys: readonly (string | Uint8Array)[], from: number, last: number): number {
    let bytes = 0;
    let n = 0;
    for (let i = from; i < last; i++) {
      const key = keys[i];
      if (!(key instanceof Uint8Array)) {
        if (typeof key === "string") break;
        throw new InvalidArgumentError(`keys[${i}]`, key, "a string or a Uint8Array");
      }
      if (n > 0 && bytes + key.length > this.keyCapacity) break;
      if (n === 0) this.ensureKeyBytes(key.length);
      spanScratch[2 * n] = bytes;
      bytes += key.length;
      spanScratch[2 * n + 1] = bytes;
      n++;
    }
    const u8 = this.arena.u8;
    for (let j = 0; j < n; j++) u8.set(keys[from + j] as Uint8Array, this.keysPtr + spanScratch[2 * j]);
    this.writeSpans(n);
    return n;
  }

  /** Hashes the n staged keys into hash pairs (XXH64, the format's scheme 1) at hashesPtr. */
  hashStaged(n: number): void {
    this.arena.k.hashPairs(this.keysPtr, this.spansPtr, n, this.hashesPtr);
  }

  /** Hashes the n staged keys into 16-byte digests at the hash region and returns them (valid until memory grows). */
  digestStaged(n: number, digest: Digest): Uint8Array {
    const k = this.arena.k;
    if (digest === "md5") k.md5Batch(this.statePtr, this.keysPtr, this.spansPtr, n, this.hashesPtr);
    else if (digest === "xxh128") k.xxh128Batch(this.keysPtr, this.spansPtr, n, this.hashesPtr);
    else if (digest === "exact-text") k.exactTextDigests(this.keysPtr, this.spansPtr, n, this.hashesPtr);
    else k.fingerprintsXxh(this.keysPtr, this.spansPtr, n, this.hashesPtr);
    return this.hashes.bytes(this.arena.u8, 0, n);
  }

  /** Bytes of the n staged keys together, from the first key's start to the last one's end. */
  stagedBytes(n: number): number {
    if (n === 0) return 0;
    const spans = this.spans.view(this.arena.u8, Uint32Array, 0, n);
    return spans[spans.length - 1] - spans[0];
  }

  /** Bytes of the longest of the n staged keys. */
  longestKey(n: number): number {
    const spans = this.spans.view(this.arena.u8, Uint32Array, 0, n);
    let longest = 0;
    for (let j = 1; j < spans.length; j += 2) longest = Math.max(longest, spans[j] - spans[j - 1]);
    return longest;
  }

  /** Copies the batch's n result bytes (one a key, at outPtr) into `into` from index `at`. */
  readOut(into: Uint8Array, at: number, n: number): void {
    this.out.copyOut(this.arena.u8, into, at, n);
  }

  private writeSpans(n: number): void {
    this.arena.u32.set(spanScratch.subarray(0, 2 * n), this.spansPtr >>> 2);
  }

  private keyRegion(): Uint8Array {
    if (this.keyViewGeneration !== this.arena.generation || this.keyView === undefined) {
      this.keyView = this.arena.u8.subarray(this.keysPtr, this.keysPtr + this.keyCapacity);
      this.keyViewGeneration = this.arena.generation;
    }
    return this.keyView;
  }
}
