// XXH64 (Yann Collet, xxHash spec v0.1.2). Chosen as the filters' key hash because it is
// published with test vectors, fast on short keys in wasm, and byte-exact across platforms.

const P1: u64 = 0x9E3779B185EBCA87;
const P2: u64 = 0xC2B2AE3D27D4EB4F;
const P3: u64 = 0x165667B19E3779F9;
const P4: u64 = 0x85EBCA77C2B2AE63;
const P5: u64 = 0x27D4EB2F165667C5;

// @ts-ignore: decorator
@inline function round(acc: u64, lane: u64): u64 {
  return rotl<u64>(acc + lane * P2, 31) * P1;
}

// @ts-ignore: decorator
@inline function mergeRound(acc: u64, val: u64): u64 {
  return (acc ^ round(0, val)) * P1 + P4;
}

/** XXH64 of `len` bytes at `ptr` with `seed`. */
export function xxh64(ptr: usize, len: usize, seed: u64): u64 {
  const end = ptr + len;
  let h: u64;
  if (len >= 32) {
    const limit = end - 32;
    let v1 = seed + P1 + P2;
    let v2 = seed + P2;
    let v3 = seed;
    let v4 = seed - P1;
    do {
      v1 = round(v1, load<u64>(ptr));
      v2 = round(v2, load<u64>(ptr, 8));
      v3 = round(v3, load<u64>(ptr, 16));
      v4 = round(v4, load<u64>(ptr, 24));
      ptr += 32;
    } while (ptr <= limit);
    h = merged(v1, v2, v3, v4);
  } else {
    h = seed + P5;
  }
  return finish(h + <u64>len, ptr, end);
}

