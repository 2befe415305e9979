// The serialized checksum: XXH64 folded over the segments of a file (header first, then each
// payload segment) in 1 MiB pieces, every piece's hash the seed of the next, starting at 0.
// Pieces let a segment be hashed where it lives (in a structure's WASM memory) or streamed
// through the shared engine from caller bytes, with the same result.
import type { Arena } from "../wasm/arena.js";
import { forEachPiece, sharedEngine } from "../wasm/engine.js";

/** Bytes per checksum piece. */
export const CHECKSUM_PIECE = 1 << 20;

/** Folds the checksum over caller bytes. */
export function checksumBytes(seed: bigint, bytes: Uint8Array): bigint {
  const { arena } = sharedEngine();
  let h = seed;
  forEachPiece(bytes, CHECKSUM_PIECE, (ptr, len) => {
    h = BigInt.asUintN(64, arena.k.xxh64(ptr, len, h));
  });
  return h;
}

/** Folds the checksum over a region of an arena's memory, in place. */
export function checksumRegion(seed: bigint, arena: Arena, ptr: number, len: number): bigint {
  return BigInt.asUintN(64, arena.k.xxh64Pieces(ptr, len, seed, CHECKSUM_PIECE));
}
