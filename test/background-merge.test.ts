// Background merges of a disk seen-set with a memory budget (src/seen/disk/background-merge.ts,
// issue 46 item 1): the merge's thread is held at a gate once it has written its file
// (mergeTestHooks), so the test knows a merge is running without a clock. While it is held,
// batches go on and are answered (they never wait for it); keys added, forgotten and added again
// meanwhile answer as a JavaScript Set replaying the same calls, before and after the install and
// after reopening; a merge whose file another process compacted meanwhile is discarded; one that
// fills the disk (a real tmpfs, test/support/full-disk.ts) leaves the store as it was.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDiskSeenSet } from "../build/js/index.node.js";
import * as backgroundMerge from "../build/js/seen/disk/background-merge.js";
import { FileLog } from "../build/js/seen/disk/file-log.js";
import { Arena } from "../build/js/wasm/arena.js";
import { ready } from "./helpers.js";
import { onFullDisk } from "./support/full-disk.js";

beforeAll(ready);
// @internal, so not in the declarations: the gate the merge's thread holds at.
const { mergeTestHooks } = backgroundMerge as unknown as {
  mergeTestHooks: { gate?: SharedArrayBuffer; memories?: WebAssembly.Memory[] };
};
/** Atomics.waitAsync (Node 16+), not in this TypeScript's lib. */
const waitAsync = (Atomics as unknown as { waitAsync: (a: Int32Array, i: number, v: number) => { value: unknown } })
  .waitAsync;
afterEach(() => {
  mergeTestHooks.gate = undefined;
  mergeTestHooks.memories = undefined;
});

const MEMORY = 16 << 20;
const key = (i: number) => `https://example.com/merge/${i}`;
const keys = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => key(from + i));
const temp = () => join(mkdtempSync(join(tmpdir(), "crawlsieve-bgmerge-")), "seen");

/** A gate every merge started from now on holds at once its file is written. */
function gate(): { waiting: () => Promise<void>; open: () => void } {
  const shared = new SharedArrayBuffer(8);
  const cells = new Int32Array(shared);
  mergeTestHooks.gate = shared;
  return {
    async waiting() {
      while (Atomics.load(cells, 0) === 0) await waitAsync(cells, 0, 0).value;
    },
    open() {
      Atomics.store(cells, 1, 1);
      Atomics.notify(cells, 1);
    },
  };
}

/** Whether two memories are one: a byte written through the first is read through the second (and put back). */
function aliases(a: WebAssembly.Memory, b: WebAssembly.Memory): boolean {
  const x = new Uint8Array(a.buffer);
  const y = new Uint8Array(b.buffer);
  const was = x[8];
  x[8] = was ^ 0xff;
  const same = y[8] === (was ^ 0xff);
  x[8] = was;
  return same;
}

/** Calls the set until a merge is installed (each call polls it). */
async function untilMerged(set: Awaited<ReturnType<typeof openDiskSeenSet>>, merges: number): Promise<void> {
  while ((set.stats.diskMerges ?? 0) < merges) {
    await new Promise((resolve) => setImmediate(resolve));
    await set.size();
  }
}

