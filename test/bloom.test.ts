// Bloom filters: membership properties, the hash scheme against an independent model, uniformity,
// and every misuse of the API rejected with a typed error.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import xxhashWasm from "xxhash-wasm";
import {
  BlockedBloomFilter,
  BloomFilter,
  DisposedError,
  FilterTooLargeError,
  sizing,
  InvalidArgumentError,
  ScalableBloomFilter,
} from "../build/js/index.node.js";
import { ready, urls } from "./helpers.js";
import { blockedPositions, setBits, standardPositions } from "./reference-positions.js";

beforeAll(ready);

const PAYLOAD = 24 + 40; // header + Bloom parameters: where the bit array starts in serialized bytes

const keyArb = fc.oneof(fc.string({ unit: "grapheme", maxLength: 120 }), fc.uint8Array({ maxLength: 120 }));

describe.each([
  ["BloomFilter", (o: object) => new BloomFilter(o as never)],
  ["BlockedBloomFilter", (o: object) => new BlockedBloomFilter(o as never)],
  ["partitioned BloomFilter", (o: object) => new BloomFilter({ ...(o as object), maxPartitionBytes: 1024 } as never)],
  [
    "ScalableBloomFilter",
    (o: object) => new ScalableBloomFilter({ fpRate: (o as { fpRate: number }).fpRate, initialItems: 64 }),
  ],
])("%s", (_name, make) => {
  it("never forgets a key it was given (property, single and batch calls)", () => {
    fc.assert(
      fc.property(fc.array(keyArb, { maxLength: 300 }), fc.array(keyArb, { maxLength: 300 }), (single, batch) => {
        const filter = make({ items: 500, fpRate: 0.01 });
        for (const key of single) filter.add(key);
        filter.addMany(batch);
        for (const key of [...single, ...batch]) expect(filter.has(key)).toBe(true);
        expect(Array.from(filter.hasMany([...single, ...batch])).every((x) => x === 1)).toBe(true);
        filter.dispose();
      }),
      { numRuns: 60 },
    );
  });

  it("reports add() as new exactly once for distinct keys at low load, in order within a batch", () => {
    const filter = make({ items: 100_000, fpRate: 1e-6 });
    const keys = urls(2000);
    const first = filter.addMany([...keys, ...keys]);
    expect(Array.from(first.subarray(0, 2000)).every((x) => x === 1)).toBe(true);
    expect(Array.from(first.subarray(2000)).every((x) => x === 0)).toBe(true);
    expect(filter.add(keys[5])).toBe(false);
    expect(filter.add("never seen before")).toBe(true);
    expect(filter.count).toBe(2001);
  });

  it("treats a string and its UTF-8 bytes as the same key", () => {
    const filter = make({ items: 1000, fpRate: 1e-6 });
    filter.add("héllo wörld");
    expect(filter.has(new TextEncoder().encode("héllo wörld"))).toBe(true);
    filter.addMany([new TextEncoder().encode("日本")]);
    expect(filter.hasMany(["日本"])[0]).toBe(1);
  });
});

describe("hash scheme 1 (pinned against an independent model)", () => {
  it("sets exactly the standard filter's documented positions", async () => {
    const { h64Raw } = await xxhashWasm();
    const keys = urls(150, "pin");
    for (const [m, k] of [
      [10007, 7],
      [64, 3],
      [1 << 20, 13],
    ] as const) {
      for (const key of keys) {
        const filter = new BloomFilter({ bits: m, hashes: k });
        filter.add(key);
        const bits = setBits(filter.serialize().subarray(PAYLOAD, -8));
        const expected = [...new Set(standardPositions(h64Raw(new TextEncoder().encode(key), 0n), m, k))].sort(
          (x, y) => x - y,
        );
        expect(bits, `${key} in m=${m}, k=${k}`).toEqual(expected);
      }
    }
  });

  it("sets exactly the blocked filter's documented positions", async () => {
    const { h64Raw } = await xxhashWasm();
    for (const k of [6, 7, 8, 16]) {
      for (const key of urls(100, "pin-blocked")) {
        const filter = new BlockedBloomFilter({ bits: 512 * 37, hashes: k });
        filter.add(key);
        const bits = setBits(filter.serialize().subarray(PAYLOAD, -8));
        const expected = [...new Set(blockedPositions(h64Raw(new TextEncoder().encode(key), 0n), 37, k))].sort(
          (x, y) => x - y,
        );
        expect(bits, `${key}, k=${k}`).toEqual(expected);
      }
    }
  });
});

