// A fresh disk seen-set that outgrows its memory budget while it is open (issue 46, item 0): in a
// child process (test/support/budget-fill-child.mjs) it is filled far past 16 MiB, and its peak
// RSS stays within the budget and a stated margin, its stats show look-ups on disk, absent keys
// read the disk at the filter's rate, and every answer equals a JavaScript Set's. The same for
// `dedup --store DIR --memory 16MiB` against mawk's `!seen[$0]++`. kill -9 while keys move to the
// sorted part (a compaction's file aside), in a loop, loses no key reported new and reports none
// new twice; two writers filling one store past the budget at once each find a key new once, and
// so does a writer killed again and again (during its merges or not) beside one that runs on.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openSeenSet } from "../build/js/index.node.js";
import { ready, rng } from "./helpers.js";
import { exited, watchPeakRss } from "./support/peak-rss.js";
import { keyNumber, keyOf } from "./support/key-numbers.mjs";

beforeAll(ready);

const CHILD = new URL("./support/budget-fill-child.mjs", import.meta.url).pathname;
const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const MEMORY = 16 << 20;
/**
 * What a process takes beside the budget: Node and the kernels' instances (about 60 MiB), a
 * 100,000-key batch's buffers (25), the sorted part's filter past its share of the budget, buffers
 * the collector has not taken yet (up to 50), and while a background merge runs its thread (an
 * isolate of about 10 MiB, its compaction's groups in an eighth of the budget, 8 MiB at least, and
 * the new part's filter) beside the keys frozen for it and those gathering meanwhile. On the fill
 * below (2026-12-03) the code of the merges in a thread peaks at about 190-200 MiB; main's code
 * before item 0, every key in memory, at some 250 (219 on 8 M adds of 12 M numbers).
 */
const MARGIN = 200 << 20;
const temp = () => mkdtempSync(join(tmpdir(), "crawlsieve-grow-"));

interface ChildReport {
  fill: { seconds: number };
  worstBatchMs: number;
  before: {
    keys: number;
    diskLookups?: number;
    diskBlocksRead?: number;
    filterBitsPerKey?: number;
    diskMerges?: number;
    diskMergesKept?: number;
  };
  mid: { diskLookups?: number; diskBlocksRead?: number };
  after: { diskLookups?: number; diskBlocksRead?: number; diskReads?: number; filterFpRate?: number };
  absentFound: number;
  fillPeakRss: number;
  peakRss: number;
}

