// PartitionedBloomFilter: the same bits as a BloomFilter with as many partitions, writers on
// worker_threads that race on the same words without losing a bit (a property over many runs),
// serialization both ways and bad input.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import xxhashWasm from "xxhash-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BloomFilter,
  BloomWorkerPool,
  DisposedError,
  InvalidArgumentError,
  PartitionedBloomFilter,
  sizing,
} from "../build/js/index.node.js";
import { fourSigma, ready, urls } from "./helpers.js";
import { partitionOf, setBits, standardPositions } from "./reference-positions.js";

let pool: BloomWorkerPool;
beforeAll(async () => {
  await ready();
  pool = await BloomWorkerPool.start(3);
});
afterAll(() => pool.close());

const sum = (flags: Uint8Array) => flags.reduce((a, b) => a + b, 0);
const PARAMS_END = 24 + 48;

/** Keys as one buffer with spans. */
function asSpans(keys: string[]): { data: Uint8Array; spans: Uint32Array } {
  const data = new TextEncoder().encode(keys.join(""));
  const spans = new Uint32Array(2 * keys.length);
  let at = 0;
  keys.forEach((key, i) => {
    spans[2 * i] = at;
    at += key.length;
    spans[2 * i + 1] = at;
  });
  return { data, spans };
}

/** The bit payload of a serialized BloomFilter (after header and parameters, before the checksum). */
function payload(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(PARAMS_END, bytes.length - 8);
}

/** A BloomFilter with exactly `shards` partitions of bits / shards bits each. */
function reference(bits: number, hashes: number, shards: number): BloomFilter {
  return new BloomFilter({ bits, hashes, maxPartitionBytes: bits / shards / 8 });
}

/**
 * The bits an independent model of partition routing sets (reference-positions.ts: partition from
 * the hash pair, positions inside it as in one partition), as indices into the serialized payload
 * where partition p's bits start at p * bytesPerPartition.
 */
async function modelBits(
  keys: readonly string[],
  partitions: number,
  bitsPerPartition: number,
  k: number,
): Promise<number[]> {
  const { h64Raw } = await xxhashWasm();
  const bytesPerPartition = Math.ceil(Math.ceil(bitsPerPartition / 8) / 64) * 64;
  const out = new Set<number>();
  for (const key of keys) {
    const h1 = h64Raw(new TextEncoder().encode(key), 0n);
    const p = partitionOf(h1, partitions);
    for (const pos of standardPositions(h1, bitsPerPartition, k)) out.add(p * bytesPerPartition * 8 + pos);
  }
  return [...out].sort((a, b) => a - b);
}

