// An independent model of the documented hash scheme 1, written from the format description with
// xxhash-wasm for XXH64: the filters' bit positions must equal it, so the format cannot drift.
const MASK = (1n << 64n) - 1n;

/** splitmix64's step. */
export function mix64(x: bigint): bigint {
  let z = (x + 0x9e3779b97f4a7c15n) & MASK;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
  return z ^ (z >> 31n);
}

/** The second hash: mix64(h1) forced odd. */
export function secondHash(h1: bigint): bigint {
  return mix64(h1) | 1n;
}

/** Bit positions of a key in a one-partition standard filter of m bits with k hashes. */
export function standardPositions(h1: bigint, m: number, k: number): number[] {
  const h2 = secondHash(h1);
  const out: number[] = [];
  for (let i = 0n; i < BigInt(k); i++) out.push(Number((((h1 + i * h2) & MASK) * BigInt(m)) >> 64n));
  return out;
}

/**
 * The partition a key goes to in a filter of `partitions` partitions (BloomFilter over several
 * memories, a Redis filter over several shards): the low 32 bits of h1 xor the high 32 bits of
 * h2, scaled to [0, partitions) by a 32-bit multiply-high.
 */
export function partitionOf(h1: bigint, partitions: number): number {
  const mixed = (h1 & 0xffffffffn) ^ (secondHash(h1) >> 32n);
  return Number((mixed * BigInt(partitions)) >> 32n);
}

/** Bit positions of a key in a one-partition blocked filter of `blocks` 512-bit blocks. */
export function blockedPositions(h1: bigint, blocks: number, k: number): number[] {
  const block = Number((h1 * BigInt(blocks)) >> 64n);
  let word = secondHash(h1);
  const out: number[] = [];
  for (let i = 0; i < k; i++) {
    if (i > 0 && i % 7 === 0) word = mix64(word);
    out.push(block * 512 + Number((word >> BigInt(9 * (i % 7))) & 511n));
  }
  return out;
}

/** Indices of the set bits of a bit array stored LSB first. */
export function setBits(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++)
    for (let bit = 0; bit < 8; bit++) if ((bytes[i] >> bit) & 1) out.push(i * 8 + bit);
  return out;
}
