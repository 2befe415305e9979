// MultiDimBloomFilter: both membership rules against their formulas (measured over many filters
// and at least a million absent keys), no false negatives, the one-group standard baseline,
// serialization and bad input.
import { beforeAll, describe, expect, it } from "vitest";
import {
  ChecksumMismatchError,
  FormatError,
  InvalidArgumentError,
  MultiDimBloomFilter,
  sizing,
  type MultiDimBloomFilterOptions,
} from "../build/js/index.node.js";
import { fourSigma, ready, urls } from "./helpers.js";

beforeAll(ready);

const sum = (flags: Uint8Array) => flags.reduce((a, b) => a + b, 0);

/** Mean FP rate over `filters` independent filters of `items` keys, `queries` absent keys in all. */
function measure(options: MultiDimBloomFilterOptions, items: number, filters: number, queries: number): number {
  let positives = 0;
  const perFilter = Math.ceil(queries / filters);
  for (let f = 0; f < filters; f++) {
    const filter = new MultiDimBloomFilter(options);
    const keys = urls(items, `md-${f}`);
    filter.addMany(keys);
    expect(sum(filter.hasMany(keys)), "no false negatives").toBe(items);
    positives += sum(filter.hasMany(urls(perFilter, `absent-${f}`)));
    filter.dispose();
  }
  return positives / (perFilter * filters);
}