describe("a disk seen-set's merge in a thread of its own", () => {
  it("lets batches go on while the merge is held, and answers as a Set through adds, removals and re-adds", async () => {
    const dir = temp();
    const held = gate();
    const set = await openDiskSeenSet(dir, { memory: MEMORY });
    const expected = new Set<string>();
    const add = async (list: string[]) => {
      const flags = await set.addMany(list);
      const want = list.map((k) => (expected.has(k) ? 0 : (expected.add(k), 1)));
      expect(Array.from(flags)).toEqual(want);
    };
    // 800,000 keys outgrow what 16 MiB leaves the keys in memory: a merge starts.
    for (let i = 0; i < 800_000; i += 50_000) await add(keys(i, i + 50_000));
    expect(set.stats.diskMerging).toBe(true);
    await held.waiting();
    // Held: every batch below is answered though the merge cannot end.
    await add(keys(800_000, 900_000));
    await add(keys(0, 1000));
    const gone = [...keys(10, 20), ...keys(850_000, 850_010)];
    expect(Array.from(await set.removeMany(gone)).every((f) => f === 1)).toBe(true);
    for (const k of gone) expected.delete(k);
    await add(keys(15, 17));
    expect(set.stats.diskMerges).toBe(0);
    expect(set.stats.diskMerging).toBe(true);
    held.open();
    await untilMerged(set, 1);
    const sorted = readFileSync(join(dir, "fingerprints.log")).readUInt32LE(12);
    expect(sorted).toBeGreaterThan(500_000);
    expect(sorted).toBeLessThanOrEqual(800_000);
    const probe = [...keys(0, 30), ...keys(799_990, 800_010), ...keys(849_995, 850_015), key(2_000_000)];
    const check = async (s: typeof set) =>
      expect(Array.from(await s.hasMany(probe))).toEqual(probe.map((k) => (expected.has(k) ? 1 : 0)));
    await check(set);
    expect(await set.size()).toBe(expected.size);
    await add(keys(899_990, 900_010));
    await set.close();
    const again = await openDiskSeenSet(dir, { memory: MEMORY });
    await check(again);
    expect(await again.size()).toBe(expected.size);
    await again.close();
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000);

  it("builds each filter in a shared memory used as it is, two memories taking turns, and answers as a Set", async () => {
    const dir = temp();
    const memories: WebAssembly.Memory[] = [];
    mergeTestHooks.memories = memories;
    const set = await openDiskSeenSet(dir, { memory: MEMORY });
    // Three merges: 16 MiB leaves the keys in memory room for some 700,000 at first, fewer once a part's filter and index take their share.
    let next = 0;
    while ((set.stats.diskMerges ?? 0) < 3) {
      const flags = await set.addMany(keys(next, next + 50_000));
      expect(flags.every((f) => f === 1)).toBe(true);
      next += 50_000;
      expect(next).toBeLessThan(4_000_000);
    }
    // The first merge's memory is new, the second's too (the first part's filter is in use); the third takes the one the first part's filter left (the same memory, come back from the thread as another object).
    expect(memories.length).toBe(3);
    for (const memory of memories) expect(memory.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(aliases(memories[0], memories[1])).toBe(false);
    expect(aliases(memories[0], memories[2])).toBe(true);
    // Every key added is present, held or on disk, and keys never added are absent.
    const probe = [...keys(0, 20_000), ...keys(next - 20_000, next), ...keys(next, next + 20_000)];
    const present = await set.hasMany(probe);
    expect(present.slice(0, 40_000).every((f) => f === 1)).toBe(true);
    expect(present.slice(40_000).every((f) => f === 0)).toBe(true);
    const again = await set.addMany(keys(0, 100_000));
    expect(again.every((f) => f === 0)).toBe(true);
    expect((set.stats.diskLookups ?? 0) > 0).toBe(true);
    await set.close();
    const reopened = await openDiskSeenSet(dir, { memory: MEMORY });
    expect((await reopened.hasMany(probe)).reduce((a, b) => a + b, 0)).toBe(40_000);
    await reopened.close();
  });

  it("is discarded when another process compacts the file meanwhile, and no key is lost", async () => {
    const dir = temp();
    const held = gate();
    const set = await openDiskSeenSet(dir, { memory: MEMORY });
    for (let i = 0; i < 800_000; i += 50_000) await set.addMany(keys(i, i + 50_000));
    await held.waiting();
    // Another writer compacts the file under the lock: the held merge's snapshot is of a file replaced.
    const other = new FileLog(join(dir, "fingerprints.log"), true);
    await other.read();
    other.compact(new Arena());
    await other.close();
    held.open();
    expect(Array.from(await set.addMany(keys(799_999, 800_001)))).toEqual([0, 1]);
    expect(set.stats.diskMerging).toBe(false);
    expect(set.stats.diskMerges).toBe(0);
    expect(Array.from(await set.hasMany([key(0), key(400_000), key(800_000), key(800_001)]))).toEqual([1, 1, 1, 0]);
    expect(await set.size()).toBe(800_001);
    await set.close();
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000);

  it("a merge still running at close is stopped and its file removed; the store is whole", async () => {
    const dir = temp();
    gate();
    const set = await openDiskSeenSet(dir, { memory: MEMORY });
    for (let i = 0; i < 800_000; i += 50_000) await set.addMany(keys(i, i + 50_000));
    expect(set.stats.diskMerging).toBe(true);
    await set.close();
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    mergeTestHooks.gate = undefined;
    const again = await openDiskSeenSet(dir, { memory: MEMORY });
    expect(Array.from(await again.hasMany([key(0), key(799_999), key(800_000)]))).toEqual([1, 1, 0]);
    expect(await again.size()).toBe(800_000);
    await again.close();
  }, 120_000);
});

describe("a disk seen-set's merge on a full disk", () => {
  it("leaves the store as it was: every key reported new stays, the full append is ERR_STORE_FULL, nothing is left aside", () => {
    const work = mkdtempSync(join(tmpdir(), "crawlsieve-bgmerge-full-"));
    const script = join(work, "fill.mjs");
    // A 40 MiB tmpfs: the first merge (some 11 MB of file, written aside) fits, a later one (the
    // file, its copy aside and the partition files) does not, and the appends go on until it is full.
    writeFileSync(
      script,
      `import { readdirSync } from "node:fs";
      import { openDiskSeenSet } from ${JSON.stringify(new URL("../build/js/index.node.js", import.meta.url).pathname)};
      const key = (i) => "https://example.com/merge/" + i;
      const keys = (from, n) => Array.from({ length: n }, (_, i) => key(from + i));
      const dir = process.env.FULL + "/store";
      const told = [];
      const set = await openDiskSeenSet(dir, { memory: ${MEMORY}, onRecover: (m) => told.push(m) });
      let acknowledged = 0;
      let error;
      try {
        for (let i = 0; i < 4_000_000; i += 50_000) {
          const flags = await set.addMany(keys(i, 50_000));
          if (!flags.every((f) => f === 1)) throw new Error("a key reported new twice, at " + i);
          acknowledged = i + 50_000;
        }
      } catch (e) {
        error = { code: e.code, message: e.message, merging: set.stats.diskMerging, merges: set.stats.diskMerges };
      }
      await set.close();
      const asides = readdirSync(dir).filter((name) => name.endsWith(".tmp"));
      const again = await openDiskSeenSet(dir);
      let missing = 0;
      for (let i = 0; i < acknowledged; i += 100_000)
        missing += (await again.hasMany(keys(i, Math.min(100_000, acknowledged - i)))).filter((f) => f === 0).length;
      const size = await again.size();
      await again.close();
      process.stdout.write(JSON.stringify({ acknowledged, error, told, asides, missing, size }));`,
    );
    const run = onFullDisk("40m", `"$NODE" "$SCRIPT"`, {
      FULL: join(work, "full"),
      NODE: process.execPath,
      SCRIPT: script,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    const got = JSON.parse(run.stdout) as {
      acknowledged: number;
      error?: { code: string; message: string; merging: boolean; merges: number };
      told: string[];
      asides: string[];
      missing: number;
      size: number;
    };
    expect(got.error?.code, got.error?.message).toBe("ERR_STORE_FULL");
    // The disk filled during a merge: either the merge's own writes failed first (told, its keys
    // kept in memory), or an append did while it ran (the failed batch makes the set read the file
    // again, and the merge is dropped with it).
    const mergeFailed = got.told.some(
      (m) => /merging \d+ keys held in memory into .* failed/.test(m) && /full|ENOSPC|space/i.test(m),
    );
    expect(mergeFailed || got.error?.merging === true, got.told.join("\n")).toBe(true);
    // At least one merge was installed before the disk filled (the file sorted, its saved part
    // index beside it): how many keys that takes moves with the space the index needs and with how
    // the appends and the merges interleave, so the count is a floor, not a figure.
    expect(got.error?.merges).toBeGreaterThanOrEqual(1);
    expect(got.acknowledged).toBeGreaterThan(1_000_000);
    expect(got.missing).toBe(0);
    expect(got.size).toBe(got.acknowledged);
    expect(got.asides).toEqual([]);
  }, 120_000);
});
