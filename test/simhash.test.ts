// SimHash: the WASM fingerprint equals a plain BigInt reference of the same definition (xxhash-wasm
// for token hashes), golden values pinned so the format never drifts, similar texts closer than
// unrelated ones, CJK segmentation, empty and huge documents, weighted features and IDF, errors.
import fc from "fast-check";
import xxhashWasm from "xxhash-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  FormatError,
  features,
  hammingDistance,
  IdfTable,
  InvalidArgumentError,
  segmentWords,
  simhash,
  simhashMany,
} from "../build/js/index.node.js";
import { ready } from "./helpers.js";

let h64: (bytes: Uint8Array, seed?: bigint) => bigint;
beforeAll(async () => {
  await ready();
  h64 = (await xxhashWasm()).h64Raw;
});

const MASK = (1n << 64n) - 1n;
const SEED = 0x9e3779b97f4a7c15n;
function mix64(x: bigint): bigint {
  let z = (x + SEED) & MASK;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
  return z ^ (z >> 31n);
}

/** Separators above U+007F, as documented in assembly/simhash.ts. */
function isSeparator(cp: number): boolean {
  if (cp < 0x100) return (cp < 0xc0 && cp !== 0xaa && cp !== 0xb5 && cp !== 0xba) || cp === 0xd7 || cp === 0xf7;
  return (
    (cp >= 0x2000 && cp <= 0x2bff) ||
    (cp >= 0x3000 && cp <= 0x303f) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff0f) ||
    (cp >= 0x1f000 && cp <= 0x1faff) ||
    cp === 0xfeff
  );
}

/** The definition, written independently: tokens, shingles, votes. */
function reference(text: string, w = 3, distinct = false): bigint {
  const ascii = /^[\x00-\x7f]*$/.test(text);
  let source = ascii ? text.toLowerCase() : text.normalize("NFKC").toLowerCase();
  if (
    !ascii &&
    /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u.test(
      source,
    )
  ) {
    source = [...new Intl.Segmenter(undefined, { granularity: "word" }).segment(source)]
      .filter((s) => s.isWordLike)
      .map((s) => s.segment)
      .join(" ");
  }
  const tokens: string[] = [];
  let current = "";
  for (const ch of source) {
    const cp = ch.codePointAt(0)!;
    const word = cp < 0x80 ? /[a-z0-9]/.test(ch) : !isSeparator(cp);
    if (word) current += ch;
    else if (current) {
      tokens.push(current);
      current = "";
    }
  }
  if (current) tokens.push(current);
  const hashes = tokens.map((t) => h64(new TextEncoder().encode(t), 0n));
  const shingles: bigint[] = [];
  const chain = (parts: bigint[]) => parts.reduce((h, t) => mix64(h ^ t), SEED);
  if (hashes.length > 0 && hashes.length < w) shingles.push(chain(hashes));
  for (let i = 0; i + w <= hashes.length; i++) shingles.push(chain(hashes.slice(i, i + w)));
  if (distinct) shingles.splice(0, shingles.length, ...new Set(shingles));
  let fp = 0n;
  for (let b = 0n; b < 64n; b++) {
    const ones = shingles.filter((h) => (h >> b) & 1n).length;
    if (2 * ones > shingles.length) fp |= 1n << b;
  }
  return fp;
}

const ARTICLE = `Crawlers meet the same page again and again: mirrors, print views, session ids in URLs and
templates that wrap one article in different navigation. Near-duplicate detection groups such
pages by the similarity of their text rather than by exact equality of bytes.`;

