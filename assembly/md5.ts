// MD5 one-shot, streaming and batch entry points over md5Blocks.
// Streaming state at `st` (STATE_BYTES): a, b, c, d (u32 x 4) | total length in bytes (u64) |
// buffered byte count (u32) | 4 bytes pad | 64-byte block buffer.

import { md5Blocks } from "./md5-compress";
import { md5Lanes } from "./md5-lanes";

/** Bytes of the streaming state; the wrappers read this global (src/wasm/arena.ts), never a copy. */
export const MD5_STATE_BYTES: u32 = 96;

const TOTAL = 16;
const BUFFERED = 24;
const BUFFER = 32;

// @ts-ignore: decorator
@inline function resetState(st: usize): void {
  store<u32>(st, 0x67452301);
  store<u32>(st, 0xEFCDAB89, 4);
  store<u32>(st, 0x98BADCFE, 8);
  store<u32>(st, 0x10325476, 12);
  store<u64>(st, 0, TOTAL);
  store<u32>(st, 0, BUFFERED);
}

/** Initialises the streaming state at `st`. */
export function md5Init(st: usize): void {
  resetState(st);
}

/** Feeds `len` bytes at `p` into the streaming state at `st`. */
export function md5Update(st: usize, p: usize, len: usize): void {
  store<u64>(st, load<u64>(st, TOTAL) + <u64>len, TOTAL);
  let buffered = <usize>load<u32>(st, BUFFERED);
  const buf = st + BUFFER;
  if (buffered > 0) {
    const take = min<usize>(64 - buffered, len);
    memory.copy(buf + buffered, p, take);
    buffered += take;
    p += take;
    len -= take;
    if (buffered < 64) {
      store<u32>(st, <u32>buffered, BUFFERED);
      return;
    }
    md5Blocks(st, buf, 1);
    buffered = 0;
  }
  const whole = len >> 6;
  if (whole > 0) md5Blocks(st, p, whole);
  const rest = len & 63;
  memory.copy(buf, p + (whole << 6), rest);
  store<u32>(st, <u32>rest, BUFFERED);
}

/** Pads, finishes and writes the 16-byte digest of the streaming state at `st` to `out`. */
export function md5Final(st: usize, out: usize): void {
  const buffered = <usize>load<u32>(st, BUFFERED);
  const buf = st + BUFFER;
  const bitLength = load<u64>(st, TOTAL) << 3;
  store<u8>(buf + buffered, 0x80);
  if (buffered >= 56) {
    memory.fill(buf + buffered + 1, 0, 63 - buffered);
    md5Blocks(st, buf, 1);
    memory.fill(buf, 0, 56);
  } else {
    memory.fill(buf + buffered + 1, 0, 55 - buffered);
  }
  store<u64>(buf, bitLength, 56);
  md5Blocks(st, buf, 1);
  store<u32>(out, load<u32>(st));
  store<u32>(out, load<u32>(st, 4), 4);
  store<u32>(out, load<u32>(st, 8), 8);
  store<u32>(out, load<u32>(st, 12), 12);
}

/** One-shot MD5 of `len` bytes at `p` into 16 bytes at `out`, using `st` as scratch state. */
export function md5(st: usize, p: usize, len: usize, out: usize): void {
  resetState(st);
  const whole = len >> 6;
  if (whole > 0) md5Blocks(st, p, whole);
  const rest = len & 63;
  store<u64>(st, <u64>len, TOTAL);
  memory.copy(st + BUFFER, p + (whole << 6), rest);
  store<u32>(st, <u32>rest, BUFFERED);
  md5Final(st, out);
}

/**
 * MD5 of `count` keys, key i being the bytes at keys + [start_i, end_i) with (start_i, end_i) the
 * u32 pair at `spans + 8 * i`; digest i goes to `out + 16 * i`. `scratch` holds
 * MD5_LANES_SCRATCH_BYTES (four keys are hashed at once, see md5-lanes.ts).
 */
export function md5Batch(scratch: usize, keys: usize, spans: usize, count: u32, out: usize): void {
  md5Lanes(scratch, keys, spans, 8, count, out);
}
