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
  /** Key bytes in the window, after the look-back. */
  private fill = 0;
  /** Key bytes handed to lineStreamUpdate so far (0: the stream has not begun). */
  private streamed = 0;
  /**
   * The line's last two bytes so far, not yet in the window: they may be the "\r\n" (or "\n")
   * that is no part of the key, which only the line's end tells.
   */
  private readonly tail = new Uint8Array(2);
  private tailLen = 0;

  constructor(approx: boolean, xxh128: boolean) {
    const arena = this.arena;
    const sizes = lineSizes(arena.k);
    const r = arena.place(
      {
        ctx: sizes.context,
        scratch: sizes.scratch,
        digest: 16,
        state: arena.k.LINE_STREAM_STATE_BYTES.value,
        window: array(1, BACK + WINDOW),
      },
      arena.base,
      "a long line",
    );
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
    this.begin();
    for (const piece of pieces) this.update(piece);
    return this.end(terminated);
  }

  /** Starts a line given piece by piece (update, then end): memory stays the window's whatever its length. */
  begin(): void {
    this.fill = 0;
    this.streamed = 0;
    this.tailLen = 0;
  }

  /** The line's next bytes (its "\n", when it has one, in the last). */
  update(bytes: Uint8Array): void {
    const n = bytes.length;
    if (n === 0) return;
    // Everything but the last two bytes seen is key: the tail's bytes first, then the new ones.
    const keep = Math.min(2, this.tailLen + n);
    const commit = this.tailLen + n - keep;
    const fromTail = Math.min(this.tailLen, commit);
    if (fromTail > 0) this.commit(this.tail.subarray(0, fromTail));
    if (commit > fromTail) this.commit(bytes.subarray(0, commit - fromTail));
    // The new tail: what is left of the old one, then the rest of the new bytes.
    const left = this.tail.slice(fromTail, this.tailLen);
    const rest = bytes.subarray(Math.max(0, commit - fromTail));
    this.tail.set(left, 0);
    this.tail.set(rest, left.length);
    this.tailLen = left.length + rest.length;
  }

  /** The fingerprint of the line begun last; a view valid until the next call. */
  end(terminated: boolean): Uint8Array {
    // The key leaves out the "\n" and one "\r" before it, as the kernel does for every line.
    let last = this.tailLen;
    if (terminated && last > 0 && this.tail[last - 1] === NL) last--;
    if (last > 0 && this.tail[last - 1] === CR) last--;
    if (last > 0) this.commit(this.tail.subarray(0, last));
    this.tailLen = 0;
    return this.final();
  }

  /** The fingerprint of `key` as it is (a record's key: no line ending to leave out), as a line of those bytes gets; a view valid until the next call. */
  key(key: Uint8Array): Uint8Array {
    this.begin();
    if (key.length > 0) this.commit(key);
    return this.final();
  }

  /** The fingerprint of the key bytes committed since begin(). */
  private final(): Uint8Array {
    const { k } = this.arena;
    const key = this.window.at(BACK);
    if (this.streamed === 0) {
      k.lineDigest(this.ctx.ptr, key, this.fill, this.digestPtr);
    } else {
      k.lineStreamFinal(this.ctx.ptr, this.statePtr, key, this.fill, this.streamed + this.fill, this.digestPtr);
    }
    return this.arena.bytes(this.digestPtr, 16);
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength;
  }

  /** Key bytes into the window; a full window goes to the stream only once more key follows, so the final call has 1 to WINDOW bytes. */
  private commit(bytes: Uint8Array): void {
    const u8 = this.arena.u8;
    const key = this.window.at(BACK);
    for (let at = 0; at < bytes.length; ) {
      if (this.fill === WINDOW) {
        const { k } = this.arena;
        if (this.streamed === 0) k.lineStreamInit(this.ctx.ptr, this.statePtr);
        k.lineStreamUpdate(this.ctx.ptr, this.statePtr, key, WINDOW);
        // The window's last BACK bytes become the look-back of the next.
        this.window.bytes(u8).copyWithin(0, WINDOW, WINDOW + BACK);
        this.streamed += WINDOW;
        this.fill = 0;
      }
      const n = Math.min(WINDOW - this.fill, bytes.length - at);
      u8.set(bytes.subarray(at, at + n), key + this.fill);
      this.fill += n;
      at += n;
    }
  }
}
