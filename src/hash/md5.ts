// MD5 (RFC 1321) through the WASM kernels: one-shot, batch and streaming. Results are copied out,
// so a caller never holds a view into WASM memory.
import { InvalidArgumentError } from "../errors.js";
import { forEachPiece, sharedEngine } from "../wasm/engine.js";
import { countOf, eachBatch, keyList, keySpans, type Keys } from "../wasm/batch.js";
import * as check from "../validate.js";

const PIECE = 1 << 20;
const STREAM_STRING_CHARS = 1 << 20;
const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The 16-byte MD5 digest of bytes, or of a string's UTF-8 encoding. */
export function md5(input: Uint8Array | string): Uint8Array {
  const data = check.key("input", input);
  if (typeof data === "string" && data.length > STREAM_STRING_CHARS) return new Md5().update(data).digest();
  if (data instanceof Uint8Array && data.length > PIECE) return new Md5().update(data).digest();
  const { arena, staging } = sharedEngine();
  const len = staging.encodeOne(data);
  arena.k.md5(staging.statePtr, staging.keysPtr, len, staging.outPtr);
  return arena.bytes(staging.outPtr, 16).slice();
}

/** The MD5 digest as 32 lowercase hex digits. */
export function md5Hex(input: Uint8Array | string): string {
  return toHex(md5(input));
}

/** MD5 of many keys in few boundary crossings: digest i is result[16 i .. 16 i + 16). */
export function md5Many(keys: readonly (string | Uint8Array)[]): Uint8Array {
  return digestBatches(keyList(keys));
}

/** MD5 of keys given as spans of one buffer (key i = data[spans[2i] .. spans[2i+1]), ascending). */
export function md5Spans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
  return digestBatches(keySpans(data, spans));
}

function digestBatches(keys: Keys): Uint8Array {
  const out = new Uint8Array(16 * countOf(keys));
  const { arena, staging } = sharedEngine();
  eachBatch(staging, keys, (n, at) => {
    staging.digestStaged(n, "md5");
    staging.hashes.copyOut(arena.u8, out, at, n);
  });
  return out;
}

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (let i = 0; i < bytes.length; i++) hex += HEX[bytes[i]];
  return hex;
}

/** Streaming MD5: update() any number of times, then digest() once. */
export class Md5 {
  // A copy of the kernel's state (MD5_STATE_BYTES, as the module says), so hashers interleave.
  private readonly state: Uint8Array;
  private done = false;

  constructor() {
    const { arena, staging } = sharedEngine();
    arena.k.md5Init(staging.statePtr);
    this.state = arena.bytes(staging.statePtr, arena.k.MD5_STATE_BYTES.value).slice();
  }

  /** Feeds bytes, or a string's UTF-8 encoding. */
  update(input: Uint8Array | string): this {
    const data = check.key("input", input);
    if (this.done) throw new InvalidArgumentError("md5", "finished", "a hasher that has not produced its digest yet");
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    const { arena, staging } = sharedEngine();
    arena.u8.set(this.state, staging.statePtr);
    forEachPiece(bytes, PIECE, (ptr, len) => arena.k.md5Update(staging.statePtr, ptr, len));
    this.state.set(arena.bytes(staging.statePtr, this.state.length));
    return this;
  }

  /** The 16-byte digest; the hasher cannot be updated afterwards. */
  digest(): Uint8Array {
    if (this.done) throw new InvalidArgumentError("md5", "finished", "a hasher that has not produced its digest yet");
    this.done = true;
    const { arena, staging } = sharedEngine();
    arena.u8.set(this.state, staging.statePtr);
    arena.k.md5Final(staging.statePtr, staging.outPtr);
    return arena.bytes(staging.outPtr, 16).slice();
  }

  /** The digest as hex. */
  digestHex(): string {
    return toHex(this.digest());
  }
}
