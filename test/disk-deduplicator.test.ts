// IMP-CB on disk (openDiskDeduplicator) against a Map of reference counts: every answer and count
// equal, across reopening, two writers sharing the directory, removals (one reference, and all)
// and saturated counters; the file holds node:crypto's MD5 of every key checked, once a check.
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CrawlsieveError, openDiskDeduplicator, openLmdbStore, StoreDeduplicator } from "../build/js/index.node.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

/** The Map's answer to each key checked in order: whether it was new, and its references after. */
function reference(keys: readonly string[], refs: Map<string, number>) {
  return keys.map((key) => {
    const count = (refs.get(key) ?? 0) + 1;
    refs.set(key, count);
    return { isNew: count === 1 ? 1 : 0, count };
  });
}

/** n keys drawn from `distinct` possible URLs, so about half repeat. */
function keysOf(seed: number, n: number, distinct: number): string[] {
  const next = rng(seed);
  return Array.from({ length: n }, () => `https://example.com/p/${Math.floor(next() * distinct)}`);
}

const dir = () => mkdtempSync(join(tmpdir(), "cs-disk-dedup-"));

describe("openDiskDeduplicator", () => {
  it("equals a Map of reference counts across batches and reopening; the file holds each check's MD5 (node:crypto)", async () => {
    const where = dir();
    const refs = new Map<string, number>();
    const keys = keysOf(1, 6000, 3000);
    let dedup = await openDiskDeduplicator(where, { items: 1000 });
    for (let at = 0; at < keys.length; at += 1500) {
      if (at === 3000) {
        await dedup.close();
        dedup = await openDiskDeduplicator(where, { items: 1000 });
      }
      const batch = keys.slice(at, at + 1500);
      const want = reference(batch, refs);
      const got = await dedup.checkMany(batch);
      expect(Array.from(got.isNew)).toEqual(want.map((w) => w.isNew));
      expect(Array.from(got.counts)).toEqual(want.map((w) => w.count));
    }
    expect(dedup.size).toBe(refs.size);
    await dedup.close();
    const file = readFileSync(join(where, "references.log"));
    for (const [key, count] of [...refs].slice(0, 200)) {
      const md5 = createHash("md5").update(key).digest();
      let found = 0;
      for (let at = file.indexOf(md5); at >= 0; at = file.indexOf(md5, at + 16)) found++;
      expect(found).toBe(count);
    }
  });

  it("two writers sharing the directory: each key new for exactly one of them, counts shared", async () => {
    const where = dir();
    const a = await openDiskDeduplicator(where);
    const b = await openDiskDeduplicator(where);
    const keys = keysOf(2, 4000, 1500);
    const refs = new Map<string, number>();
    const want = reference(keys, refs);
    const got: { isNew: number; count: number }[] = [];
    for (let at = 0; at < keys.length; at += 250) {
      const batch = keys.slice(at, at + 250);
      const one = await (at % 500 === 0 ? a : b).checkMany(batch);
      batch.forEach((_, i) => got.push({ isNew: one.isNew[i], count: one.counts[i] }));
    }
    expect(got).toEqual(want);
    expect(Array.from(await b.hasMany(["https://example.com/p/1", "https://nowhere/"]))).toEqual([
      refs.has("https://example.com/p/1") ? 1 : 0,
      0,
    ]);
    await a.close();
    await b.close();
  });

  it("removes one reference, or all, as a Map does; forgotten keys are new again after reopening", async () => {
    const where = dir();
    const refs = new Map<string, number>();
    const keys = keysOf(3, 3000, 800);
    const dedup = await openDiskDeduplicator(where, { items: 500 });
    reference(keys, refs);
    await dedup.checkMany(keys);
    const some = [...refs.keys()].slice(0, 300);
    const dropOne = some.slice(0, 150);
    const dropAll = some.slice(150);
    const one = await dedup.removeMany([...dropOne, "https://nowhere/"]);
    expect(Array.from(one.removed)).toEqual([...dropOne.map(() => 1), 0]);
    expect(Array.from(one.counts)).toEqual([...dropOne.map((k) => refs.get(k)! - 1), 0]);
    for (const k of dropOne) refs.set(k, refs.get(k)! - 1);
    const all = await dedup.removeMany(dropAll, { all: true });
    expect(Array.from(all.removed)).toEqual(dropAll.map(() => 1));
    for (const k of dropAll) refs.delete(k);
    for (const [k, c] of refs) if (c === 0) refs.delete(k);
    // A key named twice in one removal of all: every reference goes, once.
    await dedup.checkMany(["twice", "twice", "twice"]);
    await dedup.removeMany(["twice", "twice"], { all: true });
    expect(Array.from(await dedup.hasMany(["twice"]))).toEqual([0]);
    await dedup.close();
    const again = await openDiskDeduplicator(where, { items: 500 });
    expect(again.size).toBe(refs.size);
    const probe = some;
    const want = reference(probe, refs);
    const got = await again.checkMany(probe);
    expect(Array.from(got.isNew)).toEqual(want.map((w) => w.isNew));
    expect(Array.from(got.counts)).toEqual(want.map((w) => w.count));
    await again.close();
  });

  it("saturated 2-bit counters in a tiny filter never hide a key through insert and remove cycles", async () => {
    const where = dir();
    const dedup = await openDiskDeduplicator(where, { items: 8, fpRate: 0.5, counterBits: 2 });
    const refs = new Map<string, number>();
    const next = rng(4);
    for (let round = 0; round < 20; round++) {
      const add = keysOf(100 + round, 200, 120);
      reference(add, refs);
      await dedup.checkMany(add);
      const drop = [...refs.keys()].filter(() => next() < 0.3);
      await dedup.removeMany(drop, { all: true });
      for (const k of drop) refs.delete(k);
    }
    const everyKey = keysOf(999, 0, 0).concat(Array.from({ length: 120 }, (_, i) => `https://example.com/p/${i}`));
    expect(Array.from(await dedup.hasMany(everyKey))).toEqual(everyKey.map((k) => (refs.has(k) ? 1 : 0)));
    await dedup.close();
  });

  it("a counting filter sized for the load answers most new keys without a table look-up; taking the file in is not counted", async () => {
    const where = dir();
    const first = await openDiskDeduplicator(where, { items: 20000, fpRate: 0.01 });
    const fresh = Array.from({ length: 10000 }, (_, i) => `https://fresh.example/${i}`);
    await first.checkMany(fresh);
    const stats = first.stats;
    expect(stats.new).toBe(10000);
    expect(stats.lookupsAvoided).toBeGreaterThan(9500);
    await first.close();
    const second = await openDiskDeduplicator(where, { items: 20000, fpRate: 0.01 });
    expect(second.stats).toEqual({ seen: 0, new: 0, duplicates: 0, lookups: 0, lookupsAvoided: 0, lookupsForNew: 0 });
    await second.checkMany(fresh.slice(0, 10));
    expect(second.stats.duplicates).toBe(10);
    await second.close();
  });

  it("a torn last batch is cut off and told; a seen-set's directory and bad options are typed errors", async () => {
    const where = dir();
    const dedup = await openDiskDeduplicator(where);
    await dedup.checkMany(["a", "b"]);
    await dedup.close();
    appendFileSync(join(where, "references.log"), Buffer.from([1, 2, 3, 4, 5]));
    const told: string[] = [];
    const again = await openDiskDeduplicator(where, { onRecover: (m) => told.push(m) });
    expect(told.join("\n")).toMatch(/partly written batch/);
    expect(Array.from((await again.checkMany(["a", "c"])).isNew)).toEqual([0, 1]);
    await again.close();
    const seenSet = dir();
    mkdirSync(seenSet, { recursive: true });
    writeFileSync(join(seenSet, "fingerprints.log"), "");
    await expect(openDiskDeduplicator(seenSet)).rejects.toThrow(/holds a disk seen-set/);
    await expect(openDiskDeduplicator(dir(), { counterBits: 3 })).rejects.toThrow(CrawlsieveError);
    await expect(openDiskDeduplicator("")).rejects.toThrow(/a directory path/);
    const closed = await openDiskDeduplicator(dir());
    await closed.close();
    await expect(closed.checkMany(["x"])).rejects.toThrow(/used after dispose/);
  });

  it("imports a StoreDeduplicator's LMDB store once, counts and all, and retires it", async () => {
    const where = dir();
    const old = new StoreDeduplicator(openLmdbStore(where), { items: 1000 });
    const refs = new Map<string, number>();
    const earlier = keysOf(5, 500, 200);
    reference(earlier, refs);
    old.checkMany(earlier);
    old.close();
    const dedup = await openDiskDeduplicator(where);
    expect(dedup.size).toBe(refs.size);
    expect(statSync(join(where, "fingerprints.mdb")).isDirectory()).toBe(true);
    expect(statSync(join(where, "fingerprints.mdb.imported")).isFile()).toBe(true);
    const later = keysOf(6, 300, 300);
    const want = reference(later, refs);
    const got = await dedup.checkMany(later);
    expect(Array.from(got.counts)).toEqual(want.map((w) => w.count));
    await dedup.close();
    // Opened again: the store is not taken in twice.
    const again = await openDiskDeduplicator(where);
    const probe = [...refs.keys()].slice(0, 50);
    expect(Array.from((await again.checkMany(probe)).counts)).toEqual(reference(probe, refs).map((w) => w.count));
    await again.close();
  });
});
