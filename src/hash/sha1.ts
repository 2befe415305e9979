// SHA-1 through the WASM kernel, synchronous in every runtime (WebCrypto's digest is async):
// used for Scrapy-compatible request fingerprints, which are SHA-1 by definition.
import { sharedEngine } from "../wasm/engine.js";
import { toHex } from "./md5.js";
import * as check from "../validate.js";

/** The 20-byte SHA-1 digest of bytes, or of a string's UTF-8 encoding. */
export function sha1(input: Uint8Array | string): Uint8Array {
  const data = check.key("input", input);
  const { arena, staging } = sharedEngine();
  const len = staging.encodeOne(data);
  // The hash-pair region is free outside batch calls and holds the 480 bytes of scratch.
  arena.k.sha1(staging.hashesPtr, staging.keysPtr, len, staging.outPtr);
  return arena.bytes(staging.outPtr, 20).slice();
}

/** The SHA-1 digest as 40 lowercase hex digits. */
export function sha1Hex(input: Uint8Array | string): string {
  return toHex(sha1(input));
}
