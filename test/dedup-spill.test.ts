// Exact line dedup under a memory budget: the table spread over several WebAssembly memories and
// the lines past the budget spilled to disk must still give awk's first occurrences (mawk's
// `!s[k]++`, k the line without a final "\r"), byte for byte, from files and pipes, with the
// spilled lines' duplicates before and after the spill point; a bad --tmp or a full disk is one
// line and exit 2;
// the spill's files are gone after exit and after SIGINT.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LineDeduplicator, fileSpill } from "../build/js/index.node.js";
import { internalOptions } from "./support/line-internals.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

/** Folders and files the tests made, removed at the end (the spill's own files are checked gone in each test). */
const made: string[] = [];
afterAll(() => {
  for (const path of made) rmSync(path, { recursive: true, force: true });
});

/** A new empty folder under the system's temporary folder. */
function tempFolder(prefix = "crawlsieve-spill-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
/** Smallest budget: with it the table holds about 400,000 lines, so 700,000 distinct ones spill. */
const BUDGET = 16 << 20;
/** A memory of 8 MiB leaves the first table about 1 MiB, so a 24 MiB budget spreads it over several. */
const SMALL_MEMORY = 8 << 20;

function awk(input: Uint8Array): Buffer {
  return execFileSync("mawk", ['{ k = $0; sub(/\r$/, "", k) } !s[k]++'], {
    input,
    env: { LC_ALL: "C" },
    maxBuffer: 1 << 30,
  });
}

/**
 * 700,000 distinct lines (some empty, some CRLF twins of LF ones, some 3 KiB long) with repeats
 * of early lines (decided in memory) and of late ones (spilled) spread through, and a last line
 * without "\n" (a repeat when `lastRepeats`).
 */
function generated(seed: number, lastRepeats: boolean): Buffer {
  const next = rng(seed);
  const parts: string[] = [];
  const distinct = 700_000;
  for (let i = 0; i < distinct; i++) {
    parts.push(i % 50_000 === 7 ? "" : i % 100_000 === 3 ? `long-${i}-${"x".repeat(3000)}` : `line-${i}`);
    // Repeats of a line seen anywhere before, from the start on (so across the spill point too).
    if (next() < 0.3) parts.push(`line-${Math.floor(next() * i)}`);
    if (next() < 0.01) parts.push(`line-${Math.floor(next() * i)}\r`);
  }
  const body = parts.join("\n") + "\n";
  return Buffer.from(body + (lastRepeats ? "line-650000" : "last-without-newline"));
}

function run(args: string[], input: Uint8Array | undefined, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    input,
    maxBuffer: 1 << 30,
    env: { ...process.env, ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.toString() };
}

describe("LineDeduplicator under a memory budget", () => {
  it("spills past the budget and still gives awk's first occurrences, in order, at several cuts", () => {
    const input = generated(1, false);
    const reference = awk(input);
    for (const cut of [1 << 20, 65_537]) {
      const tmp = tempFolder();
      const dedup = new LineDeduplicator({ memory: BUDGET, spill: fileSpill(tmp) });
      const out: Uint8Array[] = [];
      for (let at = 0; at < input.length; at += cut) out.push(dedup.push(input.subarray(at, at + cut)));
      const spilledBefore = dedup.describe().spilledLines as number;
      out.push(dedup.end());
      expect(spilledBefore).toBeGreaterThan(100_000);
      expect(Buffer.concat(out).equals(reference)).toBe(true);
      expect(dedup.stats.unique).toBe(reference.toString("latin1").split("\n").length - 1);
      dedup.dispose();
      expect(readdirSync(tmp)).toEqual([]);
    }
  });

  it("spreads over several memories, then spills, with MD5 fingerprints too", () => {
    const input = generated(2, true);
    const reference = awk(input);
    for (const hash of ["xxh128", "md5"] as const) {
      const tmp = tempFolder();
      const dedup = new LineDeduplicator(
        internalOptions({ hash, memory: 20 << 20, perMemory: SMALL_MEMORY, spill: fileSpill(tmp) }),
      );
      const head = dedup.push(input);
      const described = dedup.describe();
      const tail = dedup.end();
      expect(described.memories).toBeGreaterThan(2);
      expect(described.spilledLines).toBeGreaterThan(0);
      expect(Buffer.concat([head, tail]).equals(reference)).toBe(true);
      dedup.dispose();
      expect(readdirSync(tmp)).toEqual([]);
    }
  });

  it("spreads over several memories without spilling when the budget allows", () => {
    const input = generated(3, false);
    const dedup = new LineDeduplicator(internalOptions({ memory: 256 << 20, perMemory: SMALL_MEMORY }));
    const out = Buffer.concat([dedup.push(input), dedup.end()]);
    expect(dedup.describe().memories).toBeGreaterThan(2);
    expect(dedup.describe().spilledLines).toBe(0);
    expect(out.equals(awk(input))).toBe(true);
    dedup.dispose();
  });

  it("past one memory, keys already held are not stored again: repeats leave the tables' size as it was", () => {
    const lines = Array.from({ length: 600_000 }, (_, i) => `key-${i}`);
    const first = Buffer.from(lines.join("\n") + "\n");
    const next = rng(9);
    const again = Buffer.from(
      lines
        .map((line) => ({ line, r: next() }))
        .sort((a, b) => a.r - b.r)
        .map((x) => x.line)
        .join("\n") + "\n",
    );
    const dedup = new LineDeduplicator(internalOptions({ memory: 256 << 20, perMemory: SMALL_MEMORY }));
    expect(Buffer.from(dedup.push(first)).equals(first)).toBe(true);
    const held = dedup.describe();
    expect(held.memories).toBeGreaterThan(1);
    // Every key again, in another order: all seen, and no table grows (each is found where it lies).
    for (let round = 0; round < 3; round++) expect(dedup.push(again).length).toBe(0);
    expect(dedup.describe().tableBytes).toBe(held.tableBytes);
    expect(dedup.describe().spilledLines).toBe(0);
    dedup.dispose();
  });

  it("without a spill, reaching the budget is an error, not a wrong answer", () => {
    const dedup = new LineDeduplicator({ memory: BUDGET });
    expect(() => dedup.push(generated(4, false))).toThrow(/memory budget/);
    dedup.dispose();
  });
});

describe("crawlsieve dedup --memory --tmp", () => {
  const input = generated(5, false);
  const reference = awk(input);

  it("equals awk from a file and from a pipe, spread and spilled, and leaves no file behind", () => {
    const tmp = tempFolder();
    const file = join(tempFolder(), "input.txt");
    writeFileSync(file, input);
    for (const [args, stdin, env] of [
      [[file], undefined, {}],
      [[], input, {}],
      [[], input, { CRAWLSIEVE_TEST_PER_MEMORY: String(SMALL_MEMORY) }],
    ] as const) {
      const result = run(["dedup", "--stats", "--memory", "16MiB", "--tmp", tmp, ...args], stdin, env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.equals(reference)).toBe(true);
      const stats = JSON.parse(result.stderr.trim());
      expect(stats.spilledLines).toBeGreaterThan(100_000);
      expect(stats.unique).toBe(reference.toString("latin1").split("\n").length - 1);
      expect(readdirSync(tmp)).toEqual([]);
    }
  });

  it("spills only a few lines (most of the 256 partitions empty) and still prints them, in order", () => {
    const seq = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => `${i + 1}\n`).join(""));
    // Where the table freezes under this budget, learnt from a run that spills many.
    const probe = run(["dedup", "--stats", "--memory", "16MiB"], seq(400_000));
    expect(probe.code, probe.stderr).toBe(0);
    const { lines, spilledLines } = JSON.parse(probe.stderr.trim());
    const inTable = lines - spilledLines;
    const input = seq(inTable + 3);
    const result = run(["dedup", "--stats", "--memory", "16MiB"], input);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stderr.trim()).spilledLines).toBe(3);
    expect(result.stdout.equals(input)).toBe(true);
  });

  it("stops with one line and exit code 2 when --tmp is not a writable folder", () => {
    const tmp = tempFolder();
    const notFolder = join(tmp, "a-file");
    writeFileSync(notFolder, "");
    for (const dir of [notFolder, join(notFolder, "below"), join(tmp, "missing")]) {
      const result = run(["dedup", "--memory", "16MiB", "--tmp", dir], input);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^crawlsieve: cannot spill lines to disk in .* \(not a folder, E[A-Z]+\)/);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      // What was printed is a prefix of the right answer: nothing wrong, only less.
      expect(reference.subarray(0, result.stdout.length).equals(result.stdout)).toBe(true);
    }
  });

  it("stops with one line and exit code 2 on a full disk, and leaves nothing on it (a loop filesystem mounted as root)", () => {
    const dir = tempFolder("crawlsieve-full-");
    const image = join(dir, "disk.img");
    const mountPoint = join(dir, "mnt");
    mkdirSync(mountPoint);
    const sh = (command: string, args: string[]) => spawnSync(command, args, { stdio: "ignore" }).status === 0;
    // 8 MiB: the spill of this input (about 12 MB) does not fit.
    // A test that cannot make its full disk fails: it is never counted as passed unrun (.ci/run runs as root).
    const mounted =
      sh("truncate", ["-s", "8M", image]) &&
      sh("mkfs.ext2", ["-q", "-F", image]) &&
      sh("mount", ["-o", "loop", image, mountPoint]);
    if (!mounted) rmSync(dir, { recursive: true, force: true });
    expect(mounted, "an 8 MiB ext2 image mounted on a loop device (needs root and e2fsprogs)").toBe(true);
    try {
      const result = run(["dedup", "--memory", "16MiB", "--tmp", mountPoint], input);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^crawlsieve: cannot spill lines to disk in .* \(no space left on the device, ENOSPC\)/,
      );
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(reference.subarray(0, result.stdout.length).equals(result.stdout)).toBe(true);
      expect(readdirSync(mountPoint).filter((name) => name !== "lost+found")).toEqual([]);
    } finally {
      sh("umount", [mountPoint]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects a budget below the floor and a size it cannot read", () => {
    for (const size of ["1MiB", "lots", "-5GiB"]) {
      const result = run(["dedup", "--memory", size], Buffer.from("a\n"));
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--memory/);
    }
    expect(run(["dedup", "--memory", "1GiB", "--approx"], Buffer.from("a\n")).code).toBe(2);
  });

  it("removes the spill's files on SIGINT", async () => {
    const tmp = tempFolder();
    const child = spawn(process.execPath, [CLI, "dedup", "--memory", "16MiB", "--tmp", tmp], {
      stdio: ["pipe", "ignore", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Past the spill point, then hold stdin open until the spill folder exists.
    child.stdin.on("error", () => undefined); // the write still under way fails once the child is gone
    child.stdin.write(input);
    for (let i = 0; i < 200 && readdirSync(tmp).length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readdirSync(tmp)).toHaveLength(1);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
