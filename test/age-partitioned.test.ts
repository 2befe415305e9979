// AgePartitionedFilter: the FP rate at full load against the formula on a million absent keys,
// the retention guarantee (counting and interval mode), idle gaps, clocks going backwards,
// serialization and bad input.
import { beforeAll, describe, expect, it } from "vitest";
import {
  AgePartitionedFilter,
  ChecksumMismatchError,
  FormatError,
  InvalidArgumentError,
  sizing,
  TruncatedInputError,
} from "../build/js/index.node.js";
import { ready, rng, urls } from "./helpers.js";

beforeAll(ready);

const sum = (flags: Uint8Array) => flags.reduce((a, b) => a + b, 0);
const HOUR = 3_600_000;

describe("age-partitioned sizing", () => {
  it("matches a direct Monte Carlo of independent slices", () => {
    // Slices answer 1 independently with the occupancy the formula assumes; count runs of k.
    const shape = { hashes: 4, slack: 3, generation: 200, sliceBits: 1200 };
    const k = shape.hashes;
    const fills = Array.from(
      { length: 7 },
      (_, age) => -Math.expm1((-shape.generation * Math.min(age + 1, k)) / shape.sliceBits),
    );
    const random = rng(7);
    let positives = 0;
    const trials = 400_000;
    for (let t = 0; t < trials; t++) {
      let run = 0;
      let hit = false;
      for (const fill of fills) {
        run = random() < fill ? run + 1 : 0;
        if (run === k) {
          hit = true;
          break;
        }
      }
      if (hit) positives++;
    }
    const formula = sizing.agePartitionedFpRate(shape);
    expect(Math.abs(positives / trials - formula)).toBeLessThan(4 * Math.sqrt(formula / trials) + 1e-4);
  });

  it("finds the least memory meeting the rate, with the window it promises", () => {
    const size = sizing.optimalAgePartitioned({ items: 100_000, fpRate: 0.01 });
    expect(size.fpRate).toBeLessThanOrEqual(0.01);
    expect(sizing.agePartitionedFpRate({ ...size, sliceBits: size.sliceBits - 1 })).toBeGreaterThan(0.01);
    expect(size.retainsAtLeast).toBeGreaterThanOrEqual(100_000);
    expect(size.retainsAtMost).toBe((size.slack + 1) * size.generation);
    const slack30 = sizing.optimalAgePartitioned({ items: 100_000, fpRate: 0.01, slack: 30 });
    expect(slack30.retainsAtMost / slack30.retainsAtLeast).toBeLessThan(size.retainsAtMost / size.retainsAtLeast);
  });
});

