// Line dedup over byte chunks, for Node streams, browsers and workers alike: push chunks of
// newline-separated bytes, get the first occurrence of every line back, byte for byte.
// Lines are worked inside WebAssembly a chunk at a time (see line-engine.ts). A line's beginning
// left at the end of a chunk is carried into the head room before the next chunk's data; a line
// longer than the head room is gathered aside, each byte copied once, and fingerprinted in one
// piece when it ends, so time and memory stay linear in the longest line.
import { InvalidArgumentError, DisposedError } from "../errors.js";
import * as check from "../validate.js";
import { Arena, alignUp } from "../wasm/arena.js";
import { LineEngine, type LineHash } from "./line-engine.js";

/** Options of LineDeduplicator. */
export interface LineDeduplicatorOptions {
  /** "xxh128" (default) or "md5": the fingerprint of exact mode (128 bits either way). */
  readonly hash?: LineHash;
  /** Bloom filter instead of exact fingerprints: a line may be dropped as a false positive with probability fpRate. */
  readonly approx?: boolean;
  /** With approx: the false-positive rate (default 0.001). */
  readonly fpRate?: number;
  /** With approx: distinct lines planned; without it the filter grows by stages. */
  readonly items?: number;
  /** Bytes worked per WebAssembly call (default 1 MiB). */
  readonly chunkBytes?: number;
  /** Lines up to this length are carried between chunks in place; longer ones are gathered aside (default 64 KiB). */
  readonly carryBytes?: number;
  /** Scalar newline scan instead of SIMD (for tests). */
  readonly scalar?: boolean;
  /** @internal approx without items: keys planned for the first filter stage (default 2^20). */
  readonly stageItems?: number;
}

const NEWLINE = Uint8Array.of(0x0a);
const CR = 0x0d;
const NL = 0x0a;

/**
 * Exact (or approximate) line dedup over Uint8Array chunks: `push` returns the kept lines that
 * the chunk completed, `end` the last line if the input did not end with "\n". A line is its
 * bytes without "\n" or "\r\n"; output bytes are the input's (a last line gets its "\n").
 */
export class LineDeduplicator {
  private engine: LineEngine | undefined;
  private readonly chunk: number;
  private readonly head: number;
  /** Bytes of a partial line sitting just before dataPtr. */
  private carry = 0;
  /** A partial line longer than the head room, gathered aside. */
  private long: Uint8Array[] | undefined;
  private longArena: Arena | undefined;

  constructor(options: LineDeduplicatorOptions = {}) {
    const opts = check.options<LineDeduplicatorOptions>("options", options);
    const hash = opts.hash ?? "xxh128";
    if (hash !== "xxh128" && hash !== "md5") throw new InvalidArgumentError("hash", opts.hash, '"xxh128" or "md5"');
    const approx = opts.approx === true;
    const fpRate = check.probability("fpRate", opts.fpRate ?? 0.001);
    const items = opts.items === undefined ? undefined : check.positiveInteger("items", opts.items);
    this.chunk = check.integerInRange("chunkBytes", opts.chunkBytes ?? 1 << 20, 16, 1 << 28);
    this.head = check.integerInRange("carryBytes", opts.carryBytes ?? 1 << 16, 1, 1 << 28);
    this.engine = new LineEngine({ mode: approx ? "approx" : "exact", hash, fpRate, items, chunkBytes: this.chunk, headBytes: this.head, scalar: opts.scalar === true, stageItems: opts.stageItems === undefined ? undefined : check.positiveInteger("stageItems", opts.stageItems) });
  }

  /** Works a chunk; returns the kept lines it completed (a copy, so it stays valid). */
  push(chunk: Uint8Array): Uint8Array {
    const pieces: Uint8Array[] = [];
    this.write(bytesArgument(chunk), (bytes) => pieces.push(bytes.slice()));
    return join(pieces);
  }

  /** Ends the input: returns the last line (with "\n" added) when it had no "\n" and is new. */
  end(): Uint8Array {
    const pieces: Uint8Array[] = [];
    this.finish((bytes) => pieces.push(bytes.slice()));
    return join(pieces);
  }

  /** Lines seen and lines kept so far. */
  get stats(): { lines: number; unique: number; duplicates: number } {
    const { lines, unique } = this.live().counts;
    return { lines, unique, duplicates: lines - unique };
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.live().byteLength + (this.longArena?.k.memory.buffer.byteLength ?? 0);
  }

  /** The seen-set's geometry, for reports. */
  describe(): Record<string, unknown> {
    return this.live().describe();
  }

  /** Releases the memory; later calls throw DisposedError. */
  dispose(): void {
    this.engine = undefined;
    this.longArena = undefined;
  }

