// Compaction of the disk seen-set's file (src/seen/disk/log-compaction.ts, file-log.ts): the live
// fingerprints rewritten once each in the tables' order, the file renamed into place. Checked
// against a replay of the same adds and forgets in a JavaScript Map, against awk for the command
// line, with a second process holding the old file, and with kill -9 while the new file is written.
import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  appendFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDiskSeenSet } from "../build/js/index.node.js";
import { createLogFile } from "../build/js/seen/disk/file-log.js";
import { writeCompaction } from "../build/js/seen/disk/log-compaction.js";
import { Arena } from "../build/js/wasm/arena.js";
import { decodeRecords, encodeRecords } from "../build/js/seen/fingerprint-batches.js";
import { awkFirst, randomKeys, ready } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const temp = () => mkdtempSync(join(tmpdir(), "crawlsieve-compact-"));

beforeAll(ready);
afterEach(() => {
  delete process.env.CRAWLSIEVE_TEST_COMPACT_FROM;
  delete process.env.CRAWLSIEVE_TEST_COMPACT_PASSES;
});

/** The fingerprints of a seen-set file, packed 16 bytes each in file order (header skipped, records verified). */
function fileFingerprints(path: string): Uint8Array {
  const bytes = new Uint8Array(readFileSync(path));
  const batches = decodeRecords(bytes.subarray(16), path).batches;
  const out = new Uint8Array(batches.reduce((n, b) => n + b.fingerprints.length, 0));
  let at = 0;
  for (const batch of batches) {
    out.set(batch.fingerprints, at);
    at += batch.fingerprints.length;
  }
  return out;
}

/** The count of sorted fingerprints in the file's header (bytes 12-15). */
const sortedCount = (path: string) => readFileSync(path).readUInt32LE(12);

/** True when packed fingerprints are in strictly increasing table order: partition (the high word's top 6 bits), then low word, then high word. */
function inTableOrder(packed: Uint8Array): boolean {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.length);
  // As 32-bit words, most significant first.
  const key = (i: number) => [
    packed[16 * i + 15] >> 2,
    view.getUint32(16 * i + 4, true),
    view.getUint32(16 * i, true),
    view.getUint32(16 * i + 12, true),
    view.getUint32(16 * i + 8, true),
  ];
  for (let i = 1; i < packed.length / 16; i++) {
    const [a, b] = [key(i - 1), key(i)];
    const at = b.findIndex((word, j) => word !== a[j]);
    if (at < 0 || b[at] < a[at]) return false;
  }
  return true;
}

