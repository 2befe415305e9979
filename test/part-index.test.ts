// The filter and block index of a disk seen-set's sorted part, saved beside its log
// (src/seen/disk/part-index.ts, issue 46): an open past the memory budget takes them instead of
// reading the part whole, and one that is damaged, torn, stale (of another epoch) or of another
// part is not taken: the part is read as before, every answer stays a Set's, and the index is
// written again for the next open. `stats.diskPartScans` says which way an open went. A store
// closed while a merge ran opens without rewriting its file (a crawler's restart after a fill).
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openDiskSeenSet } from "../build/js/index.node.js";
import * as backgroundMerge from "../build/js/seen/disk/background-merge.js";
import { ready } from "./helpers.js";

beforeAll(ready);
// @internal, so not in the declarations: the gate a merge's thread holds at once written.
const { mergeTestHooks } = backgroundMerge as unknown as { mergeTestHooks: { gate?: SharedArrayBuffer } };

const MEMORY = 16 << 20;
const key = (i: number) => `https://example.org/part-index/${i}`;
const keys = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => key(from + i));
const temp = () => join(mkdtempSync(join(tmpdir(), "crawlsieve-part-index-")), "seen");

/** Adds keys 0, 1, ... a batch at a time until `merges` merges are installed (or `kept` of them kept the filter) and a batch more; the keys added. */
async function fill(dir: string, merges: number, from = 0, kept = 0): Promise<number> {
  const set = await openDiskSeenSet(dir, { memory: MEMORY });
  let next = from;
  while ((set.stats.diskMerges ?? 0) < merges || (set.stats.diskMergesKept ?? 0) < kept || next === from) {
    expect((await set.addMany(keys(next, next + 50_000))).every((f) => f === 1)).toBe(true);
    next += 50_000;
  }
  await set.close();
  return next;
}

/** Opens the store past its budget and checks every key below `added` is present and as many above absent; its part scans. */
async function check(dir: string, added: number): Promise<number> {
  const set = await openDiskSeenSet(dir, { memory: MEMORY });
  try {
    const scans = set.stats.diskPartScans ?? -1;
    for (let i = 0; i < added; i += 100_000) {
      const present = await set.hasMany(keys(i, Math.min(added, i + 100_000)));
      expect(
        present.every((f) => f === 1),
        `keys from ${i}`,
      ).toBe(true);
    }
    const absent = await set.hasMany(keys(added, added + 100_000));
    expect(absent.every((f) => f === 0)).toBe(true);
    expect((set.stats.diskLookups ?? 0) > 0).toBe(true);
    return scans;
  } finally {
    await set.close();
  }
}

