// Multi-dimensional Bloom filter: S groups, each a pair of bit vectors V1 (n1 bits, k1 positions)
// and V2 (n2 bits, k2 positions), laid out group after group in one bit array. A key is set in
// every vector of every group. A group holds a key when all its k1 + k2 bits are set; the filter
// answers "present" when every group holds it (rule 0) or when any group does (rule 1) -- the two
// readings of the source's membership rule.
// Position i of a key is mulhi(mix64(h1 + i*h2), n): the mix breaks the linear structure of
// double hashing. Without it, the source's vectors of 150 bits would share one (h1, h2) over
// S (k1 + k2) positions, and a key whose pair lies close to an inserted key's would hit all of
// them together: a measured floor near n / N^2 that swamps the products the formula predicts.
// secondHashes = 0 leaves V2 out, which makes a one-group filter a standard Bloom filter with
// independent positions (the benchmark's baseline).

import { mulhi64 } from "./reduce";
import { mix64 } from "./xxh64";

// @ts-ignore: decorator
@inline function vectorHas(bits: usize, offset: u64, n: u64, k: u32, h: u64, h2: u64): u32 {
  let all: u32 = 1;
  for (let j: u32 = 0; j < k; j++) {
    const a = offset + mulhi64(mix64(h), n);
    all &= (<u32>load<u8>(bits + <usize>(a >> 3)) >> <u32>(a & 7)) & 1;
    h += h2;
  }
  return all;
}

// @ts-ignore: decorator
@inline function vectorSet(bits: usize, offset: u64, n: u64, k: u32, h: u64, h2: u64): void {
  for (let j: u32 = 0; j < k; j++) {
    const a = offset + mulhi64(mix64(h), n);
    const at = bits + <usize>(a >> 3);
    store<u8>(at, load<u8>(at) | <u8>(<u32>1 << <u32>(a & 7)));
    h += h2;
  }
}

// @ts-ignore: decorator
@inline function present(bits: usize, groups: u32, n1: u64, k1: u32, n2: u64, k2: u32, rule: u32, h1: u64, h2: u64): u32 {
  const width = n1 + n2;
  const step = <u64>(k1 + k2);
  for (let g: u32 = 0; g < groups; g++) {
    const h = h1 + <u64>g * step * h2;
    const held = vectorHas(bits, <u64>g * width, n1, k1, h, h2) & vectorHas(bits, <u64>g * width + n1, n2, k2, h + <u64>k1 * h2, h2);
    if (rule == 0 && held == 0) return 0;
    if (rule == 1 && held == 1) return 1;
  }
  return rule == 0 ? 1 : 0;
}

/** out[i] = 1 when staged pair i is present under `rule`; with `add`, then sets it in every group. Returns how many were new. */
export function multiDimBatch(bits: usize, groups: u32, n1F: f64, k1: u32, n2F: f64, k2: u32, rule: u32, hashes: usize, count: u32, add: u32, out: usize): u32 {
  const n1 = <u64>n1F;
  const n2 = <u64>n2F;
  const step = <u64>(k1 + k2);
  let fresh: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    const p = hashes + (<usize>i << 4);
    const h1 = load<u64>(p);
    const h2 = load<u64>(p, 8);
    const was = present(bits, groups, n1, k1, n2, k2, rule, h1, h2);
    store<u8>(out + i, <u8>was);
    if (add == 0) continue;
    fresh += was ^ 1;
    for (let g: u32 = 0; g < groups; g++) {
      const h = h1 + <u64>g * step * h2;
      vectorSet(bits, <u64>g * (n1 + n2), n1, k1, h, h2);
      vectorSet(bits, <u64>g * (n1 + n2) + n1, n2, k2, h + <u64>k1 * h2, h2);
    }
  }
  return fresh;
}
