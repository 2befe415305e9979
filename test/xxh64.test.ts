// The filters' key hash against XXH64's published values and an independent implementation.
import { beforeAll, describe, expect, it } from "vitest";
import xxhashWasm from "xxhash-wasm";
import { Xxh64Stream } from "../build/js/hash/xxh64-stream.js";
import { InvalidArgumentError, xxh64 } from "../build/js/index.node.js";
import { randomBytes, ready, rng } from "./helpers.js";

beforeAll(ready);

describe("xxh64", () => {
  it("matches published XXH64 values", () => {
    // From the xxHash documentation and python-xxhash's README.
    expect(xxh64("")).toBe(0xef46db3751d8e999n);
    expect(xxh64("a")).toBe(0xd24ec4f1a98c6e5bn);
    expect(xxh64("abc")).toBe(0x44bc2cf5ad770999n);
    expect(xxh64("Nobody inspects the spammish repetition")).toBe(0xfbcea83c8a378bf1n);
  });

  it("equals xxhash-wasm for every length 0..1000 and several seeds", async () => {
    const { h64Raw } = await xxhashWasm();
    const next = rng(5);
    for (let length = 0; length <= 1000; length++) {
      const data = randomBytes(next, length);
      for (const seed of [0n, 1n, 0x9e3779b97f4a7c15n, 0xffffffffffffffffn]) {
        expect(xxh64(data, seed), `length ${length}, seed ${seed}`).toBe(h64Raw(data, seed));
      }
    }
  });

  it("a stream fed in random pieces equals xxhash-wasm's one-shot hash, digest mid-stream included", async () => {
    const { h64Raw } = await xxhashWasm();
    const next = rng(64);
    for (let t = 0; t < 200; t++) {
      const data = randomBytes(next, t < 100 ? t : Math.floor(next() * 300_000));
      const seed = t % 3 === 0 ? 0n : BigInt(Math.floor(next() * 2 ** 32)) << 32n;
      const stream = new Xxh64Stream(seed);
      for (let at = 0; at < data.length; ) {
        const n = Math.floor(next() * (t % 2 === 0 ? 40 : 100_000));
        stream.update(data.subarray(at, at + n));
        at += n;
        const seen = Math.min(at, data.length);
        if (t % 7 === 0) expect(stream.digest(), `${t} after ${seen}`).toBe(h64Raw(data.subarray(0, seen), seed));
      }
      expect(stream.digest(), `length ${data.length}`).toBe(h64Raw(data, seed));
      stream.reset();
      expect(stream.digest()).toBe(h64Raw(new Uint8Array(0), 0n));
    }
  });

  it("rejects a seed outside 64 bits", () => {
    expect(() => xxh64("a", -1n)).toThrow(InvalidArgumentError);
    expect(() => xxh64("a", 1n << 64n)).toThrow(/seed/);
  });
});