/** Runs the child with `args` (its JSON), waiting for it; its report. */
function fillChild(args: Record<string, unknown>): ChildReport {
  const run = spawnSync(process.execPath, [CHILD, JSON.stringify({ memory: MEMORY, ...args })], {
    encoding: "utf8",
    timeout: 240_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split("\n").pop() as string) as ChildReport;
}

describe("a fresh disk seen-set filled far past its memory budget", () => {
  it("stays within the budget and a margin, looks keys up on disk, and answers as a Set", () => {
    const dir = temp();
    const flags = join(dir, "..", `${dir.split("/").pop()}.flags`);
    // 10 M keys drawn from 16 M numbers: about 7.1 M distinct (some 170 MB in a table), 2.9 M repeats.
    const n = 10_000_000;
    const distinct = 16_000_000;
    const probe = 200_000;
    const report = fillChild({ dir, n, distinct, flags, probe });
    expect(report.fillPeakRss).toBeLessThanOrEqual(MEMORY + MARGIN);
    expect(report.peakRss).toBeLessThanOrEqual(MEMORY + MARGIN);
    // The keys moved to disk as the set grew: later batches asked the sorted part.
    expect(report.before.diskLookups).toBeGreaterThan(0);
    expect(report.before.diskBlocksRead).toBeGreaterThan(0);
    // Past 4 M keys the filter is at its share of the budget (8 MiB) and has room for more: merges
    // keep it (the set adds each key to it as it comes) rather than build another, and before
    // that they built it (16 bits a key), so both kinds ran and answered as the Set below.
    expect(report.before.diskMergesKept).toBeGreaterThan(0);
    expect(report.before.diskMergesKept).toBeLessThan(report.before.diskMerges as number);
    const got = readFileSync(flags);
    expect(got.length).toBe(n + probe);
    const seen = new Set<number>();
    let wrong = 0;
    for (let i = 0; i < n; i++) {
      const v = keyNumber(i, distinct);
      const expected = seen.has(v) ? 0 : 1;
      seen.add(v);
      if (got[i] !== expected) wrong++;
    }
    expect(wrong).toBe(0);
    expect(report.before.keys).toBe(seen.size);
    let wrongProbe = 0;
    for (let v = 0; v < probe; v++) if (got[n + v] !== (seen.has(v) ? 1 : 0)) wrongProbe++;
    expect(wrongProbe).toBe(0);
    // Absent keys: none found, and blocks read at about the filter's rate (8 to 16 bits a key).
    expect(report.absentFound).toBe(0);
    const bits = report.before.filterBitsPerKey as number;
    expect(bits).toBeGreaterThanOrEqual(8);
    expect(bits).toBeLessThanOrEqual(16.01);
    const absentReads = ((report.after.diskBlocksRead as number) - (report.mid.diskBlocksRead as number)) / probe;
    const rate = report.after.filterFpRate as number;
    // 200,000 draws of the rate: well inside twice it and a few in 10,000.
    expect(absentReads).toBeLessThanOrEqual(2 * rate + 3e-4);
    expect((report.after.diskLookups as number) - (report.mid.diskLookups as number)).toBe(probe);
  }, 180_000);

  it("dedup --store DIR --memory 16MiB prints what mawk '!seen[$0]++' prints, within the budget and a margin", async () => {
    const dir = temp();
    const input = join(dir, "lines.txt");
    // 3 M lines of about 2.3 M distinct URLs, in random order.
    const out = createWriteStream(input);
    for (let i = 0; i < 3_000_000; i += 100_000) {
      let chunk = "";
      for (let j = i; j < i + 100_000; j++) chunk += `${keyOf(keyNumber(j, 4_000_000))}\n`;
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
    }
    await new Promise((resolve) => out.end(resolve));
    const expected = execFileSync("mawk", ["!seen[$0]++", input], { maxBuffer: 1 << 30 });
    const store = join(dir, "store");
    const child = spawn(
      process.execPath,
      [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", dir, "--stats", input],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const peak = watchPeakRss(child, 2 ** 30);
    const chunks: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const code = await exited(child);
    peak.stop();
    expect(code, err).toBe(0);
    expect(Buffer.concat(chunks).equals(expected)).toBe(true);
    expect(peak.peak).toBeLessThanOrEqual(MEMORY + MARGIN);
    // The next run, against the store now past its budget, finds every line seen.
    const again = spawnSync(process.execPath, [CLI, "dedup", "--store", store, "--memory", "16MiB", input], {
      maxBuffer: 1 << 30,
    });
    expect(again.status, again.stderr.toString()).toBe(0);
    expect(again.stdout.length).toBe(0);
  }, 180_000);
});

describe("kill -9 while a fresh store moves its keys to disk", () => {
  it("loses no key reported new and reports none new twice, killed during a merge again and again", async () => {
    const dir = temp();
    const flags = join(dir, "..", `${dir.split("/").pop()}.flags`);
    let acknowledged = 0;
    let killedInMerge = 0;
    for (let round = 0; round < 3; round++) {
      // Keys 0, 1, 2, … every run from the first: those an earlier run acknowledged must be seen.
      const args = { dir, n: 10_000_000, distinct: 0, batch: 20_000, flags, progress: true, known: acknowledged };
      const child = spawn(process.execPath, [CHILD, JSON.stringify({ memory: MEMORY, ...args })], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      // Killed once a merge's file is aside: the first merge of this run, or the second.
      let merges = 0;
      let inMerge = false;
      const poll = setInterval(() => {
        const aside = readdirSync(dir).some((name) => name.endsWith(".tmp"));
        // Only once the set is open and adding (a file aside before is the store's creation, or a compaction at open).
        const adding = out.length > 0;
        if (aside && adding && !inMerge && ++merges > round % 2 && child.exitCode === null) {
          child.kill("SIGKILL");
          killedInMerge++;
          clearInterval(poll);
        }
        inMerge = aside && adding;
      }, 2);
      const code = await exited(child);
      clearInterval(poll);
      expect(err).toBe("");
      expect(code).toBe("SIGKILL");
      const last = Number(out.trim().split("\n").pop() ?? 0);
      acknowledged = Math.max(acknowledged, last);
    }
    expect(killedInMerge).toBe(3);
    expect(acknowledged).toBeGreaterThan(700_000);
    // Every key reported new by any run is there, and a last run (not killed) reports none of them new.
    const set = await openSeenSet({ backend: "disk", path: dir, memory: MEMORY });
    for (let i = 0; i < acknowledged; i += 100_000) {
      const keys = Array.from({ length: Math.min(100_000, acknowledged - i) }, (_, j) => keyOf(i + j));
      expect(
        (await set.hasMany(keys)).every((f) => f === 1),
        `keys from ${i}`,
      ).toBe(true);
    }
    await set.close();
    fillChild({ dir, n: acknowledged, distinct: 0, flags, known: acknowledged });
  }, 240_000);

  it("two writers filling one fresh store past the budget at once find each key new exactly once", async () => {
    const dir = temp();
    const n = 1_600_000;
    const runs = [0, 1].map((w) => {
      const flags = join(dir, "..", `${dir.split("/").pop()}.${w}.flags`);
      const child = spawn(
        process.execPath,
        [CHILD, JSON.stringify({ memory: MEMORY, dir, n, distinct: 0, batch: 20_000, flags })],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let err = "";
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      return { flags, done: exited(child).then((code) => ({ code, err })) };
    });
    for (const run of runs) {
      const { code, err } = await run.done;
      expect(code, err).toBe(0);
    }
    const [a, b] = runs.map((run) => readFileSync(run.flags));
    let wrong = 0;
    for (let i = 0; i < n; i++) if (a[i] + b[i] !== 1) wrong++;
    expect(wrong).toBe(0);
    // The store was merged past its budget: its sorted part holds keys.
    expect(readFileSync(join(dir, "fingerprints.log")).readUInt32LE(12)).toBeGreaterThan(0);
  }, 240_000);

  it("one writer killed -9 again and again while another fills the store: each key new at most once, none lost", async () => {
    const dir = temp();
    const n = 1_600_000;
    const random = rng(46);
    const child = (flags: string, progress: boolean) => {
      const run = spawn(
        process.execPath,
        [CHILD, JSON.stringify({ memory: MEMORY, dir, n, distinct: 0, batch: 20_000, flags, progress })],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      let err = "";
      run.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      run.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      return { run, out: () => out, err: () => err, done: exited(run) };
    };
    const steady = child(join(dir, "..", `${dir.split("/").pop()}.steady.flags`), false);
    const killed: string[] = [];
    // Three runs of the other writer, each killed at a random point of its fill (merges run in
    // their threads every few hundred thousand keys, so some kills land inside one).
    for (let round = 0; round < 3; round++) {
      const flags = join(dir, "..", `${dir.split("/").pop()}.killed-${round}.flags`);
      const at = 200_000 + Math.floor(random() * 600_000);
      const victim = child(flags, true);
      await new Promise<void>((resolve) => {
        const check = () => {
          if (Number(victim.out().trim().split("\n").pop() ?? 0) >= at && victim.run.exitCode === null) {
            victim.run.kill("SIGKILL");
            resolve();
          }
        };
        victim.run.stdout.on("data", check);
        victim.run.on("exit", () => resolve());
      });
      const code = await victim.done;
      expect(victim.err()).toBe("");
      // It may have finished first (the steady writer added most keys): then it exited 0.
      expect(["SIGKILL", 0]).toContain(code);
      killed.push(flags);
    }
    const code = await steady.done;
    expect(code, steady.err()).toBe(0);
    const files = [
      readFileSync(join(dir, "..", `${dir.split("/").pop()}.steady.flags`)),
      ...killed.map((f) => readFileSync(f)),
    ];
    let twice = 0;
    for (let i = 0; i < n; i++) {
      let news = 0;
      for (const file of files) if (i < file.length) news += file[i];
      if (news > 1) twice++;
    }
    expect(twice).toBe(0);
    // The steady writer ran to the end: every key is there, once each.
    const set = await openSeenSet({ backend: "disk", path: dir, memory: MEMORY });
    expect(await set.size()).toBe(n);
    for (let i = 0; i < n; i += 100_000) {
      const flags = await set.hasMany(Array.from({ length: 100_000 }, (_, j) => keyOf(i + j)));
      expect(
        flags.every((f) => f === 1),
        `keys from ${i}`,
      ).toBe(true);
    }
    await set.close();
  }, 240_000);
});
