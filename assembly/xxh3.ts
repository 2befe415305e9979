// XXH3-128 (xxHash 0.8, seed 0, default secret), written from the published algorithm. The exact
// table's fast fingerprint: a line of ~100 bytes costs a few 64x64->128 multiplies instead of
// MD5's two 64-byte blocks. wasm has no 128-bit multiply, so mul128 is built from 32-bit halves.
// Output: the low 64 bits at out, the high 64 bits at out + 8 (little-endian), i.e. the 128-bit
// value little-endian; the canonical hex form of xxHash is its big-endian reverse.

const P32_1: u64 = 0x9E3779B1;
const P32_2: u64 = 0x85EBCA77;
const P32_3: u64 = 0xC2B2AE3D;
const P64_1: u64 = 0x9E3779B185EBCA87;
const P64_2: u64 = 0xC2B2AE3D27D4EB4F;
const P64_3: u64 = 0x165667B19E3779F9;
const P64_4: u64 = 0x85EBCA77C2B2AE63;
const P64_5: u64 = 0x27D4EB2F165667C5;
const MX1: u64 = 0x165667919E3779F9;
const MX2: u64 = 0x9FB21C651E98DF25;

const SECRET_SIZE: usize = 192;
const SECRET: usize = memory.data<u8>([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
  0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
  0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
  0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
  0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
  0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
  0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
  0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
  0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
  0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
  0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
  0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
]);
// The eight accumulators of the long-input loop.
const ACC: usize = memory.data(64, 16);

// @ts-ignore: decorator
@inline function s64(offset: usize): u64 {
  return load<u64>(SECRET + offset);
}

/** High 64 bits of the 128-bit product a * b (the low half is a * b wrapping). */
// @ts-ignore: decorator
@inline function mulHigh(a: u64, b: u64): u64 {
  const al = a & 0xFFFFFFFF;
  const ah = a >> 32;
  const bl = b & 0xFFFFFFFF;
  const bh = b >> 32;
  const ll = al * bl;
  const lh = al * bh;
  const cross = (ll >> 32) + (lh & 0xFFFFFFFF) + ah * bl;
  return ah * bh + (lh >> 32) + (cross >> 32);
}

// @ts-ignore: decorator
@inline function fold(a: u64, b: u64): u64 {
  return (a * b) ^ mulHigh(a, b);
}

// @ts-ignore: decorator
@inline function avalanche64(h: u64): u64 {
  h ^= h >> 33;
  h *= P64_2;
  h ^= h >> 29;
  h *= P64_3;
  return h ^ (h >> 32);
}

// @ts-ignore: decorator
@inline function avalanche3(h: u64): u64 {
  h ^= h >> 37;
  h *= MX1;
  return h ^ (h >> 32);
}

// @ts-ignore: decorator
@inline function mix16(p: usize, s: usize): u64 {
  return fold(load<u64>(p) ^ s64(s), load<u64>(p, 8) ^ s64(s + 8));
}

// The 128-bit accumulator of the 17..240-byte paths lives in two globals (no allocation).
let accLo: u64 = 0;
let accHi: u64 = 0;

// @ts-ignore: decorator
@inline function mix32(a: usize, b: usize, s: usize): void {
  accLo += mix16(a, s);
  accLo ^= load<u64>(b) + load<u64>(b, 8);
  accHi += mix16(b, s + 16);
  accHi ^= load<u64>(a) + load<u64>(a, 8);
}

function finishMid(len: u64, out: usize): void {
  const lo = accLo + accHi;
  const hi = accLo * P64_1 + accHi * P64_4 + len * P64_2;
  store<u64>(out, avalanche3(lo));
  store<u64>(out, 0 - avalanche3(hi), 8);
}