/** The end of XXH64: folds the last bytes [ptr, end) (fewer than 32) into h, then avalanches. */
// @ts-ignore: decorator
@inline function finish(h: u64, ptr: usize, end: usize): u64 {
  while (ptr + 8 <= end) {
    h ^= round(0, load<u64>(ptr));
    h = rotl<u64>(h, 27) * P1 + P4;
    ptr += 8;
  }
  if (ptr + 4 <= end) {
    h ^= <u64>load<u32>(ptr) * P1;
    h = rotl<u64>(h, 23) * P2 + P3;
    ptr += 4;
  }
  while (ptr < end) {
    h ^= <u64>load<u8>(ptr) * P5;
    h = rotl<u64>(h, 11) * P1;
    ptr++;
  }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

/** The four lanes' merge of a stream of at least 32 bytes (xxh64 above; XXH64_digest in the spec). */
// @ts-ignore: decorator
@inline function merged(v1: u64, v2: u64, v3: u64, v4: u64): u64 {
  let h = rotl<u64>(v1, 1) + rotl<u64>(v2, 7) + rotl<u64>(v3, 12) + rotl<u64>(v4, 18);
  h = mergeRound(h, v1);
  h = mergeRound(h, v2);
  h = mergeRound(h, v3);
  return mergeRound(h, v4);
}

// XXH64 over a stream of pieces (a Zstandard frame's content checksum is its low 32 bits): the
// state is XXH64_state_t's fields at a caller's address: the four lanes (u64 at 0, 8, 16, 24), the
// bytes so far (u64 at 32), the seed (u64 at 40), up to 31 bytes not yet a stripe (at 48) and
// their count (u32 at 80).
/** Bytes of a streaming XXH64 state. */
export const XXH64_STATE_BYTES: u32 = 88;

/** Starts a stream with `seed` in the state at `state`. */
export function xxh64Reset(state: usize, seed: u64): void {
  store<u64>(state, seed + P1 + P2);
  store<u64>(state, seed + P2, 8);
  store<u64>(state, seed, 16);
  store<u64>(state, seed - P1, 24);
  store<u64>(state, 0, 32);
  store<u64>(state, seed, 40);
  store<u32>(state, 0, 80);
}

/** Adds `len` bytes at `ptr` to the stream at `state`. */
export function xxh64Update(state: usize, ptr: usize, len: usize): void {
  store<u64>(state, load<u64>(state, 32) + <u64>len, 32);
  const pending = <usize>load<u32>(state, 80);
  if (pending + len < 32) {
    memory.copy(state + 48 + pending, ptr, len);
    store<u32>(state, <u32>(pending + len), 80);
    return;
  }
  let v1 = load<u64>(state);
  let v2 = load<u64>(state, 8);
  let v3 = load<u64>(state, 16);
  let v4 = load<u64>(state, 24);
  if (pending > 0) {
    const fill = 32 - pending;
    memory.copy(state + 48 + pending, ptr, fill);
    v1 = round(v1, load<u64>(state, 48));
    v2 = round(v2, load<u64>(state, 56));
    v3 = round(v3, load<u64>(state, 64));
    v4 = round(v4, load<u64>(state, 72));
    ptr += fill;
    len -= fill;
  }
  while (len >= 32) {
    v1 = round(v1, load<u64>(ptr));
    v2 = round(v2, load<u64>(ptr, 8));
    v3 = round(v3, load<u64>(ptr, 16));
    v4 = round(v4, load<u64>(ptr, 24));
    ptr += 32;
    len -= 32;
  }
  memory.copy(state + 48, ptr, len);
  store<u32>(state, <u32>len, 80);
  store<u64>(state, v1);
  store<u64>(state, v2, 8);
  store<u64>(state, v3, 16);
  store<u64>(state, v4, 24);
}

/** XXH64 of every byte added to the stream at `state` so far (the stream may go on). */
export function xxh64Digest(state: usize): u64 {
  const total = load<u64>(state, 32);
  const h =
    total >= 32
      ? merged(load<u64>(state), load<u64>(state, 8), load<u64>(state, 16), load<u64>(state, 24))
      : load<u64>(state, 40) + P5;
  return finish(h + total, state + 48, state + 48 + <usize>load<u32>(state, 80));
}

/** splitmix64's step: a bijective 64-bit mix of x + the golden-ratio increment. */
// @ts-ignore: decorator
@inline export function mix64(x: u64): u64 {
  let z = x + 0x9E3779B97F4A7C15;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
  return z ^ (z >> 31);
}

/** Second hash for double hashing: mix64(h1) forced odd, so the 64-bit steps never repeat. */
// @ts-ignore: decorator
@inline export function secondHash(h1: u64): u64 {
  return mix64(h1) | 1;
}

/** Bytes of one hash pair as hashPairs writes it: h1 (u64) first, then h2 (u64). */
const HASH_PAIR_BYTES: usize = 16;
/** Hash pair: offset of the u64 h2 (h1 is at 0). */
export const HASH_H2: u32 = 8;

/**
 * Hashes `count` keys, key i being the bytes at keys + [start_i, end_i) with (start_i, end_i) the
 * u32 pair at `spans + 8 * i`, writing its hash pair (h1, h2) as two u64 at `out + 16 * i`.
 */
export function hashPairs(keys: usize, spans: usize, count: u32, out: usize): void {
  for (let i: u32 = 0; i < count; i++) {
    const start = load<u32>(spans);
    const h1 = xxh64(keys + start, load<u32>(spans, 4) - start, 0);
    store<u64>(out, h1);
    store<u64>(out, secondHash(h1), HASH_H2);
    spans += 8;
    out += HASH_PAIR_BYTES;
  }
}

/**
 * Folds XXH64 over `len` bytes at `ptr` in pieces of `piece` bytes, each piece's hash the seed of
 * the next (one piece for len 0): the checksum of serialized segments, computable piecewise.
 */
export function xxh64Pieces(ptr: usize, len: usize, seed: u64, piece: usize): u64 {
  let done: usize = 0;
  do {
    const n = min<usize>(piece, len - done);
    seed = xxh64(ptr + done, n, seed);
    done += n;
  } while (done < len);
  return seed;
}

/**
 * 128-bit fingerprints without MD5: XXH64 of each key with seed 0 and with seed 2^64 / phi,
 * written as 16 bytes at `out + 16 * i` (spans as in hashPairs). Two independent 64-bit hashes:
 * for users who need speed and no MD5 compatibility.
 */
export function fingerprintsXxh(keys: usize, spans: usize, count: u32, out: usize): void {
  for (let i: u32 = 0; i < count; i++) {
    const start = load<u32>(spans);
    const len = load<u32>(spans, 4) - start;
    store<u64>(out, xxh64(keys + start, len, 0));
    store<u64>(out, xxh64(keys + start, len, 0x9E3779B97F4A7C15), 8);
    spans += 8;
    out += 16;
  }
}
