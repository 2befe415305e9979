// SHA-1 (FIPS 180-4), one-shot over linear memory: only for Scrapy-compatible request
// fingerprints, which are SHA-1 by definition. Words are big-endian, so they are byte-swapped
// on load. Scratch layout at `scratch`: state (5 x u32) | pad | W (80 x u32) at 32 | tail at 352.

const W = 32;
const TAIL = 352;

// Scratch bytes sha1() needs: 480 (mirrored in src/hash/sha1.ts).

function blocks(scratch: usize, p: usize, count: usize): void {
  let h0 = load<u32>(scratch);
  let h1 = load<u32>(scratch, 4);
  let h2 = load<u32>(scratch, 8);
  let h3 = load<u32>(scratch, 12);
  let h4 = load<u32>(scratch, 16);
  const w = scratch + W;
  for (let n: usize = 0; n < count; n++) {
    for (let i: usize = 0; i < 16; i++) store<u32>(w + (i << 2), bswap<u32>(load<u32>(p + (i << 2))));
    for (let i: usize = 16; i < 80; i++) {
      const x = load<u32>(w + ((i - 3) << 2)) ^ load<u32>(w + ((i - 8) << 2)) ^ load<u32>(w + ((i - 14) << 2)) ^ load<u32>(w + ((i - 16) << 2));
      store<u32>(w + (i << 2), rotl<u32>(x, 1));
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4;
    for (let i: usize = 0; i < 80; i++) {
      let f: u32, k: u32;
      if (i < 20) {
        f = d ^ (b & (c ^ d));
        k = 0x5A827999;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ED9EBA1;
      } else if (i < 60) {
        f = (b & c) | (d & (b | c));
        k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d;
        k = 0xCA62C1D6;
      }
      const t = rotl<u32>(a, 5) + f + e + k + load<u32>(w + (i << 2));
      e = d;
      d = c;
      c = rotl<u32>(b, 30);
      b = a;
      a = t;
    }
    h0 += a; h1 += b; h2 += c; h3 += d; h4 += e;
    p += 64;
  }
  store<u32>(scratch, h0);
  store<u32>(scratch, h1, 4);
  store<u32>(scratch, h2, 8);
  store<u32>(scratch, h3, 12);
  store<u32>(scratch, h4, 16);
}

/** SHA-1 of `len` bytes at `p` into 20 bytes at `out`, using 480 bytes of scratch at `scratch`. */
export function sha1(scratch: usize, p: usize, len: usize, out: usize): void {
  store<u32>(scratch, 0x67452301);
  store<u32>(scratch, 0xEFCDAB89, 4);
  store<u32>(scratch, 0x98BADCFE, 8);
  store<u32>(scratch, 0x10325476, 12);
  store<u32>(scratch, 0xC3D2E1F0, 16);
  const whole = len >> 6;
  blocks(scratch, p, whole);
  const rest = len & 63;
  const tail = scratch + TAIL;
  memory.copy(tail, p + (whole << 6), rest);
  store<u8>(tail + rest, 0x80);
  const tailBlocks: usize = rest >= 56 ? 2 : 1;
  const end = tailBlocks << 6;
  memory.fill(tail + rest + 1, 0, end - rest - 1 - 8);
  store<u64>(tail + end - 8, bswap<u64>(<u64>len << 3));
  blocks(scratch, tail, tailBlocks);
  for (let i: usize = 0; i < 5; i++) store<u32>(out + (i << 2), bswap<u32>(load<u32>(scratch + (i << 2))));
}
