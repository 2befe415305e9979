// XXH3-128 (seed 0), the exact table's default fingerprint, exposed for checking against other
// implementations and for callers who want the same fingerprint.
import { sharedEngine } from "../wasm/engine.js";
import * as check from "../validate.js";

/** XXH3-128 of bytes, or of a string's UTF-8 encoding, as 32 hex digits (xxHash's canonical, big-endian form). */
export function xxh128(input: Uint8Array | string): string {
  const data = check.key("input", input);
  const { arena, staging } = sharedEngine();
  const len = staging.encodeOne(data);
  arena.k.xxh128(staging.keysPtr, len, staging.hashesPtr);
  const [lo, hi] = staging.hashes.view(arena.u8, BigUint64Array, 0, 1);
  return hi.toString(16).padStart(16, "0") + lo.toString(16).padStart(16, "0");
}