function short(p: usize, len: usize, out: usize): void {
  if (len > 8) {
    const bitflipl = s64(32) ^ s64(40);
    const bitfliph = s64(48) ^ s64(56);
    const inLo = load<u64>(p);
    let inHi = load<u64>(p + len - 8);
    const a = inLo ^ inHi ^ bitflipl;
    let mLo = a * P64_1;
    let mHi = mulHigh(a, P64_1);
    mLo += <u64>(len - 1) << 54;
    inHi ^= bitfliph;
    mHi += inHi + (inHi & 0xFFFFFFFF) * (P32_2 - 1);
    mLo ^= bswap<u64>(mHi);
    const hLo = mLo * P64_2;
    const hHi = mulHigh(mLo, P64_2) + mHi * P64_2;
    store<u64>(out, avalanche3(hLo));
    store<u64>(out, avalanche3(hHi), 8);
  } else if (len >= 4) {
    const input64 = <u64>load<u32>(p) + (<u64>load<u32>(p + len - 4) << 32);
    const keyed = input64 ^ (s64(16) ^ s64(24));
    const m = P64_1 + (<u64>len << 2);
    let mLo = keyed * m;
    let mHi = mulHigh(keyed, m);
    mHi += mLo << 1;
    mLo ^= mHi >> 3;
    mLo ^= mLo >> 35;
    mLo *= MX2;
    mLo ^= mLo >> 28;
    store<u64>(out, mLo);
    store<u64>(out, avalanche3(mHi), 8);
  } else if (len > 0) {
    const c1 = <u32>load<u8>(p);
    const c2 = <u32>load<u8>(p + (len >> 1));
    const c3 = <u32>load<u8>(p + len - 1);
    const combinedl = (c1 << 16) | (c2 << 24) | c3 | (<u32>len << 8);
    const combinedh = rotl<u32>(bswap<u32>(combinedl), 13);
    const bitflipl = <u64>(load<u32>(SECRET) ^ load<u32>(SECRET + 4));
    const bitfliph = <u64>(load<u32>(SECRET + 8) ^ load<u32>(SECRET + 12));
    store<u64>(out, avalanche64(<u64>combinedl ^ bitflipl));
    store<u64>(out, avalanche64(<u64>combinedh ^ bitfliph), 8);
  } else {
    store<u64>(out, avalanche64(s64(64) ^ s64(72)));
    store<u64>(out, avalanche64(s64(80) ^ s64(88)), 8);
  }
}

// @ts-ignore: decorator
@inline function accumulate512(p: usize, s: usize): void {
  for (let lane: usize = 0; lane < 8; lane++) {
    const value = load<u64>(p + lane * 8);
    const key = value ^ s64(s + lane * 8);
    const swapped = ACC + ((lane ^ 1) << 3);
    store<u64>(swapped, load<u64>(swapped) + value);
    const own = ACC + (lane << 3);
    store<u64>(own, load<u64>(own) + (key & 0xFFFFFFFF) * (key >> 32));
  }
}

function scramble(s: usize): void {
  for (let lane: usize = 0; lane < 8; lane++) {
    const own = ACC + (lane << 3);
    let a = load<u64>(own);
    a ^= a >> 47;
    a ^= s64(s + lane * 8);
    store<u64>(own, a * P32_1);
  }
}

function mergeAccs(s: usize, start: u64): u64 {
  let result = start;
  for (let i: usize = 0; i < 4; i++) {
    result += fold(load<u64>(ACC + 16 * i) ^ s64(s + 16 * i), load<u64>(ACC + 16 * i + 8) ^ s64(s + 16 * i + 8));
  }
  return avalanche3(result);
}

const STRIPES_PER_BLOCK: usize = (SECRET_SIZE - 64) / 8;
/** Bytes of one block of the long-input loop: STRIPES_PER_BLOCK (16) stripes of 64 bytes, then a scramble. */
export const XXH128_BLOCK_BYTES: u32 = 1024;

function accInit(): void {
  store<u64>(ACC, P32_3);
  store<u64>(ACC, P64_1, 8);
  store<u64>(ACC, P64_2, 16);
  store<u64>(ACC, P64_3, 24);
  store<u64>(ACC, P64_4, 32);
  store<u64>(ACC, P32_2, 40);
  store<u64>(ACC, P64_5, 48);
  store<u64>(ACC, P32_1, 56);
}

function accBlocks(p: usize, blocks: usize): void {
  for (let n: usize = 0; n < blocks; n++) {
    const block = p + n * <usize>XXH128_BLOCK_BYTES;
    for (let s: usize = 0; s < STRIPES_PER_BLOCK; s++) accumulate512(block + s * 64, s * 8);
    scramble(SECRET_SIZE - 64);
  }
}

