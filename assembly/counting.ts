// Counting Bloom filter: m counters of b bits (b = 2, 4 or 8, packed LSB first: counter i is bits
// [i*b, i*b + b) of the array, so a counter never straddles a byte), positions as in bloom.ts.
// Counters saturate at 2^b - 1 and a saturated counter never moves again, up or down: its true
// value is unknown, and decrementing it could later produce a false negative.

import { mulhi64 } from "./reduce";
import { readCounter as read, writeCounter as write } from "./counters";

/** Writes the smallest of pair i's k counters to out[i] (0: absent; else an upper bound of its multiplicity). */
export function countingMin(counters: usize, mF: f64, k: u32, bits: u32, hashes: usize, count: u32, out: usize): void {
  const m = <u64>mF;
  const max: u32 = (1 << bits) - 1;
  for (let i: u32 = 0; i < count; i++) {
    const h = hashes + (<usize>i << 4);
    let h1 = load<u64>(h);
    const h2 = load<u64>(h, 8);
    let least = max;
    for (let j: u32 = 0; j < k; j++) {
      least = min<u32>(least, read(counters, mulhi64(h1, m), bits, max));
      h1 += h2;
    }
    store<u8>(out + i, <u8>least);
  }
}

/**
 * Increments pair i's k counters (saturating) for every pair whose skip[i] is 0; out[i] = 1 when
 * some counter was 0 before (the key was new). Returns the count new.
 */
export function countingAdd(counters: usize, mF: f64, k: u32, bits: u32, hashes: usize, count: u32, skip: usize, out: usize): u32 {
  const m = <u64>mF;
  const max: u32 = (1 << bits) - 1;
  let added: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    let isNew: u32 = 0;
    if (skip == 0 || load<u8>(skip + i) == 0) {
      const h = hashes + (<usize>i << 4);
      let h1 = load<u64>(h);
      const h2 = load<u64>(h, 8);
      for (let j: u32 = 0; j < k; j++) {
        const c = mulhi64(h1, m);
        const v = read(counters, c, bits, max);
        if (v == 0) isNew = 1;
        if (v < max) write(counters, c, bits, max, v + 1);
        h1 += h2;
      }
    }
    store<u8>(out + i, <u8>isNew);
    added += isNew;
  }
  return added;
}

/**
 * Removes pair i when all its counters are non-zero: decrements each that is neither 0 nor
 * saturated; out[i] = 1 then, else 0 and nothing changes. Returns the count removed.
 */
export function countingRemove(counters: usize, mF: f64, k: u32, bits: u32, hashes: usize, count: u32, out: usize): u32 {
  const m = <u64>mF;
  const max: u32 = (1 << bits) - 1;
  let removed: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    const h = hashes + (<usize>i << 4);
    const start = load<u64>(h);
    const h2 = load<u64>(h, 8);
    let h1 = start;
    let present: u32 = 1;
    for (let j: u32 = 0; j < k; j++) {
      if (read(counters, mulhi64(h1, m), bits, max) == 0) present = 0;
      h1 += h2;
    }
    if (present) {
      h1 = start;
      for (let j: u32 = 0; j < k; j++) {
        const c = mulhi64(h1, m);
        const v = read(counters, c, bits, max);
        if (v != 0 && v != max) write(counters, c, bits, max, v - 1);
        h1 += h2;
      }
    }
    store<u8>(out + i, <u8>present);
    removed += present;
  }
  return removed;
}

/** Counters that are not zero among the first m. */
export function countingNonzero(counters: usize, mF: f64, bits: u32): f64 {
  const m = <u64>mF;
  const max: u32 = (1 << bits) - 1;
  let n: u64 = 0;
  for (let i: u64 = 0; i < m; i++) if (read(counters, i, bits, max) != 0) n++;
  return <f64>n;
}