describe("partition routing against an independent model", () => {
  it("a BloomFilter over six partitions sets exactly the modelled bits, partition by partition", async () => {
    const keys = urls(3000, "routing");
    const filter = new BloomFilter({ items: 5000, fpRate: 0.01, maxPartitionBytes: 1024 });
    expect(filter.partitions).toBe(6);
    filter.addMany(keys);
    const bits = setBits(filter.serialize().subarray(64, -8));
    expect(bits).toEqual(await modelBits(keys, filter.partitions, filter.bits / filter.partitions, filter.hashes));
    filter.dispose();
  });

  it("the partitioned golden file (format v1, must load forever) holds the modelled bits and every golden key", async () => {
    const goldenKeys = Array.from(
      { length: 1000 },
      (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`,
    );
    const bytes = new Uint8Array(readFileSync(new URL("./golden/partitioned-bloom-v1.bin", import.meta.url)));
    const filter = BloomFilter.deserialize(bytes);
    expect(filter.partitions).toBeGreaterThan(2);
    expect(sum(filter.hasMany(goldenKeys))).toBe(1000);
    expect(setBits(bytes.subarray(64, -8))).toEqual(
      await modelBits(goldenKeys, filter.partitions, filter.bits / filter.partitions, filter.hashes),
    );
    expect(filter.serialize()).toEqual(bytes);
    filter.dispose();
  });
});

describe("PartitionedBloomFilter in one thread", () => {
  it.each([1, 4, 16])("holds the same bits as a BloomFilter with %d partitions", (shards) => {
    const bits = shards * 8 * 4096;
    const shared = new PartitionedBloomFilter({ bits, hashes: 7, shards });
    const plain = reference(bits, 7, shards);
    expect(plain.partitions).toBe(shards);
    const keys = urls(20_000, `one-${shards}`);
    expect(shared.addMany(keys)).toEqual(plain.addMany(keys));
    expect(payload(shared.serialize())).toEqual(payload(plain.serialize()));
    const probe = urls(50_000, "probe");
    expect(shared.hasMany(probe)).toEqual(plain.hasMany(probe));
    expect(shared.count).toBe(plain.count);
  });

  it("sizes from a planned load like BloomFilter", () => {
    const shared = new PartitionedBloomFilter({ items: 100_000, fpRate: 0.01 });
    const plain = new BloomFilter({ items: 100_000, fpRate: 0.01 });
    expect(shared.hashes).toBe(plain.hashes);
    expect(shared.bits).toBeGreaterThanOrEqual(plain.bits);
    expect(shared.bits - plain.bits).toBeLessThan(shared.shards);
  });

  it("designedFpRate() is theory at the planned load, estimatedFpRate() follows the bits; both match 1,000,000 absent keys", () => {
    const items = 40_000;
    const filter = new PartitionedBloomFilter({ items, fpRate: 0.01, shards: 8 });
    const designed = sizing.bloomFpRate({ bits: filter.bits, hashes: filter.hashes, items });
    expect(filter.designedFpRate()).toBe(designed);
    expect(filter.estimatedFpRate()).toBe(0);
    filter.addMany(urls(items / 2, "pbf-rates"));
    // Half the plan: the design stays, the estimate is far below it (about (0.3 / 0.5)^k of it).
    expect(filter.designedFpRate()).toBe(designed);
    expect(filter.estimatedFpRate()).toBeLessThan(designed / 10);
    filter.addMany(urls(items / 2, "pbf-rates-more"));
    const absent = urls(1_000_000, "pbf-absent");
    const measured = sum(filter.hasMany(absent)) / absent.length;
    const estimated = filter.estimatedFpRate();
    expect(estimated).toBe(filter.fillRatio() ** filter.hashes);
    expect(Math.abs(measured - estimated)).toBeLessThan(fourSigma(estimated, absent.length));
    expect(Math.abs(measured - designed)).toBeLessThan(
      fourSigma(designed, absent.length, items, [{ bits: filter.bits, hashes: filter.hashes }]),
    );
    const back = PartitionedBloomFilter.deserialize(filter.serialize());
    expect(back.designedFpRate()).toBe(designed);
    expect(back.estimatedFpRate()).toBe(estimated);
    expect(new PartitionedBloomFilter({ bits: 8 * 4096, hashes: 3 }).designedFpRate()).toBeNaN();
  });

  it("round-trips through the BloomFilter format", () => {
    const shared = new PartitionedBloomFilter({ items: 10_000, fpRate: 0.001, shards: 4 });
    const keys = urls(8_000, "rt");
    shared.addMany(keys);
    const bytes = shared.serialize();
    const asBloom = BloomFilter.deserialize(bytes);
    expect(asBloom.partitions).toBe(4);
    expect(sum(asBloom.hasMany(keys))).toBe(keys.length);
    const back = PartitionedBloomFilter.deserialize(bytes);
    expect(back.serialize()).toEqual(bytes);
    expect(back.count).toBe(shared.count);
  });

  it("names bad input and refuses use after dispose", () => {
    expect(() => new PartitionedBloomFilter({ items: 10, fpRate: 0.01, shards: 0 })).toThrow(InvalidArgumentError);
    expect(() => PartitionedBloomFilter.attach({} as never)).toThrow(/handle/);
    const filter = new PartitionedBloomFilter({ items: 10, fpRate: 0.01, maxThreads: 1 });
    expect(() => PartitionedBloomFilter.attach(filter.handle())).toThrow(/slot/);
    filter.dispose();
    expect(() => filter.add("x")).toThrow(DisposedError);
    expect(() => new PartitionedBloomFilter({ bits: 2 ** 36, hashes: 3 })).toThrow(/shared WebAssembly memory/);
  });
});

describe("PartitionedBloomFilter with concurrent writers", () => {
  it("loses no key and no bit when workers race on a tiny filter (property, 25 runs)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 2_000, max: 30_000 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        async (shards, count, words, seed) => {
          // A few hundred bytes per shard: the workers hit the same words constantly.
          const bits = shards * words * 512;
          const shared = new PartitionedBloomFilter({ bits, hashes: 3, shards });
          // Overlapping ranges: a third of the keys appear in two workers' shares.
          const base = urls(count, `race-${seed}`);
          const keys = [...base, ...base.slice(0, Math.floor(count / 3))];
          const { data, spans } = asSpans(keys);
          const flags = await pool.addSpans(shared, data, spans);
          expect(flags.length).toBe(keys.length);
          expect(sum(shared.hasMany(keys))).toBe(keys.length);
          const plain = reference(bits, 3, shards);
          plain.addMany(keys);
          expect(payload(shared.serialize())).toEqual(payload(plain.serialize()));
          shared.dispose();
        },
      ),
      { numRuns: 25, seed: 5 },
    );
  });

  it("answers queries from workers as the main thread does", async () => {
    const shared = new PartitionedBloomFilter({ items: 50_000, fpRate: 0.01, shards: 8 });
    const keys = urls(50_000, "parallel");
    await pool.addMany(shared, keys);
    const probe = [...keys.slice(0, 10_000), ...urls(40_000, "absent")];
    expect(await pool.hasMany(shared, probe)).toEqual(shared.hasMany(probe));
    expect(sum(shared.hasMany(keys))).toBe(keys.length);
    expect(shared.count).toBeGreaterThan(49_000);
  });
});
