// The exact in-memory set behind openSeenSet, against a JavaScript Set of the same keys: adds,
// look-ups and removals in any order, through growth from the smallest table; its memory per key;
// its bytes round-trip and refuse damage.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { FingerprintSet, FormatError, DisposedError, InvalidArgumentError, xxh128 } from "../build/js/index.node.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

type Op = { op: "add" | "has" | "remove"; keys: string[] };

/** Runs one operation on a JavaScript Set: the flags the set should answer. */
function reference(set: Set<string>, { op, keys }: Op): number[] {
  return keys.map((key) => {
    if (op === "has") return set.has(key) ? 1 : 0;
    if (op === "add") {
      if (set.has(key)) return 0;
      set.add(key);
      return 1;
    }
    return set.delete(key) ? 1 : 0;
  });
}

describe("FingerprintSet", () => {
  it("answers as a Set does for random adds, look-ups and removals, through growth (property)", () => {
    const key = fc.oneof(
      fc.integer({ min: 0, max: 3000 }).map((i) => `https://a.example/${i}`),
      fc.string({ maxLength: 4 }),
    );
    const op = fc.record({
      op: fc.constantFrom("add" as const, "add" as const, "has" as const, "remove" as const),
      keys: fc.array(key, { maxLength: 600 }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 12 }), (ops) => {
        const set = new FingerprintSet({ items: 1 });
        const ref = new Set<string>();
        for (const o of ops) {
          const got =
            o.op === "add" ? set.addMany(o.keys) : o.op === "has" ? set.hasMany(o.keys) : set.removeMany(o.keys);
          expect(Array.from(got)).toEqual(reference(ref, o));
          expect(set.size).toBe(ref.size);
        }
        set.dispose();
      }),
      { numRuns: 60 },
    );
  });

  it("keeps every key through many growths and removes half of them exactly", () => {
    const next = rng(5);
    const keys = Array.from(
      { length: 300_000 },
      (_, i) => `https://site-${i % 113}.example/p/${i}?q=${Math.floor(next() * 1e9)}`,
    );
    const set = new FingerprintSet();
    expect(Array.from(set.addMany(keys)).every((f) => f === 1)).toBe(true);
    expect(set.size).toBe(keys.length);
    const odd = keys.filter((_, i) => i % 2 === 1);
    expect(set.removeMany(odd).every((f) => f === 1)).toBe(true);
    const has = set.hasMany(keys);
    keys.forEach((_, i) => {
      if (has[i] !== (i % 2 === 0 ? 1 : 0)) throw new Error(`key ${i}: has ${has[i]}`);
    });
    expect(set.addMany(odd).every((f) => f === 1)).toBe(true);
    expect(set.size).toBe(keys.length);
  });

  // Below about 50,000 keys the module's fixed 0.3 MiB (its code, data and batch regions) dominates.
  it("holds at most 32 bytes of memory per key at every size from 10^5 to 10^6 keys, growing from the default table", () => {
    const set = new FingerprintSet();
    const batch = 10_000;
    let worst = 0;
    for (let i = 0; i < 1_000_000; i += batch) {
      set.addMany(Array.from({ length: batch }, (_, j) => `https://www.example.com/page/${i + j}`));
      if (set.size >= 100_000) worst = Math.max(worst, set.byteLength / set.size);
    }
    expect(set.size).toBe(1_000_000);
    expect(worst).toBeLessThanOrEqual(32);
  });

  it("treats strings and their UTF-8 bytes as one key, and the empty key as a key", () => {
    const set = new FingerprintSet();
    expect(set.add("héllo")).toBe(true);
    expect(set.add(new TextEncoder().encode("héllo"))).toBe(false);
    expect(set.add("")).toBe(true);
    expect(set.has("")).toBe(true);
    expect(set.remove("")).toBe(true);
    expect(set.has("")).toBe(false);
  });

  it("round-trips through serialize and refuses damaged, truncated and repeated-fingerprint bytes", () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
    const set = new FingerprintSet({ items: 10 });
    set.addMany(keys);
    const bytes = set.serialize();
    expect(bytes.length).toBe(24 + 16 + 16 * 5000 + 8);
    const back = FingerprintSet.deserialize(bytes);
    expect(back.size).toBe(5000);
    expect(Array.from(back.hasMany(keys)).every((f) => f === 1)).toBe(true);
    expect(Array.from(back.hasMany(["absent", "k5000"]))).toEqual([0, 0]);
    const damaged = bytes.slice();
    damaged[100] ^= 1;
    expect(() => FingerprintSet.deserialize(damaged)).toThrow(FormatError);
    expect(() => FingerprintSet.deserialize(bytes.subarray(0, bytes.length - 9))).toThrow(FormatError);
    back.clear();
    expect(back.size).toBe(0);
    expect(back.has("k1")).toBe(false);
    back.dispose();
    expect(() => back.has("k1")).toThrow(DisposedError);
  });
  // The Durable Object seen-set hashes in the Worker and stores in the object: fingerprints made
  // apart from the set must be the ones the set keeps for the same keys.
  it("takes packed fingerprints made apart (fingerprintMany) as the keys they came from, through growth", () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `https://example.com/${i}`);
    const packed = FingerprintSet.fingerprintMany([...keys, keys[7]]);
    expect(packed.length).toBe(16 * 20_001);
    // XXH3-128 of the key, as xxh128's hex spells it (big-endian high half first; stored low half first).
    const hex = Array.from(packed.subarray(0, 16))
      .reverse()
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    expect(hex).toBe(xxh128(keys[0]));
    const set = new FingerprintSet({ items: 10 });
    const flags = set.addFingerprints(packed);
    expect(flags.subarray(0, 20_000).every((f) => f === 1)).toBe(true);
    expect(flags[20_000]).toBe(0);
    expect(set.size).toBe(20_000);
    expect(Array.from(set.hasMany([keys[0], keys[19_999], "absent"]))).toEqual([1, 1, 0]);
    expect(Array.from(set.addMany([keys[5], "new"]))).toEqual([0, 1]);
    expect(Array.from(set.hasFingerprints(FingerprintSet.fingerprintMany(["new", "absent", keys[3]])))).toEqual([
      1, 0, 1,
    ]);
    expect(() => set.addFingerprints(new Uint8Array(15))).toThrow(InvalidArgumentError);
    expect(() => set.hasFingerprints([1, 2] as unknown as Uint8Array)).toThrow(InvalidArgumentError);
    set.dispose();
  });
});

