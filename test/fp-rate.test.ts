// Measured false-positive rates against theory, each on 1e6 keys never inserted.
import { beforeAll, describe, expect, it } from "vitest";
import { BlockedBloomFilter, BloomFilter, ScalableBloomFilter, sizing } from "../build/js/index.node.js";
import { ready, urls } from "./helpers.js";

const ABSENT = 1_000_000;
let absent: string[];

beforeAll(async () => {
  await ready();
  absent = urls(ABSENT, "absent");
});

const measure = (filter: { hasMany(keys: string[]): Uint8Array }) =>
  filter.hasMany(absent).reduce((a, b) => a + b, 0) / ABSENT;

const grid = [1e4, 1e5, 1e6].flatMap((items) => [1e-2, 1e-3, 1e-4].map((fpRate) => ({ items, fpRate })));

describe("FP rate within 1.5x of the target on 1e6 absent keys", () => {
  it.each(grid)("BloomFilter n=$items p=$fpRate", ({ items, fpRate }) => {
    const filter = new BloomFilter({ items, fpRate });
    filter.addMany(urls(items, "present"));
    const measured = measure(filter);
    expect(measured).toBeLessThan(1.5 * fpRate);
    expect(measured).toBeGreaterThan(fpRate / 1.5);
    // Designed: (1 - e^(-kn/m))^k at the planned load, computed here; estimated: from the fill.
    expect(filter.designedFpRate()).toBeCloseTo(
      Math.pow(1 - Math.exp((-filter.hashes * items) / filter.bits), filter.hashes),
      12,
    );
    expect(measured).toBeLessThan(1.5 * filter.estimatedFpRate());
    expect(measured).toBeGreaterThan(filter.estimatedFpRate() / 1.5);
    // The filter's bits per key are the formula's, within 1%.
    expect(filter.bits / items / (-Math.log(fpRate) / Math.LN2 ** 2)).toBeCloseTo(1, 2);
    filter.dispose();
  });

  it.each(grid)("BlockedBloomFilter n=$items p=$fpRate", ({ items, fpRate }) => {
    const filter = new BlockedBloomFilter({ items, fpRate });
    filter.addMany(urls(items, "present"));
    const measured = measure(filter);
    const predicted = sizing.blockedBloomFpRate({ bits: filter.bits, hashes: filter.hashes, items });
    expect(measured).toBeLessThan(1.5 * fpRate);
    expect(measured).toBeGreaterThan(predicted / 1.5);
    expect(filter.designedFpRate()).toBe(predicted);
    filter.dispose();
  });

  it.each([1e-2, 1e-3, 1e-4])(
    "probe-thrifty sizing (fewer probes, more bits; RedisBloomFilter's default) meets p=%s",
    (fpRate) => {
      const items = 100_000;
      const size = sizing.probeThriftyBloom({ items, fpRate });
      const least = sizing.optimalBloom({ items, fpRate });
      // Fewer probes than the minimum-memory filter, at most 1.6x its bits.
      expect(size.hashes).toBeLessThan(least.hashes);
      expect(size.bits).toBeLessThanOrEqual(1.6 * least.bits);
      // One probe fewer would need more than 1.6x: the fewest that fit.
      const fewer = (-(size.hashes - 1) * items) / Math.log(1 - Math.pow(fpRate, 1 / (size.hashes - 1)));
      expect(fewer).toBeGreaterThan(1.6 * least.bits);
      const filter = new BloomFilter({ bits: size.bits, hashes: size.hashes });
      filter.addMany(urls(items, "present"));
      const measured = measure(filter);
      expect(measured).toBeLessThan(1.5 * fpRate);
      expect(measured).toBeGreaterThan(fpRate / 1.5);
      filter.dispose();
    },
  );

  it("ScalableBloomFilter keeps its compound bound after growing 16-fold", () => {
    const fpRate = 1e-3;
    const filter = new ScalableBloomFilter({ fpRate, initialItems: 10_000 });
    filter.addMany(urls(160_000, "present"));
    expect(filter.stageCount).toBeGreaterThanOrEqual(4);
    const measured = measure(filter);
    expect(measured).toBeLessThan(1.5 * fpRate);
    expect(measured).toBeGreaterThan(0);
    expect(filter.designedFpRate()).toBe(fpRate);
    // Estimated from the stages' fill: an upper bound of what a query meets, near the measurement.
    expect(measured).toBeLessThan(1.5 * filter.estimatedFpRate());
    expect(filter.estimatedFpRate()).toBeLessThan(fpRate);
    expect(filter.compoundFpRate()).toBe(filter.estimatedFpRate()); // the deprecated name still answers
    filter.dispose();
  });
});