describe("a disk seen-set's saved part index", () => {
  it("an open past the budget takes the filter and index a merge saved, and answers as before", async () => {
    const dir = temp();
    const added = await fill(dir, 1);
    expect(existsSync(join(dir, "fingerprints.log.index"))).toBe(true);
    expect(await check(dir, added)).toBe(0);
  });

  it("a merge that kept the set's filter saves it with the bits set meanwhile, and an open takes it and answers as before", async () => {
    const dir = temp();
    // A filter a merge built (16 bits a key for the keys it took) has room for some more: a later
    // merge keeps it, the set having added each key to it as it came.
    const added = await fill(dir, 0, 0, 1);
    expect(await check(dir, added)).toBe(0);
  }, 120_000);

  it("an open takes the keys after the part without a look-up on disk, and the part's filter below its flat share takes none of them: absent keys read at its 16 bits' rate", async () => {
    const dir = temp();
    // One merge (about 0.7 M keys, far below the 4 M of the budget's flat share), then the keys
    // that came while it ran and a batch more, left after the part: held in memory at the open.
    const added = await fill(dir, 1);
    const set = await openDiskSeenSet(dir, { memory: MEMORY });
    try {
      // The keys after the part were new when written: the open takes them without asking the
      // part (it asked each: 500,000 in docs/seen-sets.md's example, with 890 blocks read).
      expect(set.stats.diskLookups).toBe(0);
      expect(set.stats.diskBlocksRead).toBe(0);
      // Those keys added to a filter sized for the part's alone would cut its bits a key (to 9 in
      // docs/seen-sets.md's example, 5% of absent keys reading a block instead of 0.18%).
      expect(set.stats.filterBitsPerKey).toBeGreaterThanOrEqual(15.99);
      const read = set.stats.diskBlocksRead ?? 0;
      const probe = 100_000;
      expect((await set.hasMany(keys(added, added + probe))).every((f) => f === 0)).toBe(true);
      // 100,000 draws of 0.18%: about 180, and well under the 540 a 0.54% rate would give.
      expect((set.stats.diskBlocksRead ?? 0) - read).toBeLessThanOrEqual(400);
      expect((await set.hasMany(keys(0, added))).every((f) => f === 1)).toBe(true);
    } finally {
      await set.close();
    }
  });

  it("a damaged or torn index is not taken: the part is read, no key is lost, and the index is saved again", async () => {
    const dir = temp();
    const added = await fill(dir, 1);
    const index = join(dir, "fingerprints.log.index");
    const good = readFileSync(index);
    // A run of zeros in the middle of the filter: taken, the keys whose bits lie there would read as absent.
    const damaged = Buffer.from(good);
    damaged.fill(0, damaged.length - 200_000, damaged.length - 100_000);
    writeFileSync(index, damaged);
    expect(await check(dir, added)).toBe(1);
    // Saved again by that open (sized for the part's keys, not for those a merge's snapshot may hold): the next takes it.
    expect(readFileSync(index).equals(damaged)).toBe(false);
    expect(await check(dir, added)).toBe(0);
    truncateSync(index, good.length - 1000);
    expect(await check(dir, added)).toBe(1);
    expect(await check(dir, added)).toBe(0);
  });

  it("an index of another epoch of the file is not taken (the part it describes was merged away)", async () => {
    const dir = temp();
    const first = await fill(dir, 1);
    const index = join(dir, "fingerprints.log.index");
    const old = `${index}.old`;
    copyFileSync(index, old);
    // Keys added past the budget again: another merge writes another part, under a new epoch.
    const added = await fill(dir, 1, first);
    copyFileSync(old, index);
    expect(await check(dir, added)).toBe(1);
    expect(await check(dir, added)).toBe(0);
  });

  it("a store closed while a merge ran opens without rewriting its file: the saved index is taken, the keys after the part held, and merged by the next batches", async () => {
    const dir = temp();
    const set = await openDiskSeenSet(dir, { memory: MEMORY });
    let next = 0;
    const add = async () => {
      expect((await set.addMany(keys(next, next + 50_000))).every((f) => f === 1)).toBe(true);
      next += 50_000;
    };
    while ((set.stats.diskMerges ?? 0) < 1) await add();
    // The next merge is held once written, so it is still running at close (which stops it).
    const cells = new Int32Array(new SharedArrayBuffer(8));
    mergeTestHooks.gate = cells.buffer as SharedArrayBuffer;
    try {
      while (!set.stats.diskMerging) await add();
      for (let i = 0; i < 4; i++) await add();
    } finally {
      mergeTestHooks.gate = undefined;
    }
    await set.close();
    // More keys after the part than the budget leaves them, fewer than twice that: the file is not compacted at open (it would be another file).
    const inode = statSync(join(dir, "fingerprints.log")).ino;
    const again = await openDiskSeenSet(dir, { memory: MEMORY });
    expect(statSync(join(dir, "fingerprints.log")).ino).toBe(inode);
    expect(again.stats.diskPartScans).toBe(0);
    expect((await again.hasMany(keys(0, next))).every((f) => f === 1)).toBe(true);
    expect((await again.hasMany(keys(next, next + 100_000))).every((f) => f === 0)).toBe(true);
    // The first batches start the merge the close stopped, in the background.
    for (let i = 0; i < 4 || (again.stats.diskMerges ?? 0) < 1; i++) {
      expect((await again.addMany(keys(next, next + 50_000))).every((f) => f === 1)).toBe(true);
      next += 50_000;
      expect(next).toBeLessThan(4_000_000);
    }
    await again.close();
    expect(await check(dir, next)).toBe(0);
  });

  it("an index of another store (same shape, another part) is not taken", async () => {
    const one = temp();
    const other = temp();
    const added = await fill(one, 1);
    await fill(other, 1, 10_000_000);
    copyFileSync(join(other, "fingerprints.log.index"), join(one, "fingerprints.log.index"));
    expect(await check(one, added)).toBe(1);
  });
});