  /**
   * @internal Works a chunk, handing kept bytes to `sink` in order. The bytes may be a view into
   * WebAssembly memory, valid only until sink returns: the CLI writes them without a copy.
   */
  write(chunk: Uint8Array, sink: (bytes: Uint8Array) => void): void {
    for (let at = 0; at < chunk.length; ) {
      const n = Math.min(this.chunk, chunk.length - at);
      this.piece(chunk.subarray(at, at + n), sink);
      at += n;
    }
  }

  /** @internal Ends the input, handing the last line to `sink` (see write). */
  finish(sink: (bytes: Uint8Array) => void): void {
    const engine = this.live();
    if (this.long !== undefined) {
      this.endLong(false, sink);
      return;
    }
    if (this.carry > 0) {
      this.run(engine.dataPtr - this.carry, this.carry, true, sink);
      this.carry = 0;
    }
  }

  private live(): LineEngine {
    if (this.engine === undefined) throw new DisposedError("LineDeduplicator");
    return this.engine;
  }

  private piece(bytes: Uint8Array, sink: (bytes: Uint8Array) => void): void {
    const engine = this.live();
    let from = 0;
    if (this.long !== undefined) {
      const nl = bytes.indexOf(NL);
      if (nl < 0) {
        this.long.push(bytes.slice());
        return;
      }
      this.long.push(bytes.slice(0, nl + 1));
      this.endLong(true, sink);
      from = nl + 1;
    }
    const rest = bytes.length - from;
    engine.arena.u8.set(bytes.subarray(from), engine.dataPtr);
    const start = engine.dataPtr - this.carry;
    const len = this.carry + rest;
    const consumed = this.run(start, len, false, sink);
    const left = len - consumed;
    if (left <= this.head) {
      // Carry the partial line into the head room, just before where the next chunk goes.
      engine.arena.u8.copyWithin(engine.dataPtr - left, start + consumed, start + len);
      this.carry = left;
    } else {
      this.long = [engine.arena.u8.slice(start + consumed, start + len)];
      this.carry = 0;
    }
  }

  /** Runs the kernel over [ptr, ptr + len), growing the seen-set when it asks; returns bytes consumed. */
  private run(ptr: number, len: number, final: boolean, sink: (bytes: Uint8Array) => void): number {
    const engine = this.live();
    let done = 0;
    for (;;) {
      const { consumed, mustGrow } = engine.work(ptr + done, len - done, final);
      done += consumed;
      if (!mustGrow) break;
      engine.grow();
    }
    const n = engine.outLength;
    if (n > 0) {
      sink(engine.arena.u8.subarray(engine.outPtr, engine.outPtr + n));
      engine.clearOutput();
    }
    return done;
  }

  /** Fingerprints the gathered long line (its "\n" included when terminated) and emits it if new. */
  private endLong(terminated: boolean, sink: (bytes: Uint8Array) => void): void {
    const engine = this.live();
    const pieces = this.long!;
    this.long = undefined;
    let total = 0;
    for (const p of pieces) total += p.length;
    const arena = (this.longArena ??= longArena(engine));
    const keyPtr = alignUp(arena.base + 1024, 64);
    arena.reserve(keyPtr + total);
    let at = keyPtr;
    for (const p of pieces) {
      arena.u8.set(p, at);
      at += p.length;
    }
    let keyLen = terminated ? total - 1 : total;
    if (keyLen > 0 && arena.u8[keyPtr + keyLen - 1] === CR) keyLen--;
    arena.k.lineDigest(arena.base, keyPtr, keyLen, arena.base + 512);
    engine.arena.u8.set(arena.u8.subarray(arena.base + 512, arena.base + 528), engine.digestPtr);
    let fresh = engine.digestDedup();
    while (fresh === 2) {
      engine.grow();
      fresh = engine.digestDedup();
    }
    if (fresh === 1) {
      for (const p of pieces) sink(p);
      if (!terminated) sink(NEWLINE);
    }
  }
}

/** A second instance that fingerprints long lines the way `engine` does (its context: mode, hash, scratch). */
function longArena(engine: LineEngine): Arena {
  const arena = new Arena();
  arena.reserve(arena.base + 1024);
  const u32 = arena.u32;
  u32[arena.base >> 2] = engine.options.mode === "exact" ? 0 : 1;
  u32[(arena.base + 4) >> 2] = engine.options.hash === "xxh128" ? 1 : 0;
  u32[(arena.base + 16) >> 2] = arena.base + 128;
  return arena;
}

function bytesArgument(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new InvalidArgumentError("chunk", value, "a Uint8Array");
  return value;
}

function join(pieces: Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0];
  let total = 0;
  for (const p of pieces) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Dedups newline-separated bytes in one call: the first occurrence of every line, in order. */
export function dedupLines(bytes: Uint8Array, options?: LineDeduplicatorOptions): Uint8Array {
  const dedup = new LineDeduplicator(options);
  try {
    const head = dedup.push(bytes);
    const tail = dedup.end();
    return tail.length === 0 ? head : join([head, tail]);
  } finally {
    dedup.dispose();
  }
}
