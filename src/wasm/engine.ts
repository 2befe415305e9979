// The process-wide instance for work that belongs to no structure: MD5 of caller bytes and
// checksums of serialized bytes. Created on first use, after init().
import { Arena } from "./arena.js";
import { Staging } from "./staging.js";

/** An arena with a scratch region and a staging region. */
export interface Engine {
  readonly arena: Arena;
  readonly staging: Staging;
  /** Scratch for kernels that keep state within one call (SimHash votes, the token ring): TOKEN_STATE_BYTES, as the module says. */
  readonly scratchPtr: number;
}

let engine: Engine | undefined;

/** The shared engine instance. */
export function sharedEngine(): Engine {
  if (engine === undefined) {
    const arena = new Arena();
    const { scratch, end } = arena.place({ scratch: arena.k.TOKEN_STATE_BYTES.value });
    engine = { arena, staging: new Staging(arena, end), scratchPtr: scratch };
  }
  return engine;
}

/** Streams `bytes` through the engine's key region in pieces of at most `piece` bytes. */
export function forEachPiece(bytes: Uint8Array, piece: number, visit: (ptr: number, len: number) => void): void {
  const { arena, staging } = sharedEngine();
  staging.ensureKeyBytes(Math.min(piece, Math.max(bytes.length, 1)));
  let at = 0;
  do {
    const n = Math.min(piece, bytes.length - at);
    arena.u8.set(bytes.subarray(at, at + n), staging.keysPtr);
    visit(staging.keysPtr, n);
    at += n;
  } while (at < bytes.length);
}
