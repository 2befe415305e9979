// The approximate line pipeline keeps its false-positive rate: after N distinct lines, M lines
// never seen before go through, and the share of them dropped (each drop is a false positive)
// stays at or under the requested rate, however the filter was sized or grew.
import { beforeAll, describe, expect, it } from "vitest";
import { LineDeduplicator, sizing } from "../build/js/index.node.js";
import { internalOptions } from "./support/line-internals.js";
import { ready, urls } from "./helpers.js";

beforeAll(ready);

const PRESENT = 300_000;
const ABSENT = 300_000;

/**
 * The false-positive rate of a split-block filter from its documented layout alone (not from
 * crawlsieve's sizing code): `blocks` blocks of sixteen 32-bit words; a key picks one block and
 * sets one bit in each word. With j keys in the block a word's bit is set with probability
 * 1 - (31/32)^j, so a key never added passes all sixteen words with that to the 16th; j is
 * Poisson with mean keys / blocks.
 */
function splitBlockRate(blocks: number, keys: number): number {
  const mean = keys / blocks;
  let term = Math.exp(-mean);
  let rate = 0;
  for (let j = 0; j < mean * 4 + 200; j++) {
    rate += term * (1 - (31 / 32) ** j) ** 16;
    term *= mean / (j + 1);
  }
  return rate;
}

/** The expected drop share while `probes` lines never seen go in after `start` keys: the rate's mean over that climb. */
function climbRate(blocks: number, start: number, probes: number): number {
  const steps = 100;
  let sum = 0;
  for (let i = 0; i < steps; i++) sum += splitBlockRate(blocks, start + ((i + 0.5) / steps) * probes);
  return sum / steps;
}

/** Share of the absent lines dropped, after the present ones (each kept once), through `dedup`. */
function droppedShare(dedup: LineDeduplicator, present: Buffer, absent: Buffer): { share: number; expected?: number } {
  const kept = (bytes: Uint8Array) => bytes.reduce((n, b) => n + (b === 0x0a ? 1 : 0), 0);
  const keptPresent = kept(dedup.push(present));
  expect(keptPresent).toBeGreaterThan(PRESENT * 0.97);
  // One filter stage: its bytes give the expectation from first principles (several stages do not).
  const shape = dedup.describe() as { stages: number; filterBytes: number };
  const expected = shape.stages === 1 ? climbRate(shape.filterBytes / 64, keptPresent, ABSENT) : undefined;
  const keptAbsent = kept(dedup.push(absent)) + kept(dedup.end());
  dedup.dispose();
  return { share: (ABSENT - keptAbsent) / ABSENT, expected };
}

describe("approximate line dedup: measured FP rate on lines never seen", () => {
  const present = Buffer.from(urls(PRESENT, "present").join("\n") + "\n");
  const absent = Buffer.from(urls(ABSENT, "absent").join("\n") + "\n");
  const total = present.length + absent.length;

  it.each([1e-2, 1e-3])("p = %s: grown by stages, sized from the input's size, and with items", (fpRate) => {
    const cases = {
      stages: new LineDeduplicator(internalOptions({ approx: true, fpRate, stageItems: 5_000 })),
      // An inputBytes that undercounts (a quarter of the input) must still keep the rate: later stages follow.
      undersized: new LineDeduplicator(
        internalOptions({ approx: true, fpRate, stageItems: 5_000, inputBytes: Math.floor(total / 4) }),
      ),
      sized: new LineDeduplicator({ approx: true, fpRate, inputBytes: total }),
      items: new LineDeduplicator({ approx: true, fpRate, items: PRESENT + ABSENT }),
    };
    for (const [name, dedup] of Object.entries(cases)) {
      const { share, expected } = droppedShare(dedup, present, absent);
      expect(share, name).toBeLessThanOrEqual(fpRate);
      // Sized from items or from the whole input's bytes: one filter, whose rate over the fill is
      // known from its layout; a 2x regression (or a filter twice too large) falls outside.
      // (Where at least 50 drops are expected, so the bounds are several standard deviations wide.)
      if (name === "items" || name === "sized") {
        expect(expected, `${name}: one filter stage`).toBeDefined();
        if (expected! * ABSENT < 50) continue;
        expect(share, name).toBeGreaterThan(expected! * 0.7);
        expect(share, name).toBeLessThan(expected! * 1.4);
      }
    }
  });

  it("a split-block filter at its planned load drops what its sizing formula predicts", () => {
    // The filter that `items` sizes is a split-block filter (sixteen bits a key, one per 32-bit
    // word). 200,000 present lines fill it to its plan; 20,000 lines never seen then raise the
    // load by at most 10%, so their drop share must match the formula at that load, not just stay
    // under p: this checks both the formula and the independence of the in-block bits.
    const items = 200_000;
    const fpRate = 0.01;
    const dedup = new LineDeduplicator({ approx: true, fpRate, items });
    const lines = (bytes: Uint8Array) => bytes.reduce((n, b) => n + (b === 0x0a ? 1 : 0), 0);
    const probes = 20_000;
    const keptPresent = lines(dedup.push(Buffer.from(urls(items, "split-present").join("\n") + "\n")));
    expect(keptPresent).toBeGreaterThan(items * 0.98);
    const keptAbsent = lines(dedup.push(Buffer.from(urls(probes, "split-absent").join("\n") + "\n")));
    dedup.dispose();
    const share = (probes - keptAbsent) / probes;
    const { bits } = sizing.optimalSplitBlockBloom({ items, fpRate });
    // Each line never seen is set once tested, so the load climbs from keptPresent by one a probe:
    // the expected share is the layout's rate averaged over that climb, computed here from first
    // principles, and crawlsieve's own formula must agree with it.
    const expected = climbRate(bits / 512, keptPresent, probes);
    expect(share).toBeGreaterThan(expected * 0.75);
    expect(share).toBeLessThan(expected * 1.25);
    expect(
      sizing.splitBlockBloomFpRate({ bits, items: keptPresent + probes / 2 }) /
        splitBlockRate(bits / 512, keptPresent + probes / 2),
    ).toBeCloseTo(1, 2);
  });
});
