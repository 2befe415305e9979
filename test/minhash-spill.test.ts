// MinHashSpill, the near-duplicate engine of `near-dups` with its sketches on disk: its pairs and
// star clusters against references computed here by brute force over exact Jaccard (texts short
// enough that a 1,024-value sketch holds every shingle, so the estimate is the exact Jaccard), the
// same answers when the sketch cache is far smaller than a cluster, the band buckets against a Map
// grouping, and the temporary file's life (gone after dispose, a typed error where it cannot be).
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { bandBuckets } from "../build/js/near-dup/band-buckets.js";
import { leaderClusters, MinHashSpill, sketchMany } from "../build/js/index.node.js";
import { ready, rng, setJaccard, shingleSet } from "./helpers.js";

beforeAll(ready);

const dir = mkdtempSync(join(tmpdir(), "cs-minhash-spill-"));

/** Families of pages of 20-300 words, each with copies that have 0-4% or 0-30% of their words replaced, shuffled among unrelated pages and texts without a word. */
function corpus(seed: number, families: number): string[] {
  const next = rng(seed);
  const word = () => `w${Math.floor(next() * 5000)}`;
  const texts: string[] = [];
  for (let f = 0; f < families; f++) {
    const page = Array.from({ length: 20 + Math.floor(next() * 280) }, word);
    texts.push(page.join(" "));
    const copies = Math.floor(next() * 4);
    for (let c = 0; c < copies; c++) {
      const share = next() < 0.5 ? next() * 0.04 : next() * 0.3;
      texts.push(page.map((w) => (next() < share ? word() : w)).join(" "));
    }
    if (f % 50 === 0) texts.push(f % 100 === 0 ? "" : "!!! ---");
  }
  for (let i = texts.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [texts[i], texts[j]] = [texts[j], texts[i]];
  }
  return texts;
}

/** Every pair (a < b) whose exact Jaccard reaches the threshold, by brute force. */
function bruteForcePairs(texts: readonly string[], threshold: number): { a: number; b: number; similarity: number }[] {
  const sets = texts.map(shingleSet);
  const pairs: { a: number; b: number; similarity: number }[] = [];
  for (let a = 0; a < texts.length; a++) {
    for (let b = a + 1; b < texts.length; b++) {
      if (sets[a].size === 0 || sets[b].size === 0) continue;
      const similarity = setJaccard(sets[a], sets[b]);
      if (similarity >= threshold - 1e-12) pairs.push({ a, b, similarity });
    }
  }
  return pairs;
}

function filled(texts: readonly string[], options: ConstructorParameters<typeof MinHashSpill>[0]): MinHashSpill {
  const spill = new MinHashSpill({ tmp: dir, ...options });
  for (let from = 0; from < texts.length; from += 97)
    spill.addSketches(sketchMany(texts.slice(from, from + 97), spill.params));
  return spill;
}

