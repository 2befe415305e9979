// Age-partitioned Bloom filter (Shtul, Baquero, Almeida 2020): a ring of k + l slices of m bits.
// A key is inserted into the k newest slices, one bit each; it is present when k consecutive
// slices (in age order) hold its bit. Every generation the oldest slice is cleared and becomes
// the newest, so a key fades out slice by slice instead of with the whole set.
// The bit of a key in physical slice p is mulhi64(h1 + p*h2, m): the hash follows the slice's
// storage, not its age, so shifting the ring never moves a key's bits.
// State (two u32 at `state`): the physical index of the newest slice, and inserts into the
// current generation; the kernel shifts by itself after `generation` inserts (0: never, the
// caller shifts by time). The record's offsets are exported so the wrapper reads them by name.

import { mulhi64 } from "./reduce";

/** State record: offset of the u32 physical index of the newest slice. */
export const AGED_FRONT: u32 = 0;
/** State record: offset of the u32 count of inserts into the current generation. */
export const AGED_FILL: u32 = 4;
/** Bytes of the state record. */
export const AGED_STATE_BYTES: u32 = 8;

// @ts-ignore: decorator
@inline function sliceHas(bits: usize, sliceBytes: usize, m: u64, p: u32, h1: u64, h2: u64): u32 {
  const a = mulhi64(h1 + <u64>p * h2, m);
  return (<u32>load<u8>(bits + <usize>p * sliceBytes + <usize>(a >> 3)) >> <u32>(a & 7)) & 1;
}

// @ts-ignore: decorator
@inline function query(bits: usize, sliceBytes: usize, m: u64, k: u32, total: u32, front: u32, h1: u64, h2: u64): u32 {
  // Windows of k consecutive ages are checked from their oldest end: a miss at age q rules out
  // every window that contains q, so the next candidate starts at q + 1.
  let start: u32 = 0;
  while (start + k <= total) {
    let q = start + k;
    while (q > start) {
      const p = (front + q - 1) % total;
      if (sliceHas(bits, sliceBytes, m, p, h1, h2) == 0) break;
      q--;
    }
    if (q == start) return 1;
    start = q;
  }
  return 0;
}

// @ts-ignore: decorator
@inline function insert(bits: usize, sliceBytes: usize, m: u64, k: u32, total: u32, front: u32, h1: u64, h2: u64): void {
  for (let j: u32 = 0; j < k; j++) {
    const p = (front + j) % total;
    const a = mulhi64(h1 + <u64>p * h2, m);
    const at = bits + <usize>p * sliceBytes + <usize>(a >> 3);
    store<u8>(at, load<u8>(at) | <u8>(<u32>1 << <u32>(a & 7)));
  }
}

/** Makes the oldest slice the newest (cleared) and starts a new generation. */
export function agedShift(bits: usize, sliceBytes: usize, total: u32, state: usize): void {
  const front = (load<u32>(state, AGED_FRONT) + total - 1) % total;
  memory.fill(bits + <usize>front * sliceBytes, 0, sliceBytes);
  store<u32>(state, front, AGED_FRONT);
  store<u32>(state, 0, AGED_FILL);
}

/**
 * Runs `count` staged hash pairs through the filter. mode 0: test only; 1: insert the keys that
 * are absent (dedup); 2: insert every key (refreshing its age). out[i] = 1 when key i was
 * present before its own insert. Returns how many keys were inserted.
 */
export function agedBatch(bits: usize, sliceBytes: usize, mF: f64, k: u32, total: u32, generation: u32, state: usize, hashes: usize, count: u32, mode: u32, out: usize): u32 {
  const m = <u64>mF;
  let inserted: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    const h = hashes + (<usize>i << 4);
    const h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    const front = load<u32>(state, AGED_FRONT);
    const present = query(bits, sliceBytes, m, k, total, front, h1, h2);
    store<u8>(out + i, <u8>present);
    if (mode == 0 || (mode == 1 && present == 1)) continue;
    insert(bits, sliceBytes, m, k, total, front, h1, h2);
    inserted++;
    const fill = load<u32>(state, AGED_FILL) + 1;
    store<u32>(state, fill, AGED_FILL);
    if (generation != 0 && fill >= generation) agedShift(bits, sliceBytes, total, state);
  }
  return inserted;
}
