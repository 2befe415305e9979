// Shared test helpers: a seeded generator (tests are reproducible) and key factories.
import { init } from "../build/js/index.node.js";

/** Initialises the package once per test file. */
export async function ready(): Promise<void> {
  await init();
}

/** xorshift128+ seeded: the same sequence on every run. */
export function rng(seed = 1): () => number {
  let s0 = BigInt(seed) * 0x9e3779b97f4a7c15n & 0xffffffffffffffffn || 1n;
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

/** URL-like keys of 60-100 bytes, disjoint between different prefixes. */
export function urls(count: number, prefix = "present"): string[] {
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = `https://www.example-${i % 97}.com/${prefix}/section/${i}/article?id=${i * 7}&ref=crawl`;
  return out;
}

/** Exact Jaccard of word 3-shingle sets, a reference for the near-duplicate tests written apart from crawlsieve: words are runs of letters, digits and "_". */
export function exactJaccard(a: string, b: string): number {
  const set = (text: string) => {
    const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
    const out = new Set<string>();
    if (words.length > 0 && words.length < 3) out.add(words.join(" "));
    for (let i = 0; i + 3 <= words.length; i++) out.add(words.slice(i, i + 3).join(" "));
    return out;
  };
  const x = set(a);
  const y = set(b);
  let common = 0;
  for (const s of x) if (y.has(s)) common++;
  return common / (x.size + y.size - common);
}

/** Recomputes the trailing checksum of serialized bytes after an edit, as a forger would (in place; returns them). */
export async function resealed(bytes: Uint8Array): Promise<Uint8Array> {
  const { checksumBytes } = await import("../build/js/format/checksum.js");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloadStart = 24 + view.getUint32(12, true);
  const sum = checksumBytes(checksumBytes(0n, bytes.subarray(0, payloadStart)), bytes.subarray(payloadStart, bytes.length - 8));
  view.setBigUint64(bytes.length - 8, sum, true);
  return bytes;
}