describe("batches of strings (the staged encode and the grouped kernels)", () => {
  // Keys that put non-ASCII text, lone surrogates at key edges (a pair split between two keys must
  // not join into one character) and keys longer than one joined piece at every position of a
  // batch: 9,000 keys span three batches and many pieces of joined characters.
  const mixedKeys = (): string[] => {
    const keys: string[] = [];
    for (let i = 0; i < 9000; i++) {
      const url = `https://www.site-${i % 31}.example/p/${i}?q=${i * 13}`;
      if (i % 1000 === 999) keys.push("L".repeat(40_000 + i));
      else if (i % 97 === 5) keys.push(`${url}/é/${i}`);
      else if (i % 211 === 17) keys.push(`${url}/日本語`);
      else if (i % 499 === 3) keys.push(`${url}\uD83D`);
      else if (i % 499 === 4) keys.push(`\uDE00${url}`);
      else if (i % 613 === 7) keys.push(`${url}/😀`);
      else keys.push(url);
    }
    return keys;
  };

  it.each([
    [
      "BloomFilter",
      () => new BloomFilter({ bits: 1 << 18, hashes: 7 }),
      (h: bigint) => standardPositions(h, 1 << 18, 7),
    ],
    [
      "BlockedBloomFilter",
      () => new BlockedBloomFilter({ bits: 512 * 509, hashes: 6 }),
      (h: bigint) => blockedPositions(h, 509, 6),
    ],
  ])(
    "%s addMany/hasMany set and test the model's bits of each key's own UTF-8, as add() key by key does",
    async (_name, make, positions) => {
      const { h64Raw } = await xxhashWasm();
      const keys = mixedKeys();
      const batched = make();
      const single = make();
      const fresh = batched.addMany(keys);
      const singleFresh = keys.map((key) => (single.add(key) ? 1 : 0));
      expect(Array.from(fresh)).toEqual(singleFresh);
      // The model: every key's positions from XXH64 of Buffer.from(key) (UTF-8, lone surrogates as U+FFFD).
      const expected = new Set<number>();
      for (const key of keys) for (const p of positions(h64Raw(Buffer.from(key, "utf8"), 0n))) expected.add(p);
      const bits = setBits(batched.serialize().subarray(PAYLOAD, -8));
      expect(bits).toEqual([...expected].sort((x, y) => x - y));
      expect(batched.serialize()).toEqual(single.serialize());
      // hasMany on keys added and absent, against the model's bits.
      const probes = keys.slice(0, 3000).concat(keys.slice(0, 3000).map((k) => `${k}#absent`));
      const answer = (key: string) =>
        positions(h64Raw(Buffer.from(key, "utf8"), 0n)).every((p) => expected.has(p)) ? 1 : 0;
      expect(Array.from(batched.hasMany(probes))).toEqual(probes.map(answer));
      expect(
        Array.from(batched.hasMany(probes))
          .slice(3000)
          .some((x) => x === 0),
      ).toBe(true);
    },
  );

  it("addMany of the golden keys gives the golden bytes in this build", () => {
    const keys = Array.from(
      { length: 1000 },
      (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`,
    );
    for (const [name, filter] of [
      ["bloom-v1.bin", new BloomFilter({ items: 1000, fpRate: 0.01 })],
      ["blocked-bloom-v1.bin", new BlockedBloomFilter({ items: 1000, fpRate: 0.01 })],
    ] as const) {
      filter.addMany(keys);
      expect(
        Buffer.from(filter.serialize()).equals(readFileSync(new URL(`./golden/${name}`, import.meta.url))),
        name,
      ).toBe(true);
    }
  });
});

describe("uniformity (chi-square)", () => {
  // At low load almost every position sets a fresh bit, so set bits per bucket follow the
  // positions; with 256 buckets the 0.1% critical value of chi-square (255 df) is 330.5.
  const chiSquare = (counts: number[]) => {
    const total = counts.reduce((a, b) => a + b, 0);
    const expected = total / counts.length;
    return counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
  };
  const buckets = (bits: number[], of: (bit: number) => number, count: number) => {
    const counts = new Array<number>(count).fill(0);
    for (const bit of bits) counts[of(bit)]++;
    return counts;
  };

  it("spreads standard-filter bits evenly over the array and over bit offsets", () => {
    const m = 1 << 22;
    const filter = new BloomFilter({ bits: m, hashes: 7 });
    filter.addMany(urls(20_000, "chi"));
    const bits = setBits(filter.serialize().subarray(PAYLOAD, -8));
    expect(chiSquare(buckets(bits, (b) => Math.floor(b / (m / 256)), 256))).toBeLessThan(330.5);
    expect(chiSquare(buckets(bits, (b) => b % 256, 256))).toBeLessThan(330.5);
  });

  it("spreads blocked-filter bits evenly over blocks and inside blocks", () => {
    const blocks = 8192;
    const filter = new BlockedBloomFilter({ bits: blocks * 512, hashes: 7 });
    filter.addMany(urls(20_000, "chi-blocked"));
    const bits = setBits(filter.serialize().subarray(PAYLOAD, -8));
    // All 7 bits of a key land in one block, so keys, not bits, are the independent draws per block.
    expect(chiSquare(buckets(bits, (b) => Math.floor(b / 512) % 256, 256).map((c) => c / 7))).toBeLessThan(330.5);
    expect(chiSquare(buckets(bits, (b) => (b % 512) >> 1, 256))).toBeLessThan(330.5);
  });
});

describe("statistics", () => {
  it("estimates the count and fill ratio", () => {
    const filter = new BloomFilter({ items: 100_000, fpRate: 0.01 });
    filter.addMany(urls(50_000, "est"));
    expect(filter.estimatedCount()).toBeGreaterThan(50_000 * 0.97);
    expect(filter.estimatedCount()).toBeLessThan(50_000 * 1.03);
    expect(filter.fillRatio()).toBeCloseTo(-Math.expm1((-filter.hashes * 50_000) / filter.bits), 2);
    expect(filter.estimatedFpRate()).toBeLessThan(0.01);
  });

  it("partitions a filter past its partition limit instead of truncating it", () => {
    const filter = new BloomFilter({ items: 100_000, fpRate: 0.01, maxPartitionBytes: 4096 });
    expect(filter.partitions).toBe(Math.ceil((Math.ceil(958506 / 8 / 64) * 64) / 4096));
    expect(filter.bits).toBeGreaterThanOrEqual(958506);
    const keys = urls(100_000, "part");
    filter.addMany(keys);
    expect(Array.from(filter.hasMany(keys)).every((x) => x === 1)).toBe(true);
    const absent = filter.hasMany(urls(100_000, "absent"));
    const fp = absent.reduce((a, b) => a + b, 0) / absent.length;
    expect(fp).toBeLessThan(0.015);
  });
});

describe("bad input", () => {
  it("rejects invalid sizes naming the value", () => {
    const bad: [object, RegExp][] = [
      [{ items: 0, fpRate: 0.01 }, /items must be an integer from 1/],
      [{ items: -5, fpRate: 0.01 }, /items .* got -5/],
      [{ items: 1.5, fpRate: 0.01 }, /got 1.5/],
      [{ items: Number.NaN, fpRate: 0.01 }, /got NaN/],
      [{ items: "100", fpRate: 0.01 }, /got "100"/],
      [{ items: 100, fpRate: 0 }, /fpRate must be a number strictly between 0 and 1, got 0/],
      [{ items: 100, fpRate: 1 }, /got 1$/],
      [{ items: 100, fpRate: -0.1 }, /got -0.1/],
      [{ items: 100 }, /fpRate .* got undefined/],
      [{ items: 100, fpRate: 0.01, bits: 10 }, /either/],
      [{ bits: 100, hashes: 0 }, /hashes/],
      [{ bits: 100, hashes: 65 }, /hashes .* 1 to 64/],
      [{ bits: 0, hashes: 3 }, /bits/],
      [{ items: 100, fpRate: 0.01, maxPartitionBytes: 100 }, /multiple of 64/],
    ];
    for (const [options, message] of bad) {
      expect(() => new BloomFilter(options as never), JSON.stringify(options)).toThrow(InvalidArgumentError);
      expect(() => new BloomFilter(options as never), JSON.stringify(options)).toThrow(message);
    }
    expect(() => new BloomFilter(null as never)).toThrow(/options must be an options object, got null/);
    expect(() => new ScalableBloomFilter({ fpRate: 0.01, growth: 1 })).toThrow(
      /growth must be an integer from 2 to 16/,
    );
  });

  it("refuses filters too large for the platform with FilterTooLargeError", () => {
    expect(() => new BloomFilter({ items: 1e15, fpRate: 0.01 })).toThrow(FilterTooLargeError);
    expect(() => new BloomFilter({ items: 5e12, fpRate: 0.01 })).toThrow(/exceeds the 1 TiB/);
  });

  it("refuses a blocked filter for a rate it cannot reach within 1 TiB, at once (it searched without end)", () => {
    // At most 64 of a block's 512 bits per key: tiny rates need nearly empty blocks.
    expect(() => new BlockedBloomFilter({ items: 10, fpRate: 1e-300 })).toThrow(
      /a blocked filter cannot reach fpRate 1e-300 for 10 items within 1099511627776 bytes/,
    );
    expect(() => sizing.optimalBlockedBloom({ items: 1e9, fpRate: 1e-60 })).toThrow(FilterTooLargeError);
    expect(new BloomFilter({ items: 10, fpRate: 1e-300 }).hashes).toBe(64);
  });

  it("rejects keys that are neither strings nor bytes", () => {
    const filter = new BloomFilter({ items: 100, fpRate: 0.01 });
    expect(() => filter.add(5 as never)).toThrow(/key must be a string or a Uint8Array, got 5/);
    expect(() => filter.has(undefined as never)).toThrow(InvalidArgumentError);
    expect(() => filter.addMany("abc" as never)).toThrow(/keys must be an array/);
    expect(() => filter.addMany(["a", {} as never])).toThrow(/keys\[1\]/);
    expect(() => filter.addSpans(new Uint8Array(3), [2, 1])).toThrow(/spans\[0\.\.1\]/);
    expect(() => filter.addSpans(new Uint8Array(3), [0, 2, 1, 3])).toThrow(/ascending/);
    expect(() => filter.addSpans([1, 2] as never, [0, 1])).toThrow(/data must be a Uint8Array/);
  });

  it("throws DisposedError after dispose()", () => {
    const filter = new BloomFilter({ items: 100, fpRate: 0.01 });
    filter.dispose();
    expect(() => filter.add("a")).toThrow(DisposedError);
    expect(() => filter.serialize()).toThrow(DisposedError);
  });

  it("handles empty batches and empty keys", () => {
    const filter = new BloomFilter({ items: 100, fpRate: 0.01 });
    expect(filter.addMany([])).toEqual(new Uint8Array(0));
    expect(filter.add("")).toBe(true);
    expect(filter.has(new Uint8Array(0))).toBe(true);
    expect(filter.addSpans(new Uint8Array(0), [])).toEqual(new Uint8Array(0));
  });

  it("takes a one-megabyte key", () => {
    const filter = new BloomFilter({ items: 100, fpRate: 0.01 });
    const huge = "u".repeat(1 << 20) + "é";
    expect(filter.add(huge)).toBe(true);
    expect(filter.hasMany([huge, "x"])).toEqual(Uint8Array.of(1, 0));
  });
});
