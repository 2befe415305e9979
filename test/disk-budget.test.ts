// openDiskSeenSet({ memory }) past its budget (src/seen/disk/tiered-table.ts, cold-keys.ts): the
// file's sorted part stays on disk behind a filter and a block index. Checked against a JavaScript
// Set replaying the same adds and removals, across reopenings, with another process's set (held
// whole in memory) writing and compacting the file meanwhile; absent keys read a block at about
// the filter's rate (measured on 200,000 of them); a block damaged after the open is a typed error.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openDiskSeenSet, openSeenSet } from "../build/js/index.node.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const temp = () => mkdtempSync(join(tmpdir(), "crawlsieve-budget-"));
const MEMORY = 16 << 20;
/** 1.2 M keys take some 29 MB in a table: more than the 16 MiB budget. */
const N = 1_200_000;
const key = (i: number) => `https://example.com/page/${i}`;

/** Adds keys [from, to) in batches of 100,000 through a set held whole in memory, then closes it. */
async function fill(dir: string, from: number, to: number, env: Record<string, string> = {}): Promise<void> {
  // In a child process, so its compaction at close sees the environment given.
  const script = `import { openDiskSeenSet } from ${JSON.stringify(new URL("../build/js/index.node.js", import.meta.url).pathname)};
    const set = await openDiskSeenSet(${JSON.stringify(dir)});
    for (let i = ${from}; i < ${to}; i += 100000) await set.addMany(Array.from({ length: Math.min(100000, ${to} - i) }, (_, j) => "https://example.com/page/" + (i + j)));
    await set.close();`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, ...env },
    timeout: 180_000,
  });
  expect(run.status, run.stderr.toString()).toBe(0);
}

/** A store of keys [0, N) opened with the 16 MiB budget: its folder, the set, and the store's file. */
async function filledPastBudget() {
  const dir = temp();
  await fill(dir, 0, N);
  return { dir, set: await openDiskSeenSet(dir, { memory: MEMORY }), path: join(dir, "fingerprints.log") };
}