describe("MinHashSpill", () => {
  const texts = corpus(28, 400);
  let all: { a: number; b: number; similarity: number }[] | undefined;
  /** The corpus's pairs at the threshold (brute force once, at 0.5, then filtered). */
  const truthAt = (threshold: number) =>
    (all ??= bruteForcePairs(texts, 0.5)).filter((p) => p.similarity >= threshold - 1e-12);

  for (const threshold of [0.5, 0.8, 0.9]) {
    it(`lists the pairs at J >= ${threshold} that brute force over exact Jaccard finds`, () => {
      const spill = filled(texts, { threshold });
      const found = [...spill.pairBatches()].flat();
      spill.dispose();
      const truth = truthAt(threshold);
      expect(truth.length).toBeGreaterThan(100);
      // The estimate is exact here, so every pair found is a true one with its exact similarity;
      // LSH may miss a pair at the threshold with probability 1e-4, and misses none of these.
      expect(found).toEqual(truth.map((p) => ({ ...p, similarity: expect.closeTo(p.similarity, 12) })));
    });
  }

  it("makes the star clusters the reference makes from brute-force pairs, in input order and in another order", () => {
    const spill = filled(texts, { threshold: 0.8 });
    const truth = truthAt(0.8);
    const ascending = Uint32Array.from(texts.keys());
    const shuffled = ascending.slice().reverse();
    for (const order of [undefined, shuffled]) {
      const got = spill.cluster(order);
      const expected = leaderClusters(order ?? ascending, truth);
      expect([...got.ids]).toEqual([...expected.ids]);
      expect([...got.representatives]).toEqual([...expected.representatives]);
      got.similarities.forEach((s, i) => expect(s).toBeCloseTo(expected.similarities[i], 12));
      // Some documents joined a representative, so the check above is not of singletons only.
      expect(got.representatives.filter((r, i) => r !== got.ids[i]).length).toBeGreaterThan(50);
    }
    spill.dispose();
  });

  it("gives the same answers when a cluster is far larger than its sketch cache", () => {
    // 700 copies of one page (1-3 words changed) and 300 others; a cache of 256 sketches.
    const next = rng(700);
    const word = () => `w${Math.floor(next() * 20_000)}`;
    const page = Array.from({ length: 150 }, word);
    const docs = Array.from({ length: 1000 }, (_, i) => {
      if (i % 10 >= 7) return Array.from({ length: 150 }, word).join(" ");
      const copy = page.slice();
      for (let e = i % 4; e > 0; e--) copy[Math.floor(next() * 150)] = word();
      return copy.join(" ");
    });
    const truth = bruteForcePairs(docs, 0.9);
    expect(truth.length).toBeGreaterThan(100_000);
    const spill = filled(docs, { threshold: 0.9, cacheBytes: 1 });
    const found = [...spill.pairBatches()].flat();
    expect(found.length).toBe(truth.length);
    found.forEach((p, i) => {
      expect([p.a, p.b]).toEqual([truth[i].a, truth[i].b]);
      expect(p.similarity).toBeCloseTo(truth[i].similarity, 12);
    });
    const clusters = spill.cluster();
    expect([...clusters.representatives]).toEqual([
      ...leaderClusters(Uint32Array.from(docs.keys()), truth).representatives,
    ]);
    spill.dispose();
  });

  it("removes its sketch file on dispose, and refuses more documents once clustered", () => {
    const folder = mkdtempSync(join(dir, "own-"));
    const spill = new MinHashSpill({ tmp: folder });
    spill.addSketches(sketchMany(texts.slice(0, 50), spill.params));
    expect(readdirSync(folder)).toHaveLength(1);
    expect(spill.diskBytes).toBeGreaterThan(0);
    spill.cluster();
    expect(() => spill.addSketches(sketchMany(["one more page"], spill.params))).toThrow(/no more documents/);
    spill.dispose();
    expect(readdirSync(folder)).toEqual([]);
  });

  it("names what is wrong: a folder it cannot write, sketches of other params, a bad order", () => {
    const missing = join(dir, "missing", "folder");
    expect(() => new MinHashSpill({ tmp: missing })).toThrow(
      expect.objectContaining({
        code: "ERR_SPILL",
        message: expect.stringContaining(`${missing} (not a folder, ENOENT)`),
      }),
    );
    expect(existsSync(missing)).toBe(false);
    const spill = new MinHashSpill({ tmp: dir });
    expect(() => spill.addSketches(sketchMany(["a b c d"], { ...spill.params, k: 64 }))).toThrow(
      /sketches made with this index's params/,
    );
    spill.addSketches(sketchMany(["a b c d", "e f g h"], spill.params));
    expect(() => spill.cluster([0, 0])).toThrow(/order\[1\] must be a number not given before/);
    expect(() => spill.cluster([2])).toThrow(/order\[0\] must be the number of an added document \(0 to 1\)/);
    expect(() => new MinHashSpill({ threshold: 0 })).toThrow(/threshold/);
    spill.dispose();
  });
});

describe("bandBuckets", () => {
  it("numbers each band's shared keys as a Map grouping would, 0 for a key alone and for skipped documents", () => {
    const next = rng(5);
    const docs = 5000;
    const bands = 7;
    // Keys from a small range, so many are shared, and some high-bit-only differences.
    const keys = Uint32Array.from(
      { length: docs * bands },
      () => (next() < 0.5 ? Math.floor(next() * 3000) : Math.floor(next() * 2 ** 32)) ^ (next() < 0.1 ? 0x80000000 : 0),
    );
    const skip = Uint8Array.from({ length: docs }, () => (next() < 0.05 ? 1 : 0));
    const original = keys.slice();
    const count = bandBuckets(keys, docs, bands, skip);
    const seen = new Set<number>();
    for (let b = 0; b < bands; b++) {
      const groups = new Map<number, number[]>();
      for (let d = 0; d < docs; d++) {
        if (skip[d] === 1) continue;
        const list = groups.get(original[d * bands + b]) ?? [];
        list.push(d);
        groups.set(original[d * bands + b], list);
      }
      for (let d = 0; d < docs; d++) if (skip[d] === 1) expect(keys[d * bands + b]).toBe(0);
      for (const members of groups.values()) {
        const ids = new Set(members.map((d) => keys[d * bands + b]));
        expect(ids.size).toBe(1);
        const [id] = ids;
        if (members.length === 1) expect(id).toBe(0);
        else {
          expect(seen.has(id)).toBe(false); // a bucket number belongs to one group of one band
          seen.add(id);
        }
      }
    }
    expect(seen.size).toBe(count);
    expect(count).toBeGreaterThan(1000);
    expect(Math.min(...seen)).toBe(1);
    expect(Math.max(...seen)).toBe(count);
  });
});
