// Counting Bloom filter: deletion without false negatives, counters equal to a rebuild, saturation.
import { beforeAll, describe, expect, it } from "vitest";
import {
  CountingBloomFilter,
  Deduplicator,
  FormatError,
  InvalidArgumentError,
  sizing,
} from "../build/js/index.node.js";
import { ready, rng, urls } from "./helpers.js";

beforeAll(ready);

const PAYLOAD = 24 + 48; // header + counting parameters

/** Counter values read from serialized bytes (packed LSB first). */
function counters(filter: CountingBloomFilter): number[] {
  const bytes = filter.serialize().subarray(PAYLOAD, -8);
  const b = filter.counterBits;
  const out: number[] = [];
  for (let i = 0; i < filter.counters; i++) out.push((bytes[(i * b) >> 3] >> ((i * b) & 7)) & ((1 << b) - 1));
  return out;
}

describe.each([2, 4, 8])("CountingBloomFilter, %i-bit counters", (counterBits) => {
  it("after 1e5 random adds and removes: no false negative, unsaturated counters equal a rebuild", () => {
    const next = rng(counterBits);
    // 8-bit counters need hot keys to saturate: a small pool that mostly grows.
    const pool = urls(counterBits === 8 ? 50 : 3000, "cbf");
    const removeChance = counterBits === 8 ? 0.3 : 0.45;
    const live = new Map<string, number>();
    // Small enough that many counters saturate.
    const filter = new CountingBloomFilter({ items: 1500, fpRate: 0.05, counterBits });
    for (let op = 0; op < 100_000; op++) {
      const key = pool[Math.floor(next() * pool.length)];
      const held = live.get(key) ?? 0;
      if (held > 0 && next() < removeChance) {
        expect(filter.remove(key)).toBe(true);
        if (held === 1) live.delete(key);
        else live.set(key, held - 1);
      } else {
        filter.add(key);
        live.set(key, held + 1);
      }
    }
    const max = (1 << counterBits) - 1;
    const got = counters(filter);
    expect(got.filter((c) => c === max).length, "some counters saturated").toBeGreaterThan(0);
    for (const key of live.keys()) expect(filter.has(key), key).toBe(true);
    const rebuild = new CountingBloomFilter({ items: 1500, fpRate: 0.05, counterBits });
    for (const [key, times] of live) for (let t = 0; t < times; t++) rebuild.add(key);
    const expected = counters(rebuild);
    for (let i = 0; i < got.length; i++) if (got[i] !== max) expect(got[i], `counter ${i}`).toBe(expected[i]);
  });

  it("round-trips through serialization", () => {
    const filter = new CountingBloomFilter({ items: 1000, fpRate: 0.01, counterBits });
    const keys = urls(800, "rt");
    filter.addMany(keys);
    filter.removeMany(keys.slice(0, 100));
    const loaded = CountingBloomFilter.deserialize(filter.serialize());
    expect(loaded.counterBits).toBe(counterBits);
    expect(loaded.serialize()).toEqual(filter.serialize());
    expect(Array.from(loaded.hasMany(keys.slice(100))).every((x) => x === 1)).toBe(true);
    expect(loaded.count).toBe(filter.count);
  });
});

