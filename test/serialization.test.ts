// Format v1: round trips, golden files that must load forever, and every kind of bad bytes.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import {
  AgePartitionedFilter,
  IdfTable,
  NearDupIndex,
  simhashMany,
  MultiDimBloomFilter,
  TimeWindowFilter,
  BlockedBloomFilter,
  BloomFilter,
  ChecksumMismatchError,
  CountingBloomFilter,
  FormatError,
  ScalableBloomFilter,
  TruncatedInputError,
  UnsupportedVersionError,
} from "../build/js/index.node.js";
import { ready, urls } from "./helpers.js";

beforeAll(ready);

const goldenKeys = Array.from({ length: 1000 }, (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`);
const golden = (name: string) => new Uint8Array(readFileSync(new URL(`./golden/${name}`, import.meta.url)));

type Loadable = { deserialize(bytes: Uint8Array): { hasMany(keys: string[]): Uint8Array; serialize(): Uint8Array; count: number } };
const kinds: [string, Loadable, () => { addMany(keys: string[]): Uint8Array; serialize(): Uint8Array }][] = [
  ["BloomFilter", BloomFilter, () => new BloomFilter({ items: 5000, fpRate: 0.01 })],
  ["BlockedBloomFilter", BlockedBloomFilter, () => new BlockedBloomFilter({ items: 5000, fpRate: 0.01 })],
  ["partitioned BloomFilter", BloomFilter, () => new BloomFilter({ items: 5000, fpRate: 0.01, maxPartitionBytes: 1024 })],
  ["ScalableBloomFilter", ScalableBloomFilter, () => new ScalableBloomFilter({ fpRate: 0.01, initialItems: 1000 })],
  ["CountingBloomFilter", CountingBloomFilter, () => new CountingBloomFilter({ items: 5000, fpRate: 0.01 })],
];

describe.each(kinds)("%s", (_name, Class, make) => {
  it("round-trips: same answers, same count, identical bytes", () => {
    const filter = make();
    const keys = urls(4000, "rt");
    filter.addMany(keys);
    const bytes = filter.serialize();
    const loaded = Class.deserialize(bytes);
    expect(loaded.hasMany(keys).every((x) => x === 1)).toBe(true);
    const probes = urls(20_000, "probe");
    expect(loaded.hasMany(probes)).toEqual((filter as unknown as { hasMany(k: string[]): Uint8Array }).hasMany(probes));
    expect(loaded.serialize()).toEqual(bytes);
  });

  it("rejects every truncation with a typed error", () => {
    const bytes = make().serialize();
    for (let length = 0; length < bytes.length; length += Math.max(1, Math.floor(bytes.length / 300))) {
      expect(() => Class.deserialize(bytes.subarray(0, length)), `length ${length}`).toThrow(TruncatedInputError);
    }
    expect(() => Class.deserialize(bytes.subarray(0, bytes.length - 1))).toThrow(TruncatedInputError);
  });

  it("detects a flipped bit anywhere with a typed error", () => {
    const bytes = make().serialize();
    for (let at = 0; at < bytes.length; at += Math.max(1, Math.floor(bytes.length / 400))) {
      const bad = bytes.slice();
      bad[at] ^= 0x10;
      expect(() => Class.deserialize(bad), `byte ${at}`).toThrow(FormatError);
    }
    const payloadFlip = bytes.slice();
    payloadFlip[bytes.length - 20] ^= 1;
    expect(() => Class.deserialize(payloadFlip)).toThrow(ChecksumMismatchError);
  });
});

describe("golden files (format v1 must load forever)", () => {
  it.each([
    ["bloom-v1.bin", BloomFilter as Loadable],
    ["blocked-bloom-v1.bin", BlockedBloomFilter as Loadable],
    ["scalable-bloom-v1.bin", ScalableBloomFilter as Loadable],
    ["counting-bloom-v1.bin", CountingBloomFilter as Loadable],
    ["age-partitioned-v1.bin", AgePartitionedFilter as unknown as Loadable],
    ["multi-dim-v1.bin", MultiDimBloomFilter as unknown as Loadable],
    ["time-window-v1.bin", { deserialize: (bytes: Uint8Array) => TimeWindowFilter.deserialize(bytes, () => Date.UTC(2026, 0, 1, 12)) } as unknown as Loadable],
  ])("%s loads, answers and re-serializes to the same bytes", (name, Class) => {
    const bytes = golden(name);
    const filter = Class.deserialize(bytes);
    expect(filter.hasMany(goldenKeys).every((x) => x === 1)).toBe(true);
    const fp = filter.hasMany(urls(100_000, "golden-absent")).reduce((a, b) => a + b, 0) / 100_000;
    expect(fp).toBeLessThan(0.02);
    expect(filter.serialize()).toEqual(bytes);
  });
});

describe("golden SimHash structures (format v1 must load forever)", () => {
  it("near-dup-index-v1.bin loads, finds every golden key's fingerprint and re-serializes to the same bytes", () => {
    const bytes = golden("near-dup-index-v1.bin");
    const index = NearDupIndex.deserialize(bytes);
    const fps = simhashMany(goldenKeys, { shingle: 1 });
    const answers = index.queryMany(fps);
    answers.forEach((list, i) => expect(list.some((m) => m.id === i && m.distance === 0)).toBe(true));
    expect(index.tables).toBe(10);
    expect(index.serialize()).toEqual(bytes);
  });

  it("idf-v1.bin loads with its counts and re-serializes to the same bytes", () => {
    const bytes = golden("idf-v1.bin");
    const table = IdfTable.deserialize(bytes);
    expect(table.documents).toBe(1000);
    expect(table.serialize()).toEqual(bytes);
    expect(table.serialize()).toEqual(IdfTable.build(goldenKeys, { shingle: 1 }).serialize());
  });
});

describe("bad headers", () => {
  const bytes = () => new BloomFilter({ items: 100, fpRate: 0.01 }).serialize();

  it("names a wrong magic", () => {
    const bad = bytes();
    bad[0] = 0x50;
    expect(() => BloomFilter.deserialize(bad)).toThrow(/not a crawlsieve structure: magic 0x56495350/);
  });

  it("names an unknown format version", () => {
    const bad = bytes();
    bad[4] = 2;
    expect(() => BloomFilter.deserialize(bad)).toThrow(UnsupportedVersionError);
    expect(() => BloomFilter.deserialize(bad)).toThrow(/unsupported format version 2/);
  });

  it("refuses another kind", () => {
    const blocked = new BlockedBloomFilter({ items: 100, fpRate: 0.01 }).serialize();
    expect(() => BloomFilter.deserialize(blocked)).toThrow(/kind 2 \(BlockedBloomFilter\) where BloomFilter was expected/);
    expect(() => ScalableBloomFilter.deserialize(bytes())).toThrow(/where ScalableBloomFilter was expected/);
  });

  it("refuses trailing bytes, absurd lengths and non-bytes before allocating", () => {
    const good = bytes();
    const longer = new Uint8Array(good.length + 3);
    longer.set(good);
    expect(() => BloomFilter.deserialize(longer)).toThrow(/3 bytes after its end/);
    const huge = good.slice();
    new DataView(huge.buffer).setBigUint64(16, 1n << 60n, true);
    expect(() => BloomFilter.deserialize(huge)).toThrow(/payload length \d+ is impossible|truncated/);
    const mismatched = good.slice();
    new DataView(mismatched.buffer).setUint32(12, 36, true);
    expect(() => BloomFilter.deserialize(mismatched)).toThrow(FormatError);
    expect(() => BloomFilter.deserialize("CSIV" as never)).toThrow(/must be a Uint8Array/);
    expect(() => BloomFilter.deserialize(new Uint8Array(0))).toThrow(/expected 24 bytes, got 0/);
  });

  it("rejects parameters that contradict the payload even with a valid checksum", () => {
    // Re-sign a header whose partition count is doubled: the declared payload no longer fits.
    const good = bytes();
    const bad = good.slice();
    new DataView(bad.buffer).setUint32(24 + 8, 2, true);
    expect(() => BloomFilter.deserialize(bad)).toThrow(/payload of \d+ bytes where 2 x \d+ were declared/);
  });
});