describe("simhash against an independent reference", () => {
  it("equals the BigInt reference on random ASCII and Unicode texts, for shingle sizes 1-4", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.string({ unit: "binary", maxLength: 120 }),
          fc.string({ unit: "grapheme", maxLength: 120 }),
          fc.lorem({ maxCount: 40 }),
        ),
        fc.integer({ min: 1, max: 4 }),
        (text, w) => {
          expect(simhash(text, { shingle: w })).toBe(reference(text, w));
        },
      ),
      { numRuns: 600, seed: 11 },
    );
  });

  it("with distinct: true, equals the reference voting once per distinct shingle (simhash and simhashMany)", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.lorem({ maxCount: 60 }).map((t) => `${t} ${t} ${t.slice(0, 40)}`),
          fc.string({ unit: "grapheme", maxLength: 120 }),
        ),
        fc.integer({ min: 1, max: 4 }),
        (text, w) => {
          expect(simhash(text, { shingle: w, distinct: true })).toBe(reference(text, w, true));
        },
      ),
      { numRuns: 300, seed: 16 },
    );
    const page = `${ARTICLE} ${"Home Docs Blog About Contact ".repeat(40)}`;
    expect(simhash(page, { distinct: true })).toBe(reference(page, 3, true));
    expect(simhash(page, { distinct: true })).not.toBe(simhash(page));
    const many = Array.from({ length: 600 }, (_, i) => `${page} copy ${i} ${i % 7 === 0 ? "é" : ""}`);
    const batch = simhashMany(many, { distinct: true });
    many.forEach((text, i) => expect(batch[i]).toBe(simhash(text, { distinct: true })));
    expect(() => simhash("a b c", { distinct: "yes" as unknown as boolean })).toThrow(InvalidArgumentError);
    expect(() => simhash("a b c", { distinct: true, idf: IdfTable.build(["a b c"]) })).toThrow(/distinct/);
  });

  it("equals the reference on real multilingual text, and simhashMany equals simhash", () => {
    const texts = [
      ARTICLE,
      "Ünïcödé Straße — «quoted» text… with émojis 😀 and ﬁ ligatures",
      "我爱北京天安门。今天天气很好，我们去公园散步吧。",
      "สวัสดีครับ ยินดีต้อนรับสู่ประเทศไทย",
      "東京は日本の首都です。カタカナもひらがなも",
      "",
    ];
    for (const text of texts) expect(simhash(text)).toBe(reference(text));
    const many = Array.from({ length: 5000 }, (_, i) => `${ARTICLE} copy ${i} ${i % 7 === 0 ? "é" : ""}`);
    const batch = simhashMany(many);
    many.forEach((text, i) => expect(batch[i]).toBe(simhash(text)));
  });
});

describe("simhash stability", () => {
  // Pinned once from this implementation (and equal to the reference above): a change here
  // changes every stored fingerprint, so it needs a new format version, not a new pin.
  it.each([
    ["", 0n],
    ["hello", 0x6571e701ad678c08n],
    ["The quick brown fox jumps over the lazy dog", 0xdb6c25c23463f072n],
    ["我爱北京天安门", 0x805a8000180c4840n],
  ])("%j has its pinned fingerprint", (text, pinned) => {
    expect(simhash(text)).toBe(reference(text));
    expect(simhash(text)).toBe(pinned);
  });
});