describe("FingerprintSet over several WebAssembly memories (one memory's table held to a few KiB)", () => {
  const limit = (bytes: number) => {
    const before = process.env.CRAWLSIEVE_TEST_PER_MEMORY;
    process.env.CRAWLSIEVE_TEST_PER_MEMORY = String(bytes);
    return () => {
      if (before === undefined) delete process.env.CRAWLSIEVE_TEST_PER_MEMORY;
      else process.env.CRAWLSIEVE_TEST_PER_MEMORY = before;
    };
  };

  it("answers as a Set does for random adds, look-ups and removals while its shards split (property)", () => {
    // 16 KiB: the smallest table, so a shard splits at its first growth (832 keys or fewer).
    const restore = limit(16 << 10);
    try {
      const key = fc.oneof(
        fc.integer({ min: 0, max: 6000 }).map((i) => `https://a.example/${i}`),
        fc.string({ maxLength: 4 }),
      );
      const op = fc.record({
        op: fc.constantFrom("add" as const, "add" as const, "has" as const, "remove" as const),
        keys: fc.array(key, { minLength: 200, maxLength: 2000 }),
      });
      let most = 1;
      fc.assert(
        fc.property(fc.array(op, { minLength: 2, maxLength: 10 }), (ops) => {
          const set = new FingerprintSet({ items: 1 });
          const ref = new Set<string>();
          for (const o of ops) {
            const got =
              o.op === "add" ? set.addMany(o.keys) : o.op === "has" ? set.hasMany(o.keys) : set.removeMany(o.keys);
            // Compared as one string: a failing toEqual of long arrays takes minutes to print.
            expect(Array.from(got).join("")).toBe(reference(ref, o).join(""));
            expect(set.size).toBe(ref.size);
          }
          most = Math.max(most, set.memories);
          set.dispose();
        }),
        { numRuns: 40 },
      );
      expect(most).toBeGreaterThan(2);
    } finally {
      restore();
    }
  });

  it("keeps 300,000 keys over many memories: repeats inside a batch across splits, absent keys, removals, and its bytes in one memory or many", () => {
    const restore = limit(1 << 20);
    let bytes: Uint8Array;
    const keys = Array.from({ length: 300_000 }, (_, i) => `https://site-${i % 97}.example/p/${i}`);
    try {
      const set = new FingerprintSet();
      // Each key twice in a row, in one call: the second is a repeat even when a split came between.
      const twice = keys.flatMap((k) => [k, k]);
      const flags = set.addMany(twice);
      let wrong = 0;
      for (let i = 0; i < flags.length; i++) if (flags[i] !== (i % 2 === 0 ? 1 : 0)) wrong++;
      expect(wrong).toBe(0);
      expect(set.size).toBe(keys.length);
      expect(set.memories).toBeGreaterThan(4);
      expect(set.hasMany(keys).every((f) => f === 1)).toBe(true);
      const absent = Array.from({ length: 200_000 }, (_, i) => `https://elsewhere.example/${i}`);
      expect(set.hasMany(absent).some((f) => f === 1)).toBe(false);
      const odd = keys.filter((_, i) => i % 2 === 1);
      expect(set.removeMany(odd).every((f) => f === 1)).toBe(true);
      expect(set.size).toBe(keys.length - odd.length);
      const has = set.hasMany(keys);
      expect(has.every((f, i) => f === (i % 2 === 0 ? 1 : 0))).toBe(true);
      bytes = set.serialize();
      set.dispose();
      const again = FingerprintSet.deserialize(bytes);
      expect(again.memories).toBeGreaterThan(1);
      expect(again.hasMany(keys).every((f, i) => f === (i % 2 === 0 ? 1 : 0))).toBe(true);
      again.dispose();
    } finally {
      restore();
    }
    // The same bytes in one memory: the format does not depend on how many memories wrote it.
    const one = FingerprintSet.deserialize(bytes);
    expect(one.memories).toBe(1);
    expect(one.size).toBe(keys.length / 2);
    expect(one.hasMany(keys).every((f, i) => f === (i % 2 === 0 ? 1 : 0))).toBe(true);
  });
});
