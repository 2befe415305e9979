// Shared test helpers: a seeded generator (tests are reproducible) and key factories.
import { execFileSync } from "node:child_process";
import xxhash from "xxhash-wasm";
import { init } from "../build/js/index.node.js";

/** Initialises the package once per test file. */
export async function ready(): Promise<void> {
  await init();
}

/** xorshift128+ seeded: the same sequence on every run. */
export function rng(seed = 1): () => number {
  let s0 = (BigInt(seed) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn || 1n;
  let s1 = (s0 ^ 0xda942042e4dd58b5n) & 0xffffffffffffffffn;
  return () => {
    let x = s0;
    const y = s1;
    s0 = y;
    x ^= (x << 23n) & 0xffffffffffffffffn;
    s1 = x ^ y ^ (x >> 17n) ^ (y >> 26n);
    return Number(((s1 + y) & 0xffffffffffffffffn) >> 11n) / 2 ** 53;
  };
}

/** Random bytes of a given length. */
export function randomBytes(next: () => number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(next() * 256);
  return out;
}

/** `count` URL lines over about `distinct` paths on 40 hosts, seeded: a crawl stream with repeats. */
export function randomKeys(seed: number, count: number, distinct: number): string[] {
  const next = rng(seed);
  return Array.from(
    { length: count },
    () => `https://s${Math.floor(next() * 40)}.example/p/${Math.floor(next() * distinct)}`,
  );
}

/** mawk's first occurrences of the lines of `file` (the reference for line dedup), bytes as they are (LC_ALL=C). */
export function awkFirst(file: string): string {
  return execFileSync("mawk", ["!s[$0]++", file], { env: { LC_ALL: "C" }, maxBuffer: 1 << 28 }).toString();
}

/** URL-like keys of 60-100 bytes, disjoint between different prefixes. */
export function urls(count: number, prefix = "present"): string[] {
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++)
    out[i] = `https://www.example-${i % 97}.com/${prefix}/section/${i}/article?id=${i * 7}&ref=crawl`;
  return out;
}

/** The set of word 3-shingles of a text, as exactJaccard sees it (a text of 1 or 2 words is one shingle of them). */
export function shingleSet(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const out = new Set<string>();
  if (words.length > 0 && words.length < 3) out.add(words.join(" "));
  for (let i = 0; i + 3 <= words.length; i++) out.add(words.slice(i, i + 3).join(" "));
  return out;
}

/** Exact Jaccard of two sets. */
export function setJaccard(x: ReadonlySet<string>, y: ReadonlySet<string>): number {
  let common = 0;
  for (const s of x) if (y.has(s)) common++;
  return common / (x.size + y.size - common);
}

/** Exact Jaccard of word 3-shingle sets, a reference for the near-duplicate tests written apart from crawlsieve: words are runs of letters, digits and "_". */
export function exactJaccard(a: string, b: string): number {
  return setJaccard(shingleSet(a), shingleSet(b));
}

/**
 * Re-signs serialized bytes as a forger would: the format's checksum (XXH64 folded over the
 * header, then each payload segment, in 1 MiB pieces, each piece's hash the next one's seed),
 * computed with xxhash-wasm rather than crawlsieve. `segments` are the payload's segment
 * lengths (one segment, the whole payload, unless given).
 */
export async function resigner(): Promise<(bytes: Uint8Array, segments?: readonly number[]) => Uint8Array> {
  const { h64Raw } = await xxhash();
  const PIECE = 1 << 20;
  const fold = (seed: bigint, data: Uint8Array) => {
    let h = seed;
    let at = 0;
    do {
      h = h64Raw(data.subarray(at, at + PIECE), h);
      at += PIECE;
    } while (at < data.length);
    return h;
  };
  return (bytes, segments) => {
    const out = bytes.slice();
    const view = new DataView(out.buffer);
    const payloadStart = 24 + view.getUint32(12, true);
    const end = out.length - 8;
    let sum = fold(0n, out.subarray(0, payloadStart));
    let at = payloadStart;
    for (const length of segments ?? [end - payloadStart]) {
      sum = fold(sum, out.subarray(at, at + length));
      at += length;
    }
    view.setBigUint64(end, sum, true);
    return out;
  };
}

/** Recomputes the trailing checksum of serialized bytes after an edit, as a forger would (in place; returns them). */
export async function resealed(bytes: Uint8Array): Promise<Uint8Array> {
  bytes.set((await resigner())(bytes));
  return bytes;
}

/** A bit vector of a filter: its bits and how many of them each key sets. */
export interface Vector {
  readonly bits: number;
  readonly hashes: number;
}

/**
 * Four sigma of the gap between a filter's FP rate p and the rate measured on `queries` absent
 * keys: binomial sampling, plus, when `vectors` are given, p's spread from one filter to the next
 * at `items` keys (each vector's fill varies, and p moves by k times its relative change). The
 * fill's binomial variance overstates the true one (set bits are negatively correlated), so the
 * bound errs wide, never narrow.
 */
export function fourSigma(p: number, queries: number, items = 0, vectors: readonly Vector[] = []): number {
  let relative = 0;
  for (const { bits, hashes } of vectors) {
    const fill = -Math.expm1(hashes * items * Math.log1p(-1 / bits));
    relative += (hashes * hashes * (1 - fill)) / (fill * bits);
  }
  return 4 * Math.sqrt((p * (1 - p)) / queries + p * p * relative);
}

/** A blocked filter's false-positive rate from first principles (k bits in one 512-bit block a key, Poisson keys a block): n keys in m bits. */
export function blockedRate(n: number, m: number, k: number): number {
  const mean = n / (m / 512);
  let term = Math.exp(-mean);
  let rate = 0;
  for (let j = 0; j < mean * 4 + 100; j++) {
    rate += term * (1 - (1 - 1 / 512) ** (k * j)) ** k;
    term *= mean / (j + 1);
  }
  return rate;
}