describe("AgePartitionedFilter by count", () => {
  it.each([
    [100_000, 0.01],
    [20_000, 0.001],
  ])("FP at full load on 1e6 absent keys is within 1.5x of the formula (window %d, p = %d)", (items, fpRate) => {
    const filter = new AgePartitionedFilter({ items, fpRate });
    const { hashes, slack, generation } = filter.size;
    // Steady state: every slice has passed through the k insert positions; the current generation is one short of full.
    const keys = urls((hashes + slack + 1) * generation - 1, `apbf-${items}`);
    filter.addMany(keys);
    const positives = sum(filter.hasMany(urls(1_000_000, "absent")));
    const expected = sizing.agePartitionedFpRate(filter.size);
    expect(positives / 1e6).toBeLessThan(1.5 * expected);
    expect(positives / 1e6).toBeGreaterThan(expected / 1.5);
    filter.dispose();
  });

  it("designedFpRate() and estimatedFpRate() match the rate measured on 400,000 absent keys, at full load and after two shifts", () => {
    const filter = new AgePartitionedFilter({ items: 50_000, fpRate: 0.01 });
    const { hashes, slack, generation } = filter.size;
    filter.addMany(urls((hashes + slack + 1) * generation - 1, "apbf-rates"));
    const absent = urls(400_000, "absent-rates");
    const measured = () => sum(filter.hasMany(absent)) / absent.length;
    // The reference is the measured rate; a rate p measured on N keys has binomial sigma sqrt(p (1 - p) / N).
    const sigma = (p: number) => Math.sqrt((p * (1 - p)) / absent.length);
    const full = measured();
    expect(filter.designedFpRate()).toBe(filter.size.fpRate);
    expect(Math.abs(full - filter.designedFpRate())).toBeLessThan(4 * sigma(filter.designedFpRate()));
    expect(Math.abs(full - filter.estimatedFpRate())).toBeLessThan(4 * sigma(filter.estimatedFpRate()));
    // Two forced shifts empty the two newest slices: the rate falls well outside the noise, the
    // design stays what it was, and the estimate follows the bits.
    filter.shift();
    filter.shift();
    const shifted = measured();
    expect(shifted).toBeLessThan(full - 8 * sigma(full));
    expect(filter.designedFpRate()).toBe(filter.size.fpRate);
    expect(Math.abs(shifted - filter.estimatedFpRate())).toBeLessThan(4 * sigma(filter.estimatedFpRate()));
    // More generations, until the ring's newest slice lies in the middle of its storage (full load
    // left it at slice 0, the shifts at the end): the estimate must follow the ages, not the storage.
    filter.addMany(urls((filter.slices / 2 - 2) * generation - 1, "apbf-rates-more"));
    expect(Math.abs(measured() - filter.estimatedFpRate())).toBeLessThan(4 * sigma(filter.estimatedFpRate()));
    filter.dispose();
  });

  it("never forgets one of the last l*g inserts, and forgets keys whose slices are all gone", () => {
    const filter = new AgePartitionedFilter({ items: 5_000, fpRate: 0.001 });
    const { hashes, slack, generation, retainsAtLeast } = filter.size;
    const keys = urls((hashes + slack + 8) * generation, "stream");
    const step = Math.ceil(generation / 5);
    for (let i = 0; i < keys.length; i += step) {
      filter.addMany(keys.slice(i, i + step));
      const end = Math.min(keys.length, i + step);
      const window = keys.slice(Math.max(0, end - retainsAtLeast), end);
      expect(sum(filter.hasMany(window)), `after ${end} inserts`).toBe(window.length);
    }
    // Keys older than (k + l) generations have no bit left: they answer like absent keys.
    const gone = keys.slice(0, keys.length - (hashes + slack + 1) * generation);
    expect(gone.length).toBeGreaterThan(1000);
    expect(sum(filter.hasMany(gone)) / gone.length).toBeLessThan(
      1.5 * sizing.agePartitionedFpRate(filter.size) + 3 / gone.length,
    );
  });

  it("seen() inserts only absent keys and reports repeats inside a batch", () => {
    const filter = new AgePartitionedFilter({ items: 1_000, fpRate: 1e-6 });
    expect(Array.from(filter.seenMany(["a", "b", "a", "c", "b"]))).toEqual([0, 0, 1, 0, 1]);
    expect(filter.seen("a")).toBe(true);
    expect(filter.seen("d")).toBe(false);
    expect(filter.add("d")).toBe(false);
    expect(filter.add("e")).toBe(true);
  });
});

