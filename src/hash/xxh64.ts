// XXH64, the filters' key hash, exposed for checking and for callers who want the same hash.
import { InvalidArgumentError } from "../errors.js";
import { sharedEngine } from "../wasm/engine.js";
import * as check from "../validate.js";

/** XXH64 of bytes, or of a string's UTF-8 encoding, as an unsigned 64-bit bigint. */
export function xxh64(input: Uint8Array | string, seed: bigint = 0n): bigint {
  const data = check.key("input", input);
  if (typeof seed !== "bigint" || seed < 0n || seed >= 1n << 64n) {
    throw new InvalidArgumentError("seed", seed, "a bigint from 0 to 2^64 - 1");
  }
  const { arena, staging } = sharedEngine();
  const len = staging.encodeOne(data);
  return BigInt.asUintN(64, arena.k.xxh64(staging.keysPtr, len, seed));
}