describe("simhash on real text", () => {
  const edited = ARTICLE.replace("again and again", "over and over").replace(
    "different navigation",
    "other navigation",
  );
  const unrelated = `The counting Bloom filter keeps a small counter per position instead of a bit, so keys can
be removed; four bits per counter are enough for almost every workload, as Fan et al. showed.`;

  it("puts an edited copy far closer than an unrelated text", () => {
    const base = simhash(ARTICLE);
    expect(hammingDistance(base, simhash(edited))).toBeLessThan(hammingDistance(base, simhash(unrelated)));
    expect(hammingDistance(base, simhash(ARTICLE.toUpperCase()))).toBe(0);
    expect(hammingDistance(base, simhash(ARTICLE.replace(/\s+/g, "  \n ")))).toBe(0);
    expect(hammingDistance(base, simhash(unrelated))).toBeGreaterThan(16);
  });

  it("segments Chinese, Japanese and Thai into words", () => {
    expect(segmentWords("我爱北京天安门")).toEqual(["我", "爱", "北京", "天安门"]);
    expect(features("我爱北京天安门", { shingle: 1 }).length).toBe(4);
    expect(features("สวัสดีครับ ยินดีต้อนรับ", { shingle: 1 }).length).toBeGreaterThan(2);
    const a = "今天天气很好，我们去公园散步，然后在湖边吃午饭，晚上回家看书。";
    const b = "今天天气很好，我们去公园散步，然后在湖边吃晚饭，晚上回家看书。";
    const c = "股票市场今天大幅下跌，投资者担心经济衰退，央行可能降息。";
    expect(hammingDistance(simhash(a), simhash(b))).toBeLessThan(hammingDistance(simhash(a), simhash(c)));
  });

  it("handles empty, wordless and huge documents", () => {
    expect(simhash("")).toBe(0n);
    expect(simhash("  ... !!! ---  ")).toBe(0n);
    expect(features("")).toHaveLength(0);
    const huge = ARTICLE.repeat(60_000); // about 15 MB
    expect(huge.length).toBeGreaterThan(14_000_000);
    expect(hammingDistance(simhash(huge), simhash(ARTICLE))).toBeLessThan(16);
    // One CJK word sends a whole document through Intl.Segmenter: still linear, still close.
    const mixed = ARTICLE.repeat(4_000) + " 日本";
    expect(hammingDistance(simhash(mixed), simhash(huge))).toBeLessThan(16);
  });
});

describe("weighted features and IDF", () => {
  it("explicit features with unit weights equal the one-token shingles of the same words", () => {
    expect(
      simhash([
        ["hello", 1],
        ["world", 1],
        ["again", 1],
      ]),
    ).toBe(simhash("Hello, world -- again!", { shingle: 1 }));
    expect(
      simhash(
        new Map([
          ["a", 2],
          ["b", 1],
        ]),
      ),
    ).toBe(
      simhash([
        ["a", 2],
        ["b", 1],
      ]),
    );
  });

  it("weights change the vote: a heavy feature pulls the fingerprint to its own hash", () => {
    const only = features("dominant", { shingle: 1 })[0];
    const fp = simhash([
      ["dominant", 1000],
      ["x", 1],
      ["y", 1],
      ["z", 1],
    ]);
    expect(fp).toBe(only);
  });

  it("builds, uses and round-trips an IDF table", () => {
    const corpus = Array.from(
      { length: 50 },
      (_, i) => `common words everywhere in every document number ${i} and topic ${i % 5}`,
    );
    const idf = IdfTable.build(corpus, { shingle: 1 });
    expect(idf.documents).toBe(50);
    const [common] = features("common", { shingle: 1 });
    const [rare] = features("zebra", { shingle: 1 });
    expect(idf.weight(common)).toBeLessThan(idf.weight(rare));
    const bytes = idf.serialize();
    const back = IdfTable.deserialize(bytes);
    expect(back.serialize()).toEqual(bytes);
    expect(simhash(corpus[3], { idf: back })).toBe(simhash(corpus[3], { idf }));
    expect(() => simhash("x", { idf, shingle: 3 })).toThrow(/shingle/);
    const flipped = bytes.slice();
    flipped[flipped.length - 10] ^= 1;
    expect(() => IdfTable.deserialize(flipped)).toThrow(FormatError);
  });

  it("names bad input", () => {
    expect(() => simhash(42 as never)).toThrow(InvalidArgumentError);
    expect(() => simhash([["a", Number.NaN]])).toThrow(/weight/);
    expect(() => simhash("x", { shingle: 0 })).toThrow(/shingle/);
    expect(() => simhash("x", { shingle: 17 })).toThrow(/shingle/);
    expect(() => hammingDistance(-1n, 0n)).toThrow(InvalidArgumentError);
    expect(() => hammingDistance(1n << 64n, 0n)).toThrow(InvalidArgumentError);
    expect(hammingDistance(0n, (1n << 64n) - 1n)).toBe(64);
  });
});