describe("AgePartitionedFilter by interval", () => {
  it("keeps a key through l interval boundaries and drops it after k + l, idle or not", () => {
    let clock = Date.UTC(2026, 5, 1, 10, 30);
    const filter = new AgePartitionedFilter({
      items: 1_000,
      fpRate: 1e-4,
      slack: 24,
      interval: "hour",
      now: () => clock,
    });
    const { hashes, slack } = filter.size;
    const keys = urls(500, "hourly");
    expect(sum(filter.seenMany(keys))).toBe(0);
    for (let h = 0; h <= slack; h++) {
      clock = Date.UTC(2026, 5, 1, 10 + h, 59);
      expect(sum(filter.hasMany(keys)), `hour +${h}`).toBe(keys.length);
    }
    // One boundary later the oldest of each key's k slices is gone: at most false positives remain.
    clock = Date.UTC(2026, 5, 1, 11 + slack, 0);
    expect(sum(filter.hasMany(keys))).toBeLessThan(keys.length * 0.05);
    // A filter idle for a month: every slice has been cleared, exactly nothing remains.
    clock = Date.UTC(2026, 6, 1);
    expect(sum(filter.hasMany(keys))).toBe(0);
    expect(hashes + slack).toBeLessThan(30 * 24);
  });

  it("treats a clock that goes backwards as the latest interval seen", () => {
    let clock = Date.UTC(2026, 0, 10);
    const filter = new AgePartitionedFilter({
      items: 1_000,
      fpRate: 1e-4,
      slack: 3,
      interval: "day",
      now: () => clock,
    });
    filter.seenMany(["x", "y"]);
    clock -= 40 * 86_400_000;
    expect(filter.has("x")).toBe(true);
    expect(filter.seen("z")).toBe(false);
    clock = Date.UTC(2026, 0, 10) + 3 * 86_400_000;
    expect(Array.from(filter.hasMany(["x", "y", "z"]))).toEqual([1, 1, 1]);
    expect(filter.has("z", Date.UTC(2026, 0, 10) + 60 * 86_400_000)).toBe(false);
  });
});

describe("AgePartitionedFilter serialization and errors", () => {
  it("round-trips mid-generation and keeps shifting where it left off", () => {
    const a = new AgePartitionedFilter({ items: 2_000, fpRate: 0.01 });
    a.addMany(urls(3_333, "rt"));
    const bytes = a.serialize();
    const b = AgePartitionedFilter.deserialize(bytes);
    expect(b.serialize()).toEqual(bytes);
    const more = urls(1_500, "more");
    expect(b.addMany(more)).toEqual(a.addMany(more));
    const probe = urls(20_000, "probe");
    expect(b.hasMany(probe)).toEqual(a.hasMany(probe));
  });

  it("round-trips an interval filter with its granule", () => {
    let clock = Date.UTC(2026, 2, 3, 4);
    const a = new AgePartitionedFilter({ items: 500, fpRate: 0.01, slack: 5, interval: "hour", now: () => clock });
    a.seenMany(urls(300, "iv"));
    const b = AgePartitionedFilter.deserialize(a.serialize(), () => clock);
    clock += 5 * HOUR;
    expect(b.hasMany(urls(300, "iv"))).toEqual(a.hasMany(urls(300, "iv")));
    expect(b.interval).toBe("hour");
  });

  it("refuses corrupted, truncated and inconsistent bytes", () => {
    const bytes = new AgePartitionedFilter({ items: 500, fpRate: 0.01 }).serialize();
    const flipped = bytes.slice();
    flipped[flipped.length - 20] ^= 1;
    expect(() => AgePartitionedFilter.deserialize(flipped)).toThrow(ChecksumMismatchError);
    expect(() => AgePartitionedFilter.deserialize(bytes.subarray(0, bytes.length - 1))).toThrow(TruncatedInputError);
    const badSlices = bytes.slice();
    new DataView(badSlices.buffer).setBigUint64(24 + 16, 12345n, true);
    expect(() => AgePartitionedFilter.deserialize(badSlices)).toThrow(FormatError);
  });

  it("names bad parameters", () => {
    expect(() => new AgePartitionedFilter({ items: 0, fpRate: 0.01 })).toThrow(InvalidArgumentError);
    expect(() => new AgePartitionedFilter({ items: 10, fpRate: 1 })).toThrow(/fpRate/);
    expect(() => new AgePartitionedFilter({ items: 10, fpRate: 0.1, interval: "hour" })).toThrow(/slack/);
    expect(() => new AgePartitionedFilter({ items: 10, fpRate: 0.1, interval: "week" as never, slack: 2 })).toThrow(
      InvalidArgumentError,
    );
    expect(() => new AgePartitionedFilter({ items: 10, fpRate: 0.1 }).has("x", 5)).toThrow(/now/);
  });
});
