import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openLmdbStore, StoreDeduplicator } from "../build/js/index.node.js";
import { randomKeys, ready } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const temp = () => mkdtempSync(join(tmpdir(), "crawlsieve-store-"));

describe("StoreDeduplicator on LMDB", () => {
  it("equals a Set across close and reopen, reusing the saved filter", () => {
    const dir = temp();
    const keys = randomKeys(1, 40_000, 15_000);
    const seen = new Set<string>();
    const expected = keys.map((k) => (seen.has(k) ? 0 : (seen.add(k), 1)));
    let dedup = new StoreDeduplicator(openLmdbStore(dir), { items: 15_000 });
    const first = dedup.checkMany(keys.slice(0, 20_000));
    dedup.close();
    dedup = new StoreDeduplicator(openLmdbStore(dir), { items: 15_000 });
    expect(dedup.rebuilt).toBe(false);
    const second = dedup.checkMany(keys.slice(20_000));
    expect([...first.isNew, ...second.isNew]).toEqual(expected);
    expect(dedup.size).toBe(seen.size);
    dedup.close();
  });

  it("rebuilds a counting filter that does not match the store (not closed, or corrupted)", () => {
    const dir = temp();
    const store = openLmdbStore(dir);
    const dedup = new StoreDeduplicator(store, { items: 1000 });
    dedup.checkMany(["a", "b", "c"]);
    store.close(); // no save: the filter on disk (none) does not match the store's epoch
    const reopened = new StoreDeduplicator(openLmdbStore(dir), { items: 1000 });
    expect(reopened.rebuilt).toBe(true);
    expect(Array.from(reopened.checkMany(["a", "b", "c", "d"]).isNew)).toEqual([0, 0, 0, 1]);
    reopened.close();
    // More keys than one rebuild batch (4,096), the store closed unsaved again: a batch left out of
    // the rebuilt filter would report its keys new.
    const many = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
    const manyStore = openLmdbStore(dir);
    expect(new StoreDeduplicator(manyStore, { items: 1000 }).checkMany(many).isNew.every((x) => x === 1)).toBe(true);
    manyStore.close();
    const rebuiltMany = new StoreDeduplicator(openLmdbStore(dir), { items: 1000 });
    expect(rebuiltMany.rebuilt).toBe(true);
    expect(rebuiltMany.checkMany(many).isNew.some((x) => x === 1)).toBe(false);
    rebuiltMany.close();
    writeFileSync(join(dir, "counting-filter.csiv"), Buffer.from("garbage that is not a filter"));
    const distrusting = new StoreDeduplicator(openLmdbStore(dir), { items: 1000 });
    expect(distrusting.rebuilt).toBe(true);
    expect(Array.from(distrusting.checkMany(["d", "e"]).isNew)).toEqual([0, 1]);
    distrusting.close();
  });
});

describe("openLmdbStore", () => {
  it("refuses a data file that is not LMDB, by name", () => {
    const dir = temp();
    writeFileSync(join(dir, "fingerprints.mdb"), Buffer.alloc(8192, 0x5a));
    expect(() => openLmdbStore(dir)).toThrow(/is not an LMDB fingerprint store/);
  });
});