describe("MultiDimBloomFilter against its formula", () => {
  // Sizes where the expected FP rate is measurable with a million queries; the paper's own
  // sizes (N = 150) are in bench/multidim.bench.js.
  it.each([
    [{ groups: 4, bits: 150, hashes: 4, rule: "any" as const }, 12],
    [{ groups: 2, bits: 150, hashes: 4, rule: "all" as const }, 25],
    [{ groups: 2, bits: 600, hashes: 3, rule: "all" as const }, 120],
    [{ groups: 3, bits: 2000, hashes: 4, rule: "any" as const }, 120],
    [{ groups: 1, bits: 1200, hashes: 6, secondHashes: 0, rule: "all" as const }, 150],
  ])("%o with %d keys: within 1.5x over 1e6 absent keys", (options, items) => {
    const filter = new MultiDimBloomFilter(options);
    const expected = filter.designedFpRate(items);
    expect(filter.expectedFpRate(items)).toBe(expected); // the deprecated name still answers
    const measured = measure(options, items, 200, 1_000_000);
    expect(expected).toBeGreaterThan(1e-4);
    expect(measured).toBeLessThan(1.5 * expected);
    expect(measured).toBeGreaterThan(expected / 1.5);
  });

  it.each(["all", "any"] as const)(
    "rule %s: designedFpRate() is the formula at the planned load, estimatedFpRate() follows the bits; both match 1,000,000 absent keys",
    (rule) => {
      const items = 20_000;
      const filter = new MultiDimBloomFilter({ items, fpRate: 0.01, groups: 2, rule });
      const shape = {
        groups: 2,
        bitsPerVector: filter.bitsPerVector,
        hashes: filter.hashes,
        secondBits: filter.secondBits,
        secondHashes: filter.secondHashes,
        rule,
      };
      const designed = sizing.multiDimFpRate({ ...shape, items });
      expect(filter.planned).toEqual({ items, fpRate: 0.01 });
      expect(filter.designedFpRate()).toBe(designed);
      expect(designed).toBeLessThanOrEqual(0.01);
      expect(filter.estimatedFpRate()).toBe(0);
      filter.addMany(urls(items / 2, `md-rates-${rule}`));
      // Half the plan: the design stays, the estimate is far below it.
      expect(filter.designedFpRate()).toBe(designed);
      expect(filter.estimatedFpRate()).toBeLessThan(designed / 5);
      filter.addMany(urls(items / 2, `md-rates-more-${rule}`));
      const absent = urls(1_000_000, `md-absent-${rule}`);
      const measured = sum(filter.hasMany(absent)) / absent.length;
      const estimated = filter.estimatedFpRate();
      expect(Math.abs(measured - estimated)).toBeLessThan(fourSigma(estimated, absent.length));
      const vectors = Array.from({ length: 2 }, () => [
        { bits: filter.bitsPerVector, hashes: filter.hashes },
        { bits: filter.secondBits, hashes: filter.secondHashes },
      ]).flat();
      expect(Math.abs(measured - designed)).toBeLessThan(fourSigma(designed, absent.length, items, vectors));
      // Format v1 does not record the plan: a loaded filter has none, as one built from a shape.
      const back = MultiDimBloomFilter.deserialize(filter.serialize());
      expect(back.designedFpRate()).toBeNaN();
      expect(back.designedFpRate(items)).toBe(designed);
      expect(back.estimatedFpRate()).toBe(estimated);
      expect(new MultiDimBloomFilter(shape).designedFpRate()).toBeNaN();
      filter.dispose();
      back.dispose();
    },
  );

  it("estimatedFpRate() counts each vector's own bits, vectors that start and end inside bytes and words", () => {
    for (const rule of ["all", "any"] as const) {
      const filter = new MultiDimBloomFilter({
        groups: 3,
        bitsPerVector: 150,
        hashes: 4,
        secondBits: 37,
        secondHashes: 3,
        rule,
      });
      filter.addMany(urls(25, `md-exact-${rule}`));
      // The bits as serialized (after the 24-byte header and 48 bytes of parameters), counted here one by one.
      const bits = filter.serialize().subarray(72);
      const ones = (from: number, to: number) => {
        let n = 0;
        for (let i = from; i < to; i++) n += (bits[i >> 3] >> (i & 7)) & 1;
        return n;
      };
      const held = [0, 1, 2].map(
        (g) => (ones(187 * g, 187 * g + 150) / 150) ** 4 * (ones(187 * g + 150, 187 * (g + 1)) / 37) ** 3,
      );
      const expected = rule === "all" ? held[0] * held[1] * held[2] : 1 - (1 - held[0]) * (1 - held[1]) * (1 - held[2]);
      expect(filter.estimatedFpRate()).toBeCloseTo(expected, 14);
      expect(expected).toBeGreaterThan(0);
      filter.dispose();
    }
  });

  it("the two rules bracket each other: any >= one group >= all", () => {
    const shape = { groups: 4, bits: 150, hashes: 4, secondBits: 37, secondHashes: 4, items: 20 };
    const all = sizing.multiDimFpRate({ ...shape, rule: "all" });
    const any = sizing.multiDimFpRate({ ...shape, rule: "any" });
    const one = sizing.multiDimFpRate({ ...shape, groups: 1, rule: "all" });
    expect(all).toBeCloseTo(one ** 4, 12);
    expect(any).toBeCloseTo(1 - (1 - one) ** 4, 12);
  });

  it("a one-group filter without V2 is a standard Bloom filter", () => {
    const bits = 1200;
    const items = 150;
    const standard = sizing.bestStandardBloom(bits, items);
    const formula = sizing.multiDimFpRate({
      groups: 1,
      bitsPerVector: bits,
      hashes: standard.hashes,
      secondBits: 0,
      secondHashes: 0,
      items,
      rule: "all",
    });
    // The deprecated shape field `bits` is the same N.
    expect(
      sizing.multiDimFpRate({
        groups: 1,
        bits,
        hashes: standard.hashes,
        secondBits: 0,
        secondHashes: 0,
        items,
        rule: "all",
      }),
    ).toBe(formula);
    expect(() =>
      sizing.multiDimFpRate({
        groups: 1,
        bits,
        bitsPerVector: bits,
        hashes: 2,
        secondBits: 0,
        secondHashes: 0,
        items,
        rule: "all",
      }),
    ).toThrow(/not both/);
    expect(formula).toBe(standard.fpRate);
    // The textbook optimum k = m/n ln 2, within one.
    expect(Math.abs(standard.hashes - (bits / items) * Math.LN2)).toBeLessThanOrEqual(1);
  });
});

