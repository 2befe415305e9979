// The approximate line filter's hash (assembly/nh-hash.ts): NH of UMAC (RFC 4418) over 16-byte
// blocks, two keys one block apart, each half finished by XXH64's avalanche. Checked against a
// BigInt model of that construction written here from the RFC's definition (every length 17-256,
// with block edges and the overlapping last block), against hash-wasm's XXH3-128 for the lengths
// it hands over (0-16 and 257 on), and for avalanche: one flipped input bit flips each output bit
// about half the time, which a missing finish or a block left out would break.
import { xxhash128 } from "hash-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { LongLineHasher } from "../build/js/lines/long-line.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const M64 = (1n << 64n) - 1n;
const M32 = (1n << 32n) - 1n;

/** The key: splitmix64 (Steele, Lea, Flood 2014) from seed 0, 34 outputs little-endian. */
function splitmixKey(): Uint8Array {
  const out = new Uint8Array(272);
  const view = new DataView(out.buffer);
  let s = 0n;
  for (let i = 0; i < 34; i++) {
    s = (s + 0x9e3779b97f4a7c15n) & M64;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
    view.setBigUint64(8 * i, z ^ (z >> 31n), true);
  }
  return out;
}

const KEY = splitmixKey();
const P1 = 0x9e3779b185ebca87n;

/** XXH64's final avalanche. */
function avalanche(h: bigint): bigint {
  h ^= h >> 33n;
  h = (h * 0xc2b2ae3d27d4eb4fn) & M64;
  h ^= h >> 29n;
  h = (h * 0x165667b19e3779f9n) & M64;
  return h ^ (h >> 32n);
}

/** NH (RFC 4418 5.2.2) of one 16-byte block under key bytes at `k`: words paired 0 with 2, 1 with 3. */
function nhBlock(bytes: Uint8Array, at: number, k: number): bigint {
  const m = new DataView(bytes.buffer, bytes.byteOffset + at, 16);
  const key = new DataView(KEY.buffer, k, 16);
  const t = [0, 1, 2, 3].map((j) => (BigInt(m.getUint32(4 * j, true)) + BigInt(key.getUint32(4 * j, true))) & M32);
  return t[0] * t[2] + t[1] * t[3];
}

/** The model: 16 little-endian bytes, low half first, as the kernel writes them (all zero made 1). */
async function model(bytes: Uint8Array): Promise<Uint8Array> {
  const out = new Uint8Array(16);
  const view = new DataView(out.buffer);
  const len = bytes.length;
  if (len <= 16 || len > 256) {
    // hash-wasm gives XXH3-128's canonical (big-endian) hex.
    const hex = await xxhash128(bytes);
    view.setBigUint64(8, BigInt(`0x${hex.slice(0, 16)}`), true);
    view.setBigUint64(0, BigInt(`0x${hex.slice(16)}`), true);
  } else {
    const starts: number[] = [];
    for (let at = 0; at < len - 16; at += 16) starts.push(at);
    starts.push(len - 16);
    let lo = 0n;
    let hi = 0n;
    starts.forEach((at, i) => {
      lo = (lo + nhBlock(bytes, at, 16 * i)) & M64;
      hi = (hi + nhBlock(bytes, at, 16 * i + 16)) & M64;
    });
    const n = (BigInt(len) * P1) & M64;
    view.setBigUint64(0, avalanche((lo + n) & M64), true);
    view.setBigUint64(8, avalanche(hi ^ n), true);
  }
  if (out.every((b) => b === 0)) out[0] = 1;
  return out;
}

/** The kernel's approximate-mode fingerprint of `bytes` (as one line without "\n"). */
function kernel(hasher: LongLineHasher, bytes: Uint8Array): Uint8Array {
  return hasher.digest([bytes], false).slice();
}

function randomBytes(next: () => number, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => Math.floor(next() * 256));
}

describe("nh128, the approximate line filter's hash", () => {
  it("equals the model at every length 0-300 (random bytes, and bytes that are all 0xff)", async () => {
    const hasher = new LongLineHasher(true, true);
    const next = rng(41);
    for (let len = 0; len <= 300; len++) {
      for (const bytes of [randomBytes(next, len), new Uint8Array(len).fill(0xff)]) {
        // "\r" ends no key here: the kernel would leave a final "\r" out of the key.
        if (len > 0 && bytes[len - 1] === 0x0d) bytes[len - 1] = 0x0e;
        expect(Buffer.from(kernel(hasher, bytes)).toString("hex"), `length ${len}`).toBe(
          Buffer.from(await model(bytes)).toString("hex"),
        );
      }
    }
  });

  it("avalanches: one flipped bit of an 80-byte key flips each of the 128 output bits 50% +- 25% of the time", () => {
    const hasher = new LongLineHasher(true, true);
    const next = rng(43);
    const samples = 200;
    const flips = new Float64Array(80 * 8 * 128);
    for (let s = 0; s < samples; s++) {
      const key = randomBytes(next, 80);
      if (key[79] === 0x0d) key[79] = 0x0e;
      const base = kernel(hasher, key);
      for (let bit = 0; bit < 640; bit++) {
        if (bit === 79 * 8 + 0 || bit === 79 * 8 + 1) continue; // could make the last byte "\r"
        key[bit >> 3] ^= 1 << (bit & 7);
        const d = kernel(hasher, key);
        key[bit >> 3] ^= 1 << (bit & 7);
        for (let o = 0; o < 128; o++) if (((d[o >> 3] ^ base[o >> 3]) >> (o & 7)) & 1) flips[bit * 128 + o]++;
      }
    }
    let worst = 0;
    for (let bit = 0; bit < 640; bit++) {
      if (bit === 79 * 8 + 0 || bit === 79 * 8 + 1) continue;
      for (let o = 0; o < 128; o++) worst = Math.max(worst, Math.abs(flips[bit * 128 + o] / samples - 0.5));
    }
    // 200 samples: one standard deviation is 0.035. The worst of 81,664 (input bit, output bit)
    // cells is tested, so the bound is corrected for that many comparisons (Bonferroni): 0.25 is
    // seven deviations, which a correct hash passes with every seed but about one in 10^7, while a
    // half left unmixed, or an input bit that reaches no output, sits at 0.5.
    expect(worst).toBeLessThan(0.25);
  });
});
