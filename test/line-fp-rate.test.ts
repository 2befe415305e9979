// The approximate line pipeline keeps its false-positive rate: after N distinct lines, M lines
// never seen before go through, and the share of them dropped (each drop is a false positive)
// stays at or under the requested rate, however the filter was sized or grew.
import { beforeAll, describe, expect, it } from "vitest";
import { LineDeduplicator, sizing } from "../build/js/index.node.js";
import { ready, urls } from "./helpers.js";

beforeAll(ready);

const PRESENT = 300_000;
const ABSENT = 300_000;

/** Share of the absent lines dropped, after the present ones (each kept once), through `dedup`. */
function droppedShare(dedup: LineDeduplicator, present: Buffer, absent: Buffer): number {
  const kept = (bytes: Uint8Array) => bytes.reduce((n, b) => n + (b === 0x0a ? 1 : 0), 0);
  expect(kept(dedup.push(present))).toBeGreaterThan(PRESENT * 0.97);
  const keptAbsent = kept(dedup.push(absent)) + kept(dedup.end());
  dedup.dispose();
  return (ABSENT - keptAbsent) / ABSENT;
}

describe("approximate line dedup: measured FP rate on lines never seen", () => {
  const present = Buffer.from(urls(PRESENT, "present").join("\n") + "\n");
  const absent = Buffer.from(urls(ABSENT, "absent").join("\n") + "\n");
  const total = present.length + absent.length;

  it.each([1e-2, 1e-3])("p = %s: grown by stages, sized from the input's size, and with items", (fpRate) => {
    const cases = {
      stages: new LineDeduplicator({ approx: true, fpRate, stageItems: 5_000 }),
      // An inputBytes that undercounts (a quarter of the input) must still keep the rate: later stages follow.
      undersized: new LineDeduplicator({ approx: true, fpRate, stageItems: 5_000, inputBytes: Math.floor(total / 4) }),
      sized: new LineDeduplicator({ approx: true, fpRate, inputBytes: total }),
      items: new LineDeduplicator({ approx: true, fpRate, items: PRESENT + ABSENT }),
    };
    for (const [name, dedup] of Object.entries(cases)) {
      const share = droppedShare(dedup, present, absent);
      expect(share, name).toBeLessThanOrEqual(fpRate);
      // Not vacuous: a filter does drop some (at p = 1e-3 with items, about a third of p on average over the fill).
      if (name === "items") expect(share, name).toBeGreaterThan(fpRate / 20);
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
    // the expected share is the formula's mean over that climb.
    let expected = 0;
    for (let i = 0; i < probes; i += 100) expected += sizing.splitBlockBloomFpRate({ bits, items: keptPresent + i }) / (probes / 100);
    expect(share).toBeGreaterThan(expected * 0.75);
    expect(share).toBeLessThan(expected * 1.25);
  });
});
