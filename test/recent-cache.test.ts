// withRecentCache: the same answers as the seen-set behind it, never a "new" of its own, bounded
// memory; hits measured on the shipped crawl stream.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { Deduplicator, DisposedError, withRecentCache } from "../build/js/index.node.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

/** An exact seen-set that counts what reaches it. */
function countingInner() {
  const dedup = new Deduplicator({ items: 100_000 });
  const inner = {
    received: 0,
    addMany(keys: readonly (string | Uint8Array)[]) {
      inner.received += keys.length;
      return Promise.resolve(dedup.checkMany(keys).isNew);
    },
  };
  return inner;
}

/** First occurrences by a JavaScript Set: the reference. */
const reference = (keys: string[]) => {
  const seen = new Set<string>();
  return Uint8Array.from(keys, (k) => (seen.has(k) ? 0 : (seen.add(k), 1)));
};

describe("withRecentCache", () => {
  it("answers as the seen-set behind it on the shipped crawl stream, with most duplicates answered locally", async () => {
    const lines = readFileSync(new URL("../examples/nodejs-doc-links.txt", import.meta.url), "utf8")
      .split("\n")
      .slice(0, -1);
    const inner = countingInner();
    const cached = withRecentCache(inner, { entries: 16_384 });
    const got: number[] = [];
    for (let i = 0; i < lines.length; i += 1000) got.push(...(await cached.addMany(lines.slice(i, i + 1000))));
    expect(Uint8Array.from(got)).toEqual(reference(lines));
    const { hits, misses } = cached.stats;
    expect(hits + misses).toBe(lines.length);
    expect(inner.received).toBe(misses);
    // 57,287 links, 11,401 distinct; with room for 16,384 fingerprints nearly every duplicate is
    // answered here (0.96 measured; 0.88 with 4,096 entries, 0.81 with 1,024).
    expect(hits / (lines.length - 11_401)).toBeGreaterThan(0.9);
  });

  it("stays exact when far more distinct keys pass than it holds, and its memory stays fixed", async () => {
    const next = rng(7);
    const keys = Array.from({ length: 200_000 }, () => `https://evict.example/${Math.floor(next() * 60_000)}`);
    const cached = withRecentCache(countingInner(), { entries: 1000 });
    expect(cached.byteLength).toBe(512 * 16 + 512); // rounded up to 1,024 entries: 16 bytes and a byte per set of two
    const got: number[] = [];
    for (let i = 0; i < keys.length; i += 4096) got.push(...(await cached.addMany(keys.slice(i, i + 4096))));
    expect(Uint8Array.from(got)).toEqual(reference(keys));
    expect(cached.stats.hits).toBeGreaterThan(0);
  });

  it("never answers 'new' on its own: a key is new only where the seen-set said so", async () => {
    let calls = 0;
    const allOld = { addMany: (keys: readonly (string | Uint8Array)[]) => (calls++, new Uint8Array(keys.length)) };
    const cached = withRecentCache(allOld, { entries: 64 });
    const keys = Array.from({ length: 500 }, (_, i) => `k${i % 100}`);
    for (let round = 0; round < 3; round++)
      expect((await cached.addMany(keys)).every((x: number) => x === 0)).toBe(true);
    expect(calls).toBeGreaterThan(0);
    const allNew = { addMany: (keys: readonly (string | Uint8Array)[]) => Uint8Array.from(keys, () => 1) };
    const second = withRecentCache(allNew, { entries: 64 });
    expect(Array.from(await second.addMany(["a", "b"]))).toEqual([1, 1]);
    expect(Array.from(await second.addMany(["a", "b", "c"]))).toEqual([0, 0, 1]); // a, b from the cache: seen
    // A repeat inside one call goes on once; the seen-set records the first, so the second is seen.
    expect(
      Array.from(await second.addMany(["d", "d", new TextEncoder().encode("e"), new TextEncoder().encode("e")])),
    ).toEqual([1, 0, 1, 0]);
  });

  // Issue 30 item 9: the string "Ã©" and the bytes c3 a9 (its latin1 reading) shared one map entry,
  // so the second, a different key for the seen-set, was answered "seen" without being sent.
  it("keys a call's repeats on their UTF-8 bytes: a string and bytes are one key only when the bytes are its UTF-8", async () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    const keys = [
      "Ã©",
      Uint8Array.of(0xc3, 0xa9),
      "é",
      encode("Ã©"),
      "\ud800",
      encode("\ufffd"),
      Uint8Array.of(0xff),
      "\u00ff",
    ];
    // The reference: a Set of the keys' UTF-8 bytes (TextEncoder writes a lone surrogate as U+FFFD, as the seen-set hashes it).
    const seen = new Set<string>();
    const expected = keys.map((k) => {
      const bytes = Array.from(typeof k === "string" ? encode(k) : k).join(",");
      return seen.has(bytes) ? 0 : (seen.add(bytes), 1);
    });
    expect(expected).toEqual([1, 1, 0, 0, 1, 0, 1, 1]);
    const alone = new Deduplicator({ items: 1000 });
    expect(Array.from(alone.checkMany(keys).isNew)).toEqual(expected);
    const cached = withRecentCache(countingInner(), { entries: 64 });
    expect(Array.from(await cached.addMany(keys))).toEqual(expected);
  });

  it("refuses a seen-set that answers fewer (or more) keys than it was given, rather than calling them seen", async () => {
    const short = withRecentCache(
      { addMany: (keys: readonly (string | Uint8Array)[]) => new Uint8Array(keys.length - 1).fill(1) },
      { entries: 64 },
    );
    await expect(short.addMany(["a", "b", "c"])).rejects.toThrow(/answered 2 keys where it was given 3/);
    const long = withRecentCache(
      { addMany: (keys: readonly (string | Uint8Array)[]) => new Uint8Array(keys.length + 1).fill(1) },
      { entries: 64 },
    );
    await expect(long.addMany(["a"])).rejects.toMatchObject({ code: "ERR_SEEN_SET_ANSWERS" });
    const none = withRecentCache({ addMany: () => undefined as never }, { entries: 64 });
    await expect(none.addMany(["a"])).rejects.toThrow(/answered undefined/);
  });

  it("rejects bad options and use after dispose", async () => {
    expect(() => withRecentCache({} as never)).toThrow(/needs a seen-set with addMany/);
    expect(() => withRecentCache(countingInner(), { entries: 0 })).toThrow(/entries must be/);
    const cached = withRecentCache(countingInner());
    cached.dispose();
    await expect(cached.addMany(["x"])).rejects.toBeInstanceOf(DisposedError);
  });
});
