// XXH64 over a stream of pieces (Yann Collet's xxHash spec, XXH64_update/XXH64_digest), for checks
// of data that arrives in chunks, such as a Zstandard frame's content checksum. The state and the
// pieces live in an instance of their own; a piece is copied in and hashed in one kernel call.
import { Arena } from "../wasm/arena.js";

/** Bytes of a piece hashed in one call: larger pieces go in several. */
const PIECE = 1 << 16;

/** A running XXH64: update() with pieces, digest() for the hash of everything so far. */
export class Xxh64Stream {
  private readonly arena = new Arena();
  private readonly state: number;
  private readonly piece: number;

  constructor(seed = 0n) {
    const r = this.arena.place({ state: this.arena.k.XXH64_STATE_BYTES.value as number, piece: PIECE });
    this.state = r.state;
    this.piece = r.piece;
    this.reset(seed);
  }

  /** Starts over with `seed`, as a new stream. */
  reset(seed = 0n): void {
    this.arena.k.xxh64Reset(this.state, seed);
  }

  /** Adds `bytes` to the stream. */
  update(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; at += PIECE) {
      const part = bytes.subarray(at, Math.min(bytes.length, at + PIECE));
      this.arena.u8.set(part, this.piece);
      this.arena.k.xxh64Update(this.state, this.piece, part.length);
    }
  }

  /** XXH64 of every byte added so far, as an unsigned 64-bit bigint; the stream may go on. */
  digest(): bigint {
    return BigInt.asUintN(64, this.arena.k.xxh64Digest(this.state));
  }
}