describe("MultiDimBloomFilter API", () => {
  it("add reports new keys under each rule, repeats included", () => {
    for (const rule of ["all", "any"] as const) {
      const filter = new MultiDimBloomFilter({ groups: 4, bitsPerVector: 4096, hashes: 4, rule });
      expect(Array.from(filter.addMany(["a", "b", "a"]))).toEqual([1, 1, 0]);
      expect(filter.add("b")).toBe(false);
      expect(filter.count).toBe(2);
      expect(filter.has("a")).toBe(true);
      expect(filter.bits).toBe(4 * (4096 + 1024));
    }
  });

  it("round-trips and refuses damaged bytes", () => {
    const a = new MultiDimBloomFilter({ groups: 3, bits: 1000, hashes: 3, secondHashes: 2, rule: "any" });
    a.addMany(urls(200, "rt"));
    const bytes = a.serialize();
    const b = MultiDimBloomFilter.deserialize(bytes);
    expect(b.serialize()).toEqual(bytes);
    expect([b.rule, b.groups, b.secondBits, b.secondHashes, b.count]).toEqual(["any", 3, 333, 2, a.count]);
    const probe = urls(5000, "probe");
    expect(b.hasMany(probe)).toEqual(a.hasMany(probe));
    const flipped = bytes.slice();
    flipped[flipped.length - 12] ^= 0x10;
    expect(() => MultiDimBloomFilter.deserialize(flipped)).toThrow(ChecksumMismatchError);
    const badRule = bytes.slice();
    new DataView(badRule.buffer).setUint32(24 + 28, 9, true);
    expect(() => MultiDimBloomFilter.deserialize(badRule)).toThrow(FormatError);
  });

  it("option and getter agree: bitsPerVector is N, .bits the total; the option `bits` is a deprecated alias of bitsPerVector", () => {
    const named = new MultiDimBloomFilter({ groups: 3, bitsPerVector: 2000, hashes: 4 });
    const aliased = new MultiDimBloomFilter({ groups: 3, bits: 2000, hashes: 4 });
    expect([named.bitsPerVector, named.secondBits, named.bits]).toEqual([2000, 500, 3 * (2000 + 500)]);
    expect([aliased.bitsPerVector, aliased.bits]).toEqual([named.bitsPerVector, named.bits]);
    const keys = urls(300, "alias");
    named.addMany(keys);
    aliased.addMany(keys);
    expect(aliased.serialize()).toEqual(named.serialize());
    expect(() => new MultiDimBloomFilter({ groups: 3, bits: 2000, bitsPerVector: 2000, hashes: 4 })).toThrow(
      /bitsPerVector or its deprecated alias bits, not both/,
    );
    expect(() => new MultiDimBloomFilter({ groups: 3, bitsPerVector: 0, hashes: 4 })).toThrow(/bitsPerVector/);
  });

  it.each<[{ items: number; fpRate: number; groups?: number; rule?: "all" | "any"; secondHashes?: number }]>([
    [{ items: 3000, fpRate: 0.01 }],
    [{ items: 3000, fpRate: 0.02, groups: 3, rule: "any" as const }],
    [{ items: 2000, fpRate: 0.05, groups: 2, rule: "all" as const, secondHashes: 0 }],
  ])("is sized from %o and meets it, counted on absent keys", (load) => {
    const filter = new MultiDimBloomFilter(load);
    expect(filter.groups).toBe(load.groups ?? 1);
    filter.addMany(urls(load.items, "sized"));
    // No false negatives, and the FP rate measured on 100,000 keys never added (binomial: 4 sigma).
    expect(filter.hasMany(urls(load.items, "sized")).every((x) => x === 1)).toBe(true);
    const probes = 100_000;
    const hits = filter.hasMany(urls(probes, "absent")).reduce((a, b) => a + b, 0);
    expect(hits / probes).toBeLessThan(load.fpRate + 4 * Math.sqrt((load.fpRate * (1 - load.fpRate)) / probes));
    // Planned, not oversized: the measured rate is not far under the target either.
    expect(hits / probes).toBeGreaterThan(load.fpRate / 3);
  });

  it("refuses a load it cannot meet, and a load mixed with a shape, by name", () => {
    expect(() => new MultiDimBloomFilter({ items: 1000, fpRate: 1.5 })).toThrow(/fpRate/);
    expect(() => new MultiDimBloomFilter({ items: 0, fpRate: 0.01 })).toThrow(/items/);
    expect(() => new MultiDimBloomFilter({ items: 1000, fpRate: 0.01, bitsPerVector: 100, hashes: 3 })).toThrow(
      /either \{ items, fpRate \} or \{ bitsPerVector, hashes \}/,
    );
    expect(() => new MultiDimBloomFilter({ groups: 2 } as never)).toThrow(InvalidArgumentError);
  });

  it("names bad parameters", () => {
    expect(() => new MultiDimBloomFilter({ groups: 0, bits: 150, hashes: 4 })).toThrow(InvalidArgumentError);
    expect(() => new MultiDimBloomFilter({ groups: 2, bits: 150, hashes: 4, rule: "most" as never })).toThrow(/rule/);
    expect(() => new MultiDimBloomFilter({ groups: 2, bits: 150, hashes: 0 })).toThrow(/hashes/);
    expect(() => new MultiDimBloomFilter({ groups: 2, bits: 150, hashes: 2, secondHashes: 0, secondBits: 10 })).toThrow(
      /secondBits/,
    );
    expect(() => new MultiDimBloomFilter({ groups: 4096, bits: 2 ** 32, hashes: 2 })).toThrow(/2\^34/);
  });
});