// The input's last bytes: `tailLen` (1 to a block) at `tail`, after every whole block but the
// last; the last stripe is the input's final 64 bytes, which may begin before `tail`.
function accFinal(tail: usize, tailLen: usize, total: u64, out: usize): void {
  const stripes = (tailLen - 1) / 64;
  for (let s: usize = 0; s < stripes; s++) accumulate512(tail + s * 64, s * 8);
  accumulate512(tail + tailLen - 64, SECRET_SIZE - 64 - 7);
  store<u64>(out, mergeAccs(11, total * P64_1));
  store<u64>(out, mergeAccs(SECRET_SIZE - 64 - 11, ~(total * P64_2)), 8);
}

function long(p: usize, len: usize, out: usize): void {
  accInit();
  const blocks = (len - 1) / <usize>XXH128_BLOCK_BYTES;
  accBlocks(p, blocks);
  accFinal(p + blocks * <usize>XXH128_BLOCK_BYTES, len - blocks * <usize>XXH128_BLOCK_BYTES, <u64>len, out);
}

// Streaming XXH3-128 of an input longer than 240 bytes (a line too long for one memory): the
// eight accumulators live at `st` (64 bytes) between calls, so no call keeps state of its own.

/** Starts a streaming XXH3-128 with state at `st` (64 bytes). */
export function xxh128StreamInit(st: usize): void {
  accInit();
  memory.copy(st, ACC, 64);
}

/** Feeds `blocks` whole blocks (XXH128_BLOCK_BYTES each) at `p`; more input must follow them. */
export function xxh128StreamBlocks(st: usize, p: usize, blocks: usize): void {
  memory.copy(ACC, st, 64);
  accBlocks(p, blocks);
  memory.copy(st, ACC, 64);
}

/**
 * Feeds the last `tailLen` bytes (at least 1) at `tail` and writes the digest of the `total`
 * bytes fed in all (more than 240) to `out`. The 64 bytes before `tail` must be the input's own
 * (the final stripe reaches back into them when tailLen < 64).
 */
export function xxh128StreamFinal(st: usize, tail: usize, tailLen: usize, total: u64, out: usize): void {
  memory.copy(ACC, st, 64);
  const blocks = (tailLen - 1) / <usize>XXH128_BLOCK_BYTES;
  accBlocks(tail, blocks);
  accFinal(tail + blocks * <usize>XXH128_BLOCK_BYTES, tailLen - blocks * <usize>XXH128_BLOCK_BYTES, total, out);
}

/** XXH3-128 of `len` bytes at `p` (seed 0) into 16 bytes at `out` (low 64 bits first). */
export function xxh128(p: usize, len: usize, out: usize): void {
  if (len <= 16) {
    short(p, len, out);
  } else if (len <= 128) {
    accLo = <u64>len * P64_1;
    accHi = 0;
    if (len > 32) {
      if (len > 64) {
        if (len > 96) mix32(p + 48, p + len - 64, 96);
        mix32(p + 32, p + len - 48, 64);
      }
      mix32(p + 16, p + len - 32, 32);
    }
    mix32(p, p + len - 16, 0);
    finishMid(<u64>len, out);
  } else if (len <= 240) {
    const rounds = len / 32;
    accLo = <u64>len * P64_1;
    accHi = 0;
    for (let i: usize = 0; i < 4; i++) mix32(p + 32 * i, p + 32 * i + 16, 32 * i);
    accLo = avalanche3(accLo);
    accHi = avalanche3(accHi);
    for (let i: usize = 4; i < rounds; i++) mix32(p + 32 * i, p + 32 * i + 16, 3 + 32 * (i - 4));
    mix32(p + len - 16, p + len - 32, 136 - 17 - 16);
    finishMid(<u64>len, out);
  } else {
    long(p, len, out);
  }
}

/** XXH3-128 of `count` keys given as u32 (start, end) pairs at `spans` over `keys`; digest i at out + 16 i. */
export function xxh128Batch(keys: usize, spans: usize, count: u32, out: usize): void {
  for (let i: u32 = 0; i < count; i++) {
    const start = load<u32>(spans);
    xxh128(keys + start, load<u32>(spans, 4) - start, out + (<usize>i << 4));
    spans += 8;
  }
}