describe("CountingBloomFilter", () => {
  it("packs two 4-bit counters per byte", () => {
    const filter = new CountingBloomFilter({ items: 100_000, fpRate: 0.01 });
    expect(filter.byteLength).toBe(Math.ceil((filter.bits * 4) / 8 / 64) * 64);
    expect(filter.bits).toBe(sizing.optimalBloom({ items: 100_000, fpRate: 0.01 }).bits);
  });

  it("refuses to remove a key that is not there, changing nothing", () => {
    const filter = new CountingBloomFilter({ items: 1000, fpRate: 0.001 });
    filter.addMany(urls(500, "present"));
    const before = filter.serialize();
    expect(filter.remove("never added")).toBe(false);
    expect(filter.removeMany(["nope", "nor this"])).toEqual(Uint8Array.of(0, 0));
    expect(filter.serialize()).toEqual(before);
  });

  it("keeps saturated counters where they are", () => {
    const filter = new CountingBloomFilter({ items: 1000, fpRate: 0.01, counterBits: 4 });
    for (let i = 0; i < 20; i++) filter.add("hot");
    expect(filter.multiplicity("hot")).toBe(15);
    for (let i = 0; i < 20; i++) expect(filter.remove("hot")).toBe(true);
    expect(filter.has("hot")).toBe(true);
    expect(filter.multiplicity("hot")).toBe(15);
  });

  it("reports multiplicity as the smallest counter", () => {
    const filter = new CountingBloomFilter({ items: 1000, fpRate: 0.001 });
    filter.add("a");
    filter.add("a");
    filter.add("b");
    expect(filter.multiplicity("a")).toBe(2);
    expect(filter.multiplicity("b")).toBe(1);
    expect(filter.multiplicity("c")).toBe(0);
    expect(filter.remove("a")).toBe(true);
    expect(filter.multiplicity("a")).toBe(1);
  });

  it("keeps its FP rate within 1.5x of the target on 1e6 absent keys", () => {
    const filter = new CountingBloomFilter({ items: 100_000, fpRate: 0.01 });
    filter.addMany(urls(100_000, "present"));
    const fp = filter.hasMany(urls(1_000_000, "absent")).reduce((a, b) => a + b, 0) / 1e6;
    expect(fp).toBeLessThan(0.015);
    expect(fp).toBeGreaterThan(0.01 / 1.5);
  });

  it("reports the overflow bound (about 1.37e-15 m for 4-bit counters)", () => {
    const filter = new CountingBloomFilter({ items: 1_000_000, fpRate: 0.01 });
    expect(filter.overflowBound() / (1.37e-15 * filter.bits)).toBeCloseTo(1, 1);
  });

  it("works partitioned", () => {
    const filter = new CountingBloomFilter({ items: 20_000, fpRate: 0.01, maxPartitionBytes: 1024 });
    expect(filter.partitions).toBeGreaterThan(1);
    const keys = urls(20_000, "part");
    filter.addMany(keys);
    expect(filter.removeMany(keys.slice(0, 5000)).every((x) => x === 1)).toBe(true);
    expect(filter.hasMany(keys.slice(5000)).every((x) => x === 1)).toBe(true);
  });

  it("names its counter count `counters`, as Deduplicator does; `bits` stays as a deprecated alias", () => {
    const keys = urls(300, "names");
    const named = new CountingBloomFilter({ counters: 4000, hashes: 5 });
    const aliased = new CountingBloomFilter({ bits: 4000, hashes: 5 });
    expect([named.counters, named.bits, aliased.counters, aliased.bits]).toEqual([4000, 4000, 4000, 4000]);
    named.addMany(keys);
    aliased.addMany(keys);
    expect(named.serialize()).toEqual(aliased.serialize());
    expect(new CountingBloomFilter({ items: 1000, fpRate: 0.01 }).counters).toBe(
      sizing.optimalBloom({ items: 1000, fpRate: 0.01 }).bits,
    );
    expect(new Deduplicator({ items: 100, counters: 4000, hashes: 5 }).filter.counters).toBe(4000);
    expect(() => new CountingBloomFilter({ counters: 4000, bits: 4000, hashes: 5 })).toThrow(
      /counters or its deprecated alias bits, not both/,
    );
    expect(() => new CountingBloomFilter({ counters: -3, hashes: 5 })).toThrow(/counters .*-3/);
  });

  it("rejects bad counter widths and bytes", () => {
    expect(() => new CountingBloomFilter({ items: 10, fpRate: 0.1, counterBits: 3 })).toThrow(InvalidArgumentError);
    expect(() => new CountingBloomFilter({ items: 10, fpRate: 0.1, counterBits: 3 })).toThrow(
      /counterBits must be 2, 4 or 8, got 3/,
    );
    const bytes = new CountingBloomFilter({ items: 10, fpRate: 0.1 }).serialize();
    const bad = bytes.slice();
    new DataView(bad.buffer).setUint32(24 + 40, 5, true);
    expect(() => CountingBloomFilter.deserialize(bad)).toThrow(FormatError);
  });
});