describe("compaction of the disk seen-set's file", () => {
  it("keeps each live fingerprint once, in table order, the last add or forget deciding, in one pass, several, or through partition files", () => {
    // 1 M fingerprints: 36 MB of entries, more than one 32 MiB pass. Each is random bits (xorshift32,
    // seeded) with its index in bytes 8-11, so the checks below need no strings.
    const words = new Uint32Array(4 * 1_000_000);
    for (let i = 0, x = 2463534242; i < words.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      words[i] = x >>> 0;
    }
    for (let i = 0; i < 1_000_000; i++) words[4 * i + 2] = i;
    const keys = Array.from({ length: 1_000_000 }, (_, i) => new Uint8Array(words.buffer, 16 * i, 16));
    const indexOf = (f: Uint8Array) => new DataView(f.buffer, f.byteOffset, 16).getUint32(8, true);
    // 80,000 fingerprints in one partition, half of them with one top byte of the low word, and a
    // few with equal low words, sorted on their high words.
    for (let i = 0; i < 80_000; i++) keys[i][15] = 0x0c;
    for (let i = 40_000; i < 80_000; i++) keys[i][7] = 0x5a;
    for (let i = 200; i < 210; i++) keys[i].set(keys[200].subarray(0, 8), 0);
    const pack = (list: Uint8Array[]) => {
      const out = new Uint8Array(16 * list.length);
      list.forEach((k, i) => out.set(k, 16 * i));
      return out;
    };
    // Adds, forgets (some of keys never added), adds again of some forgotten, adds twice.
    const ops: [Uint8Array[], boolean][] = [
      [keys.slice(0, 700_000), false],
      [keys.slice(150_000, 270_000), true],
      [keys.slice(850_000, 880_000), true],
      [keys.slice(240_000, 360_000), false],
      [keys.slice(0, 100), false],
      [keys.slice(700_000, 1_000_000), false],
      [keys.slice(970_000, 1_000_000), true],
      [keys.slice(199, 205), true],
    ];
    const live = new Uint8Array(keys.length);
    for (const [list, forget] of ops) for (const k of list) live[indexOf(k)] = forget ? 0 : 1;
    const liveCount = live.reduce((sum, x) => sum + x, 0);
    const dir = temp();
    const path = join(dir, "fingerprints.log");
    createLogFile(
      path,
      "xxh128",
      ops.map(([list, forget]) => encodeRecords(pack(list), forget)),
    );
    // A torn last record, never acknowledged: left out.
    appendFileSync(
      path,
      encodeRecords(pack(keys.slice(0, 10).map((k) => k.map((b) => b ^ 0xff))), false).subarray(0, 100),
    );
    const bodies: Buffer[] = [];
    // A fresh instance (passes of 32 MiB: two), one whose memory holds every partition (one pass),
    // and a fresh one past its budget: every entry to a file of its partition, read back in two groups.
    for (const [memory, passes] of [
      [0, 4],
      [64 << 20, 4],
      [0, 0],
    ]) {
      process.env.CRAWLSIEVE_TEST_COMPACT_PASSES = String(passes);
      const arena = new Arena();
      if (memory > 0) arena.place({ table: memory });
      const fd = openSync(path, "r");
      const aside = join(dir, `fingerprints.log.${memory}.${passes}.tmp`);
      try {
        const head = (count: number) => {
          const h = new Uint8Array(16);
          new DataView(h.buffer).setUint32(12, count, true);
          return h;
        };
        const done = writeCompaction(path, fd, statSync(path).size, 16, head, false, arena, aside);
        expect(done.fingerprints).toBe(liveCount);
        expect(done.size).toBe(statSync(aside).size);
      } finally {
        closeSync(fd);
      }
      const written = fileFingerprints(aside);
      // In strict table order (so each once), as many as live, and every one live and whole.
      expect(inTableOrder(written)).toBe(true);
      expect(written.length / 16).toBe(liveCount);
      const wrong: number[] = [];
      for (let at = 0; at < written.length; at += 16) {
        const f = written.subarray(at, at + 16);
        const i = indexOf(f);
        if (live[i] !== 1 || f.some((byte, j) => byte !== keys[i][j])) wrong.push(at / 16);
      }
      expect(wrong).toEqual([]);
      expect(sortedCount(aside)).toBe(liveCount);
      bodies.push(readFileSync(aside));
    }
    // Two passes, one, or partition files: the same file, and no partition file is left.
    expect(bodies[0].equals(bodies[1])).toBe(true);
    expect(bodies[0].equals(bodies[2])).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([
      "fingerprints.log",
      "fingerprints.log.0.0.tmp",
      "fingerprints.log.0.4.tmp",
      `fingerprints.log.${64 << 20}.4.tmp`,
    ]);
  });

  it("is followed by a set holding the old file: it reads the new one whole, and nothing is lost", async () => {
    process.env.CRAWLSIEVE_TEST_COMPACT_FROM = "1";
    const dir = temp();
    const key = (i: number) => `https://follow.example/${i}`;
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => key(from + i));
    const a = await openDiskSeenSet(dir);
    const b = await openDiskSeenSet(dir);
    expect(Array.from(await b.addMany(range(0, 10)))).toEqual(Array(10).fill(1));
    for (let at = 10; at < 20_000; at += 5_000) await a.addMany(range(at, Math.min(at + 5_000, 20_000)));
    // a's close does not compact what a wrote itself; c, which found it, does: the file at the path is a new one, sorted.
    await a.close();
    const log = join(dir, "fingerprints.log");
    expect(sortedCount(log)).toBe(0);
    const before = statSync(log).ino;
    const c = await openDiskSeenSet(dir);
    expect(await c.size()).toBe(20_000);
    await c.close();
    expect(statSync(log).ino).not.toBe(before);
    expect(sortedCount(log)).toBe(20_000);
    expect(inTableOrder(fileFingerprints(log))).toBe(true);
    // b still held the old file: its next batch sees a's keys, and its own new ones are new.
    const flags = await b.addMany(range(15_000, 25_000));
    expect(flags.slice(0, 5_000).every((f) => f === 0)).toBe(true);
    expect(flags.slice(5_000).every((f) => f === 1)).toBe(true);
    expect(Array.from(await b.removeMany([key(3), key(24_999)]))).toEqual([1, 1]);
    await b.close();
    const d = await openDiskSeenSet(dir);
    expect(await d.size()).toBe(25_000 - 2);
    const has = await d.hasMany(range(0, 25_000));
    expect(has.reduce((s, f) => s + f, 0)).toBe(25_000 - 2);
    expect([has[3], has[24_999]]).toEqual([0, 0]);
    await d.close();
  }, 180_000);

  it("dedup --store compacts what it found at its end, not what it wrote; each run still prints exactly the lines no run printed", () => {
    const dir = temp();
    const first = join(dir, "a.txt");
    const second = join(dir, "b.txt");
    writeFileSync(first, randomKeys(1, 150_000, 70_000).join("\n") + "\n");
    writeFileSync(second, randomKeys(2, 150_000, 100_000).join("\n") + "\n");
    const store = join(dir, "seen");
    const env = { ...process.env, CRAWLSIEVE_TEST_COMPACT_FROM: "1" };
    const run = (...files: string[]) =>
      spawnSync(process.execPath, [CLI, "dedup", "--store", store, ...files], {
        env,
        maxBuffer: 1 << 28,
        timeout: 180_000,
      });
    const one = run(first);
    expect(one.status, one.stderr.toString()).toBe(0);
    expect(one.stdout.toString()).toBe(awkFirst(first));
    const log = join(store, "fingerprints.log");
    expect(sortedCount(log)).toBe(0);
    const seen = new Set(awkFirst(first).split("\n").filter(Boolean));
    const two = run(second);
    expect(two.status, two.stderr.toString()).toBe(0);
    const fresh = awkFirst(second)
      .split("\n")
      .filter((line) => line !== "" && !seen.has(line));
    expect(two.stdout.toString()).toBe(fresh.map((line) => `${line}\n`).join(""));
    // The second run found the first one's keys unsorted and compacted them, with its own.
    expect(sortedCount(log)).toBe(seen.size + fresh.length);
    expect(inTableOrder(fileFingerprints(log))).toBe(true);
    const three = run(first, second);
    expect(three.status, three.stderr.toString()).toBe(0);
    expect(three.stdout.toString()).toBe("");
  }, 180_000);

  it("a run past --memory, which reads its store again at its end, does not compact what it wrote", () => {
    const store = join(temp(), "seen");
    const lines = Array.from({ length: 1_600_000 }, (_, i) => `${i + 1}\n`).join("");
    const env = { ...process.env, CRAWLSIEVE_TEST_COMPACT_FROM: "1" };
    const run = spawnSync(
      process.execPath,
      [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", temp(), "--stats"],
      { env, input: lines, maxBuffer: 1 << 28, timeout: 180_000 },
    );
    expect(run.status, run.stderr.toString()).toBe(0);
    expect(run.stdout.toString()).toBe(lines);
    expect(JSON.parse(run.stderr.toString()).spilledLines).toBeGreaterThan(0);
    expect(sortedCount(join(store, "fingerprints.log"))).toBe(0);
  }, 180_000);

  it.each([
    ["its passes over the file", {}, /\.tmp$/],
    // Killed once a partition file is there, beside the new file.
    ["partition files", { CRAWLSIEVE_TEST_COMPACT_PASSES: "0" }, /\.[0-9a-f]{2}\.tmp$/],
  ] as [string, Record<string, string>, RegExp][])(
    "survives kill -9 while the new file is written (%s): the old one stays whole, and the files left aside go at the next open",
    async (_, env, killAt) => {
      const dir = temp();
      const input = join(dir, "input.txt");
      writeFileSync(input, randomKeys(3, 600_000, 400_000).join("\n") + "\n");
      const store = join(dir, "seen");
      // Filled without compaction (under 64 MiB), every line printed.
      const filled = spawnSync(process.execPath, [CLI, "dedup", "--store", store, input], {
        maxBuffer: 1 << 28,
        timeout: 180_000,
      });
      expect(filled.status, filled.stderr.toString()).toBe(0);
      const log = join(store, "fingerprints.log");
      const before = readFileSync(log);
      const inode = statSync(log).ino;
      // Reopened with compaction due at close, and killed as soon as the new file appears beside the old.
      const child = spawn(process.execPath, [CLI, "dedup", "--store", store], {
        env: { ...process.env, CRAWLSIEVE_TEST_COMPACT_FROM: "1", ...env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      const exited = new Promise((resolve) => child.on("exit", resolve));
      let aside: string | undefined;
      for (
        const started = Date.now();
        aside === undefined && child.exitCode === null && Date.now() - started < 30_000;
      ) {
        aside = readdirSync(store).find((name) => killAt.test(name));
        if (aside === undefined) await new Promise((resolve) => setImmediate(resolve));
      }
      child.kill("SIGKILL");
      await exited;
      expect(aside, "the compaction's file was seen before the process ended").toBeDefined();
      // The old file as it was (the kill came before the rename, as it nearly always does), or the new one whole.
      if (statSync(log).ino === inode) expect(readFileSync(log).equals(before)).toBe(true);
      else expect(fileFingerprints(log).length / 16).toBe(sortedCount(log));
      const again = spawnSync(process.execPath, [CLI, "dedup", "--store", store, input], {
        maxBuffer: 1 << 28,
        timeout: 180_000,
      });
      expect(again.status, again.stderr.toString()).toBe(0);
      expect(again.stdout.toString()).toBe("");
      expect(readdirSync(store).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    },
    180_000,
  );
});
