// Forged serialized bytes (valid checksum, parameters that lie): a typed FormatError before any
// memory is reserved for what the parameters claim; and a disposed filter stays disposed.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  Deduplicator,
  DisposedError,
  FormatError,
  MultiDimBloomFilter,
  ScalableBloomFilter,
  TimeWindowFilter,
} from "../build/js/index.node.js";
import { ready, resigner, urls } from "./helpers.js";

let resign: Awaited<ReturnType<typeof resigner>>;
beforeAll(async () => {
  await ready();
  resign = await resigner();
});

const HEADER = 24;

/** Rewrites parameters through `edit` and recomputes the trailing checksum, as a forger would. */
function forge(bytes: Uint8Array, edit: (params: DataView) => void): Uint8Array {
  const out = bytes.slice();
  edit(new DataView(out.buffer, HEADER, new DataView(out.buffer).getUint32(12, true)));
  return resign(out);
}

// Every WebAssembly memory growth in this process is counted while a load runs.
const grow = WebAssembly.Memory.prototype.grow;
let grown = 0;
WebAssembly.Memory.prototype.grow = function (pages: number) {
  grown += pages * 65536;
  return grow.call(this, pages);
};
afterEach(() => {
  grown = 0;
});

/** Bytes of WebAssembly memory reserved while `load` ran and threw a FormatError. */
function reservedWhileRefusing(load: () => unknown): number {
  grown = 0;
  expect(load).toThrow(FormatError);
  return grown;
}

// One structure's own staging region is allowed (a few MiB); the claimed sizes are 100x that and more.
const ALLOWANCE = 8 * 2 ** 20;

describe("forged parameters are refused before memory is reserved for them", () => {
  it("TimeWindowFilter: slices far larger than the payload holds", () => {
    const window = new TimeWindowFilter({
      granularity: "day",
      slices: 2,
      itemsPerSlice: 100,
      fpRate: 0.01,
      now: () => 0,
    });
    window.seenMany(urls(50, "w"));
    const bytes = window.serialize();
    // 1e9 items per slice: 1.2 GB a slice, a size the window could really have.
    const forged = forge(bytes, (p) => p.setBigUint64(8, 10n ** 9n, true));
    expect(reservedWhileRefusing(() => TimeWindowFilter.deserialize(forged))).toBeLessThan(ALLOWANCE);
    expect(() => TimeWindowFilter.deserialize(forged)).toThrow(
      /slice 0 is 1 x 959 bits with 7 hashes where the window's parameters make 1 x 9585058378 bits with 7 hashes/,
    );
    // Past the in-process limit: refused by the same path, by name.
    const huge = forge(bytes, (p) => p.setBigUint64(8, 10n ** 12n, true));
    expect(reservedWhileRefusing(() => TimeWindowFilter.deserialize(huge))).toBeLessThan(ALLOWANCE);
  });

  it("MultiDimBloomFilter: 2 GiB of groups declared by a 144-byte file", () => {
    const bytes = new MultiDimBloomFilter({ groups: 1, bits: 64, hashes: 2 }).serialize();
    const forged = forge(bytes, (p) => {
      p.setUint32(0, 4096, true);
      p.setBigUint64(8, 2n ** 22n - 64n, true); // with the stored 32 second bits: just under 2^34 bits
    });
    expect(forged.length).toBeLessThan(200);
    expect(reservedWhileRefusing(() => MultiDimBloomFilter.deserialize(forged))).toBeLessThan(ALLOWANCE);
  });

  // Issue 30 item 14, issue 48: the counting filter in front of a Deduplicator's table is not
  // stored (it is rebuilt from the entries), so the payload cannot confirm `counters`: 124 bytes
  // claiming 2^32 counters reserved 2 GiB (4-bit) or were refused as past a memory (8-bit). A load
  // now rebuilds at most 64 bytes of filter a payload byte (4 MiB at least); answers are unchanged.
  it("Deduplicator: 124 bytes claiming 2^32 counters reserve a few MiB, and the set loaded answers exactly", () => {
    const three = new Deduplicator({ items: 10 });
    three.checkMany(["x", "y", "z"]);
    const bytes = three.serialize();
    expect(bytes.length).toBe(124);
    const claim = (bits: number) =>
      forge(bytes, (p) => {
        p.setUint32(4, bits, true);
        p.setFloat64(16, 2 ** 32, true);
      });
    for (const bits of [4, 8]) {
      grown = 0;
      const loaded = Deduplicator.deserialize(claim(bits));
      expect(grown).toBeLessThan(ALLOWANCE);
      // 4 MiB of counters at most, whatever the claim.
      expect(loaded.filter.counters * bits).toBeLessThanOrEqual(8 * 4 * 2 ** 20);
      expect(Array.from(loaded.hasMany(["x", "y", "z", "a"]))).toEqual([1, 1, 1, 0]);
      expect(loaded.checkMany(["a", "a", "x"]).isNew).toEqual(Uint8Array.of(1, 0, 0));
      loaded.dispose();
    }
    expect(() => Deduplicator.deserialize(forge(bytes, (p) => p.setFloat64(16, 2 ** 32 + 1, true)))).toThrow(
      /counters must be an integer from 1 to 2\^32, got 4294967297/,
    );
    // A plan the floor holds loads whole: 10^5 keys at 1% are 958,506 counters (about 0.5 MB).
    const planned = new Deduplicator({ items: 1e5 });
    planned.checkMany(["x"]);
    expect(Deduplicator.deserialize(planned.serialize()).filter).toEqual(planned.filter);
  });

  it("ScalableBloomFilter and TimeWindowFilter: a parameter the constructor refuses is a FormatError, not an InvalidArgumentError", () => {
    const scalable = new ScalableBloomFilter({ fpRate: 0.01, initialItems: 100 });
    scalable.addMany(urls(300, "s"));
    expect(() => ScalableBloomFilter.deserialize(forge(scalable.serialize(), (p) => p.setFloat64(0, 2, true)))).toThrow(
      /parameters do not describe a scalable filter: fpRate must be/,
    );
    const window = new TimeWindowFilter({
      granularity: "hour",
      slices: 3,
      itemsPerSlice: 100,
      fpRate: 0.01,
      now: () => 0,
    });
    expect(() => TimeWindowFilter.deserialize(forge(window.serialize(), (p) => p.setFloat64(16, 2, true)))).toThrow(
      /parameters do not describe a time window: fpRate must be/,
    );
  });

  it("ScalableBloomFilter: stages that do not follow the stored plan", () => {
    const scalable = new ScalableBloomFilter({ fpRate: 0.01, initialItems: 100 });
    scalable.addMany(urls(300, "s"));
    const forged = forge(scalable.serialize(), (p) => p.setBigUint64(8, 10n ** 9n, true));
    expect(() => ScalableBloomFilter.deserialize(forged)).toThrow(
      /stage 0 was planned for 100 items at 0.005 where the parameters give 1000000000 at 0.005/,
    );
  });
});

describe("a disposed ScalableBloomFilter", () => {
  it("throws DisposedError instead of acting as a new empty filter", () => {
    const filter = new ScalableBloomFilter({ fpRate: 0.01 });
    filter.add("kept");
    filter.dispose();
    expect(() => filter.add("kept")).toThrow(DisposedError);
    expect(() => filter.has("kept")).toThrow(DisposedError);
    expect(() => filter.addMany(["kept"])).toThrow(DisposedError);
    expect(() => filter.hasMany(["kept"])).toThrow(DisposedError);
    expect(() => filter.serialize()).toThrow(DisposedError);
    expect(() => filter.count).toThrow(DisposedError);
  });
});
