// A line longer than a chunk reaches the engine in pieces; it is fingerprinted in an instance of
// its own, because the engine's memory ends with its seen-set, which grows in place and leaves no
// room for a key of any length. The fingerprint is the one the engine's kernel gives a line: the
// same context fields (mode, hash) and the same kernel (lineDigest), so both paths agree.
import { Arena } from "../wasm/arena.js";
import type { KernelRecord } from "../wasm/record.js";
import { lineContext, lineSizes, type LineField } from "./line-context.js";

const CR = 0x0d;

/** Fingerprints long lines the way a LineEngine of the same mode and hash does. */
export class LongLineHasher {
  private readonly arena = new Arena();
  private readonly ctx: KernelRecord<LineField>;
  private readonly digestPtr: number;
  private readonly keyPtr: number;

  constructor(approx: boolean, xxh128: boolean) {
    const arena = this.arena;
    const sizes = lineSizes(arena.k);
    // The key lies last: it grows to the longest line met.
    const r = arena.place({ ctx: sizes.context, scratch: sizes.scratch, digest: 16, key: 0 }, arena.base, "a long line");
    this.ctx = lineContext(arena.k, r.ctx);
    this.digestPtr = r.digest;
    this.keyPtr = r.key;
    this.ctx.set(arena.u8, "mode", approx ? 1 : 0);
    this.ctx.set(arena.u8, "hash", xxh128 ? 1 : 0);
    this.ctx.set(arena.u8, "scratch", r.scratch);
  }

  /** The 16-byte fingerprint of the line made of `pieces` (its "\n" included when terminated); a view valid until the next call. */
  digest(pieces: readonly Uint8Array[], terminated: boolean): Uint8Array {
    let total = 0;
    for (const p of pieces) total += p.length;
    const arena = this.arena;
    arena.place({ key: total }, this.keyPtr, "a long line");
    const key = arena.bytes(this.keyPtr, total);
    let at = 0;
    for (const p of pieces) {
      key.set(p, at);
      at += p.length;
    }
    // The key leaves out the "\n" and one "\r" before it, as the kernel does for every line.
    let keyLen = terminated ? total - 1 : total;
    if (keyLen > 0 && key[keyLen - 1] === CR) keyLen--;
    arena.k.lineDigest(this.ctx.ptr, this.keyPtr, keyLen, this.digestPtr);
    return arena.bytes(this.digestPtr, 16);
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength;
  }
}
