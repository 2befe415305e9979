// A line longer than a chunk reaches the engine in pieces; it is fingerprinted in an instance of
// its own, because the engine's memory ends with its seen-set, which grows in place and leaves no
// room for a key of any length. The fingerprint is the one the engine's kernel gives a line: the
// same context fields (mode, hash) and the same kernels (lineDigest, or lineStream* past one
// window), so both paths agree. The key passes through a fixed window, so the instance's memory
// stays the same whatever the line's length (a line of gigabytes costs a megabyte here).
import { Arena } from "../wasm/arena.js";
import { array, type ArrayRegion } from "../wasm/array-region.js";
import type { KernelRecord } from "../wasm/record.js";
import { lineContext, lineSizes, type LineField } from "./line-context.js";

const CR = 0x0d;
const NL = 0x0a;
/** Bytes of the window a long key streams through: a multiple of 1,024, as lineStreamUpdate takes. */
const WINDOW = 1 << 20;
/** Bytes kept before the window: the key's 64 bytes before the final piece, which the last stripe reads. */
const BACK = 64;

/** Fingerprints long lines the way a LineEngine of the same mode and hash does. */
export class LongLineHasher {
  private readonly arena = new Arena();
  private readonly ctx: KernelRecord<LineField>;
  private readonly digestPtr: number;
  private readonly statePtr: number;
  /** The window: BACK bytes of look-back, then WINDOW bytes of key. */
  private readonly window: ArrayRegion;

  constructor(approx: boolean, xxh128: boolean) {
    const arena = this.arena;
    const sizes = lineSizes(arena.k);
    const r = arena.place({ ctx: sizes.context, scratch: sizes.scratch, digest: 16, state: arena.k.LINE_STREAM_STATE_BYTES.value, window: array(1, BACK + WINDOW) }, arena.base, "a long line");
    this.ctx = lineContext(arena.k, r.ctx);
    this.digestPtr = r.digest;
    this.statePtr = r.state;
    this.window = r.window;
    this.ctx.set(arena.u8, "mode", approx ? 1 : 0);
    this.ctx.set(arena.u8, "hash", xxh128 ? 1 : 0);
    this.ctx.set(arena.u8, "scratch", r.scratch);
  }

  /** The 16-byte fingerprint of the line made of `pieces` (its "\n" included when terminated); a view valid until the next call. */
  digest(pieces: readonly Uint8Array[], terminated: boolean): Uint8Array {
    let total = 0;
    for (const p of pieces) total += p.length;
    // The key leaves out the "\n" and one "\r" before it, as the kernel does for every line.
    let keyLen = terminated && byteFromEnd(pieces, 1) === NL ? total - 1 : total;
    if (keyLen > 0 && byteFromEnd(pieces, total - keyLen + 1) === CR) keyLen--;
    const { k } = this.arena;
    const key = this.window.at(BACK);
    const next = pieceReader(pieces);
    if (keyLen <= WINDOW) {
      next(this.arena.u8, key, keyLen);
      k.lineDigest(this.ctx.ptr, key, keyLen, this.digestPtr);
      return this.arena.bytes(this.digestPtr, 16);
    }
    k.lineStreamInit(this.ctx.ptr, this.statePtr);
    let at = 0;
    // Whole windows while more of the key follows; the last 1 to WINDOW bytes go to the final call.
    for (; keyLen - at > WINDOW; at += WINDOW) {
      next(this.arena.u8, key, WINDOW);
      k.lineStreamUpdate(this.ctx.ptr, this.statePtr, key, WINDOW);
      // The window's last BACK bytes become the look-back of the next.
      this.window.bytes(this.arena.u8).copyWithin(0, WINDOW, WINDOW + BACK);
    }
    next(this.arena.u8, key, keyLen - at);
    k.lineStreamFinal(this.ctx.ptr, this.statePtr, key, keyLen - at, keyLen, this.digestPtr);
    return this.arena.bytes(this.digestPtr, 16);
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength;
  }
}

/**
 * Reads the pieces, taken as one, front to back: each call copies the next `length` bytes to
 * `to` in `u8`, so a line of many pieces is walked once, not once a window.
 */
function pieceReader(pieces: readonly Uint8Array[]): (u8: Uint8Array, to: number, length: number) => void {
  let index = 0;
  let offset = 0;
  return (u8, to, length) => {
    for (let left = length; left > 0; ) {
      const piece = pieces[index];
      const n = Math.min(piece.length - offset, left);
      u8.set(piece.subarray(offset, offset + n), to);
      to += n;
      left -= n;
      offset += n;
      if (offset === piece.length) {
        index++;
        offset = 0;
      }
    }
  };
}

/** The byte `back` places from the end of the pieces taken as one (1 is the last), or -1. */
function byteFromEnd(pieces: readonly Uint8Array[], back: number): number {
  for (let i = pieces.length - 1; i >= 0; i--) {
    const p = pieces[i];
    if (back <= p.length) return p[p.length - back];
    back -= p.length;
  }
  return -1;
}