describe("openDiskSeenSet({ memory }) past its budget", () => {
  it("answers as a Set replaying the same calls: adds, removals, re-adds, repeats within a batch, across reopenings", async () => {
    const dir = temp();
    await fill(dir, 0, N);
    const live = new Set<string>(Array.from({ length: N }, (_, i) => key(i)));
    const random = rng(7);
    let set = await openDiskSeenSet(dir, { memory: MEMORY });
    expect(set.stats.diskLookups).toBe(0);
    expect(await set.size()).toBe(N);
    const wrong: string[] = [];
    for (let round = 0; round < 12; round++) {
      // Keys old and new, some twice in one batch; every fourth round forgets instead.
      const batch = Array.from({ length: 3000 }, () => key(Math.floor(random() * (N + 20_000))));
      batch.push(batch[0], batch[1]);
      const forget = round % 4 === 3;
      const got = forget ? await set.removeMany(batch) : await set.addMany(batch);
      batch.forEach((k, i) => {
        const expected = forget ? live.delete(k) : !live.has(k) && Boolean(live.add(k));
        if ((got[i] === 1) !== expected) wrong.push(`${forget ? "remove" : "add"} ${k}: ${got[i]}`);
      });
      if (round === 5) {
        await set.close();
        set = await openDiskSeenSet(dir, { memory: MEMORY });
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    const probe = Array.from({ length: 20_000 }, (_, i) => key(N - 10_000 + i));
    const has = await set.hasMany(probe);
    expect(probe.filter((k, i) => (has[i] === 1) !== live.has(k)).length).toBe(0);
    expect(await set.size()).toBe(live.size);
    await set.close();
    // Held whole in memory again, the same keys.
    const whole = await openSeenSet({ backend: "disk", path: dir });
    const again = await whole.hasMany(probe);
    expect(probe.filter((k, i) => (again[i] === 1) !== live.has(k)).length).toBe(0);
    await whole.close();
  }, 120_000);

  it("one call of more keys than a look-up holds (2^17 let through) answers each: present, absent, repeated", async () => {
    const { set } = await filledPastBudget();
    const random = rng(46_3);
    // 250,000 present keys (some twice) and 100,000 absent ones, shuffled: the look-up's regions grow, then a call takes two.
    const keys = [
      ...Array.from({ length: 250_000 }, () => key(Math.floor(random() * N))),
      ...Array.from({ length: 100_000 }, (_, i) => `https://example.org/absent/${i}`),
    ];
    for (let i = keys.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [keys[i], keys[j]] = [keys[j], keys[i]];
    }
    const got = await set.hasMany(keys);
    const wrong = keys.filter((k, i) => (got[i] === 1) !== k.startsWith("https://example.com/"));
    expect(wrong.slice(0, 5)).toEqual([]);
    expect((set as unknown as { stats: { diskLookups: number } }).stats.diskLookups).toBe(keys.length);
    await set.close();
  }, 120_000);

  it("an absent key reads a block at the filter's rate; a present one reads its block", async () => {
    const dir = temp();
    await fill(dir, 0, N);
    const set = await openSeenSet({ backend: "disk", path: dir, memory: MEMORY });
    const absent = Array.from({ length: 200_000 }, (_, i) => `https://example.org/absent/${i}`);
    expect(Array.from(await set.hasMany(absent)).every((f) => f === 0)).toBe(true);
    const { diskLookups, diskBlocksRead } = (
      set as unknown as { stats: { diskLookups: number; diskBlocksRead: number } }
    ).stats;
    expect(diskLookups).toBe(200_000);
    // A 16-bit split-block filter: about 0.2% of absent keys pass; 8 bits (its floor) about 2%.
    expect(diskBlocksRead).toBeLessThan(0.03 * 200_000);
    const present = Array.from({ length: 1000 }, (_, i) => key(i * 997));
    expect(Array.from(await set.hasMany(present)).every((f) => f === 1)).toBe(true);
    const after = (set as unknown as { stats: { diskBlocksRead: number } }).stats.diskBlocksRead;
    // One block each at most: a block two of them share is read once.
    expect(after - diskBlocksRead).toBeGreaterThan(800);
    expect(after - diskBlocksRead).toBeLessThanOrEqual(1000);
    await set.close();
  }, 120_000);

  it("follows another process's writes and its compaction of the file", async () => {
    const { dir, set } = await filledPastBudget();
    expect(Array.from(await set.hasMany([key(5), key(N + 5)]))).toEqual([1, 0]);
    // Other processes add 1.3 M keys after the sorted part (read by this set into memory), then one
    // finds them outgrowing it and, told to, compacts the file at close: a new file in its place.
    const M = N + 1_300_000;
    await fill(dir, N, M);
    expect(Array.from(await set.hasMany([key(5), key(N + 5), key(M + 5)]))).toEqual([1, 1, 0]);
    const epoch = readFileSync(join(dir, "fingerprints.log")).readUInt32LE(8);
    await fill(dir, M, M + 10, { CRAWLSIEVE_TEST_COMPACT_FROM: "1" });
    expect(readFileSync(join(dir, "fingerprints.log")).readUInt32LE(8)).not.toBe(epoch);
    expect(readFileSync(join(dir, "fingerprints.log")).readUInt32LE(12)).toBe(M + 10);
    const asked = set.stats.diskLookups!;
    expect(Array.from(await set.hasMany([key(5), key(N + 5), key(M + 5), key(M + 15)]))).toEqual([1, 1, 1, 0]);
    // Looked up in the new file's sorted part, not read whole into memory.
    expect(set.stats.diskLookups).toBe(asked + 4);
    expect(Array.from(await set.addMany([key(N + 6), key(M + 16)]))).toEqual([0, 1]);
    expect(await set.size()).toBe(M + 11);
    await set.close();
  }, 120_000);

  it("merges the keys it holds in memory into the file's sorted part once they outgrow what the budget leaves them", async () => {
    const { set, path } = await filledPastBudget();
    expect(readFileSync(path).readUInt32LE(12)).toBe(N);
    // 700,000 new keys take some 17 MB in a table: past the 16 MiB budget less the filter and index.
    for (let i = N; i < N + 700_000; i += 50_000) {
      const flags = await set.addMany(Array.from({ length: 50_000 }, (_, j) => key(i + j)));
      expect(flags.every((f) => f === 1)).toBe(true);
    }
    // The merge runs in a thread of its own while calls go on; a later call installs it.
    expect(set.stats.diskMerging).toBe(true);
    expect(set.stats.diskMerges).toBe(0);
    while (set.stats.diskMerges === 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      await set.size();
    }
    expect(set.stats.diskMerging).toBe(false);
    const sorted = readFileSync(path).readUInt32LE(12);
    expect(sorted).toBeGreaterThan(N);
    expect(sorted).toBeLessThanOrEqual(N + 700_000);
    const probe = Array.from({ length: 50_000 }, (_, i) => key(N + 680_000 + i));
    const has = await set.hasMany(probe);
    expect(probe.filter((_, i) => (has[i] === 1) !== N + 680_000 + i < N + 700_000).length).toBe(0);
    expect(await set.size()).toBe(N + 700_000);
    await set.close();
  }, 120_000);

  it("keeps every key it reported new through kill -9, across a merge into the file", async () => {
    const { dir, set } = await filledPastBudget();
    await set.close();
    // A child adds new keys 10,000 a call past its budget and prints how many were reported new and
    // its merges (installed, running); it is killed once a merge has passed and the next one runs.
    const script = `import { openDiskSeenSet } from ${JSON.stringify(new URL("../build/js/index.node.js", import.meta.url).pathname)};
      const set = await openDiskSeenSet(${JSON.stringify(dir)}, { memory: ${MEMORY} });
      for (let i = ${N}; ; i += 10000) {
        const flags = await set.addMany(Array.from({ length: 10000 }, (_, j) => "https://example.com/page/" + (i + j)));
        if (!flags.every((f) => f === 1)) throw new Error("not new at " + i);
        process.stdout.write(i + 10000 + " " + set.stats.diskMerges + " " + set.stats.diskMerging + "\\n");
      }`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise((resolve) => child.on("exit", resolve));
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const [, merges, merging] = (out.trim().split("\n").pop() ?? "").split(" ");
        if (Number(merges) >= 1 && merging === "true") {
          child.kill("SIGKILL");
          resolve();
        }
      });
      child.on("exit", () => resolve());
    });
    await exited;
    expect(err).toBe("");
    const acknowledged = Number(out.trim().split("\n").pop()?.split(" ")[0]);
    expect(acknowledged).toBeGreaterThanOrEqual(N + 500_000);
    // The merge happened (the sorted part grew past the fill), and every key reported new is there.
    expect(readFileSync(join(dir, "fingerprints.log")).readUInt32LE(12)).toBeGreaterThan(N);
    const again = await openDiskSeenSet(dir, { memory: MEMORY });
    const keys = Array.from({ length: acknowledged }, (_, i) => key(i));
    for (let i = 0; i < keys.length; i += 200_000) {
      const has = await again.hasMany(keys.slice(i, i + 200_000));
      expect(
        has.every((f) => f === 1),
        `keys from ${i}`,
      ).toBe(true);
    }
    await again.close();
  }, 120_000);

  it("a block damaged after the open is a typed error naming the file, never a wrong answer", async () => {
    const { set, path } = await filledPastBudget();
    const bytes = readFileSync(path);
    // Every fingerprint of the first record changed: a key there reads a changed block.
    for (let at = 24; at < 24 + 16 * 65_536; at += 16) bytes[at] ^= 0x55;
    writeFileSync(path, bytes);
    const error = await set.hasMany(Array.from({ length: 5000 }, (_, i) => key(i))).catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe("ERR_STORE_CORRUPT");
    expect((error as Error).message).toContain(path);
    await set.close().catch(() => undefined);
  }, 120_000);

  it("refuses a budget under 16 MiB, naming it", async () => {
    await expect(openDiskSeenSet(temp(), { memory: 1 << 20 })).rejects.toThrow(/memory/);
  });
});
