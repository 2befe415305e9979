// Exact dedup (IMP-CB) against a plain Map of the same keys: never a wrong answer, through table
// growth, removals and saturated counters.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { Deduplicator, DisposedError, FormatError, InvalidArgumentError } from "../build/js/index.node.js";
import { ready, resealed, rng, urls } from "./helpers.js";

beforeAll(ready);

/** Runs keys through a Map: whether each is new and its reference count after it. */
function reference(keys: readonly string[], refs = new Map<string, number>()) {
  return keys.map((key) => {
    const count = (refs.get(key) ?? 0) + 1;
    refs.set(key, count);
    return { isNew: count === 1, count };
  });
}

describe("Deduplicator", () => {
  it("equals a Map on random keys with repeats, in batches and one at a time (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("a", "b", "https://x/")), { maxLength: 400 }),
        fc.integer({ min: 1, max: 500 }),
        (keys, items) => {
          const dedup = new Dedup(items);
          const expected = reference(keys);
          const got = dedup.checkMany(keys);
          expect(Array.from(got.isNew)).toEqual(expected.map((e) => (e.isNew ? 1 : 0)));
          expect(Array.from(got.counts)).toEqual(expected.map((e) => e.count));
          const single = new Dedup(items);
          keys.forEach((key, i) => expect(single.check(key)).toEqual(expected[i]));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("stays exact far past its planned size (the table grows; look-ups rise, answers do not change)", () => {
    const next = rng(21);
    const keys = Array.from({ length: 200_000 }, () => `https://site.example/${Math.floor(next() * 60_000)}`);
    const dedup = new Deduplicator({ items: 1000 });
    const got = dedup.checkMany(keys);
    const expected = reference(keys);
    expect(got.isNew).toEqual(Uint8Array.from(expected, (e) => (e.isNew ? 1 : 0)));
    expect(dedup.size).toBe(new Set(keys).size);
    const stats = dedup.stats;
    expect(stats.seen).toBe(200_000);
    expect(stats.new).toBe(dedup.size);
    expect(stats.lookups + stats.lookupsAvoided).toBe(200_000);
  });

  it("skips the table for new keys at its planned size (look-ups avoided ~ 1 - fpRate)", () => {
    const dedup = new Deduplicator({ items: 100_000, fpRate: 0.01 });
    dedup.checkMany(urls(100_000, "fresh"));
    const { lookups, lookupsAvoided } = dedup.stats;
    // Every key is new: a look-up happens only for a false "maybe" of the counting filter.
    expect(lookupsAvoided / 100_000).toBeGreaterThan(0.985);
    expect(lookups).toBeLessThan(1500);
  });

  it("after 1e5 random checks and removes with saturating counters, answers equal the Map's", () => {
    const next = rng(5);
    const pool = urls(400, "sat");
    // 128 two-bit counters for 400 keys: nearly every counter saturates.
    const dedup = new Deduplicator({ items: 400, counters: 128, hashes: 3, counterBits: 2 });
    const refs = new Map<string, number>();
    for (let op = 0; op < 100_000; op++) {
      const key = pool[Math.floor(next() * pool.length)];
      const held = refs.get(key) ?? 0;
      if (held > 0 && next() < 0.5) {
        expect(dedup.remove(key)).toEqual({ removed: true, count: held - 1 });
        if (held === 1) refs.delete(key);
        else refs.set(key, held - 1);
      } else {
        expect(dedup.check(key)).toEqual({ isNew: held === 0, count: held + 1 });
        refs.set(key, held + 1);
      }
    }
    expect(dedup.size).toBe(refs.size);
    const final = dedup.checkMany(pool);
    pool.forEach((key, i) => expect(final.isNew[i], key).toBe(refs.has(key) ? 0 : 1));
  });

  it("gives the same answers with xxh64x2 fingerprints", () => {
    const next = rng(3);
    const keys = Array.from({ length: 50_000 }, () => `k${Math.floor(next() * 20_000)}`);
    const got = new Deduplicator({ items: 5000, fingerprint: "xxh64x2" }).checkMany(keys);
    expect(got.isNew).toEqual(Uint8Array.from(reference(keys), (e) => (e.isNew ? 1 : 0)));
    expect(() => new Deduplicator({ items: 5, fingerprint: "sha256" as never })).toThrow(
      /fingerprint must be "md5" or "xxh64x2"/,
    );
  });

  it("removes only what it holds", () => {
    const dedup = new Deduplicator({ items: 100 });
    expect(dedup.remove("never")).toEqual({ removed: false, count: 0 });
    dedup.checkMany(["a", "a", "b"]);
    expect(dedup.removeMany(["a", "b", "c"])).toEqual({
      removed: Uint8Array.of(1, 1, 0),
      counts: Uint32Array.of(1, 0, 0),
    });
    expect(dedup.check("b")).toEqual({ isNew: true, count: 1 });
    expect(dedup.check("a")).toEqual({ isNew: false, count: 2 });
  });

  it("removes only what its table holds, even where its counting filter says maybe: no key lost (the checked remove)", () => {
    // A filter planned for 50 keys holding 400 answers "maybe" for most absent keys; a plain
    // CountingBloomFilter.remove of those would lower the counters of keys that are present.
    const dedup = new Deduplicator({ items: 50, fpRate: 0.2 });
    const present = urls(400, "kept");
    dedup.checkMany(present);
    const absent = urls(5_000, "never-added");
    expect(dedup.removeMany(absent).removed.reduce((a, b) => a + b, 0)).toBe(0);
    expect(dedup.checkMany(present).isNew.reduce((a, b) => a + b, 0)).toBe(0);
  });

  it("checks byte spans like the same keys as strings", () => {
    const text = new TextEncoder().encode("x\ny\nx\n");
    const spans = [0, 1, 2, 3, 4, 5];
    expect(Array.from(new Deduplicator({ items: 10 }).checkSpans(text, spans).isNew)).toEqual([1, 1, 0]);
  });

  it("rejects bad options and use after dispose", () => {
    expect(() => new Deduplicator({ items: 0 })).toThrow(InvalidArgumentError);
    expect(() => new Deduplicator({ items: 10, counterBits: 3 })).toThrow(/counterBits must be 2, 4 or 8/);
    expect(() => new Deduplicator({ items: 10, fpRate: 2 })).toThrow(/fpRate/);
    const dedup = new Deduplicator({ items: 10 });
    dedup.dispose();
    expect(() => dedup.check("a")).toThrow(DisposedError);
  });
});

// A small alias keeps the property readable.
class Dedup extends Deduplicator {
  constructor(items: number) {
    super({ items });
  }
}

describe("Deduplicator.hasMany and serialize", () => {
  it("hasMany answers as the Map's keys do and changes nothing", () => {
    const next = rng(9);
    const keys = Array.from({ length: 20_000 }, () => `https://h.example/${Math.floor(next() * 8000)}`);
    const dedup = new Deduplicator({ items: 500 });
    dedup.checkMany(keys);
    const probe = Array.from({ length: 10_000 }, (_, i) => `https://h.example/${i}`);
    const stored = new Set(keys);
    const before = dedup.stats;
    expect(Array.from(dedup.hasMany(probe))).toEqual(probe.map((k) => (stored.has(k) ? 1 : 0)));
    expect(dedup.stats).toEqual(before);
    expect(dedup.size).toBe(stored.size);
  });

  it.each(["md5", "xxh64x2"] as const)(
    "round-trips keys and reference counts (%s), and stays exact afterwards",
    (fingerprint) => {
      const next = rng(13);
      const keys = Array.from({ length: 30_000 }, () => `https://r.example/${Math.floor(next() * 9000)}`);
      const dedup = new Deduplicator({ items: 100, fingerprint });
      dedup.checkMany(keys);
      const back = Deduplicator.deserialize(dedup.serialize());
      const counts = reference(keys);
      const last = new Map(keys.map((k, i) => [k, counts[i].count]));
      expect(back.size).toBe(last.size);
      expect(back.filter).toEqual(dedup.filter);
      // One more reference to each: the count continues from the stored one.
      const distinct = [...last.keys()];
      expect(Array.from(back.checkMany(distinct).counts)).toEqual(distinct.map((k) => last.get(k)! + 1));
      expect(back.stats.new).toBe(0);
      expect(back.checkMany(["never-seen"]).isNew[0]).toBe(1);
      expect(back.remove(distinct[0]).count).toBe(last.get(distinct[0]));
    },
  );

  it("refuses bytes that repeat a fingerprint, lose a count or name an unknown scheme, with a FormatError", async () => {
    const dedup = new Deduplicator({ items: 10 });
    dedup.checkMany(["a", "b"]);
    const bytes = dedup.serialize();
    const payload = 24 + 32;
    // Re-sealed with a valid checksum, so only the parameter and entry checks can refuse them.
    const forge = (edit: (b: Uint8Array) => void) => {
      const copy = bytes.slice();
      edit(copy);
      return resealed(copy);
    };
    expect(() => Deduplicator.deserialize(bytes)).not.toThrow();
    const repeated = await forge((b) => b.copyWithin(payload + 20, payload, payload + 20));
    expect(() => Deduplicator.deserialize(repeated)).toThrow(/repeats/);
    const uncounted = await forge((b) => b.fill(0, payload + 16, payload + 20));
    expect(() => Deduplicator.deserialize(uncounted)).toThrow(/no reference/);
    const scheme = await forge((b) => (b[24] = 9));
    expect(() => Deduplicator.deserialize(scheme)).toThrow(/scheme 9/);
    const entries = await forge((b) => new DataView(b.buffer).setFloat64(24 + 24, 3, true));
    expect(() => Deduplicator.deserialize(entries)).toThrow(FormatError);
    const bits = await forge((b) => (b[24 + 4] = 3));
    expect(() => Deduplicator.deserialize(bits)).toThrow(FormatError);
    expect(() => Deduplicator.deserialize(bytes.subarray(0, 40))).toThrow(FormatError);
  });
});
