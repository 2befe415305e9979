// Issue 30, item 6: `dedup` of lines of hundreds of megabytes, byte for byte and in bounded memory.
// A line past 16 MiB is fingerprinted as it streams by and not held: from a file it is copied
// from the file when printed, from a pipe it waits in a copy under --tmp. The input mixes such
// lines (17 MiB to 200 MiB, most repeated, a CRLF twin, lines of equal 1 MiB blocks, an unterminated
// last one) with lines gathered in memory (70 KiB, 2 MiB) and short ones. The expected output
// is built from the lines' identities (the first occurrence of each, in input order, its own
// bytes; mawk is quadratic in a line's length, minutes for these) and compared by node:crypto's
// MD5 and length. Peak RSS comes from /proc: the old pipeline held a 200 MiB line several times.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  createReadStream,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LongLineHasher } from "../build/js/lines/long-line.js";
import { xxhash128 } from "hash-wasm";
import { ready } from "./helpers.js";
import { exited, watchPeakRss } from "./support/peak-rss.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const MiB = 1 << 20;
const dir = mkdtempSync(join(tmpdir(), "cs-long-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A line's bytes (no "\n"): letters only, varied every 4,099 bytes by `seed`, or one letter throughout (equal 1 MiB blocks). */
function body(length: number, seed: number, plain = false): Buffer {
  const bytes = Buffer.alloc(length, 0x61 + (seed % 26));
  if (!plain) for (let i = 0; i < length; i += 4099) bytes[i] = 0x61 + ((i / 4099 + seed) % 26);
  return bytes;
}

const A = body(200 * MiB, 1);
const B = body(50 * MiB, 2);
const C = body(17 * MiB + 1, 3);
const D = body(2 * MiB, 4);
const E = body(70 * 1024, 5);
const Z = body(24 * MiB, 6, true); // exactly 24 blocks, all equal
const Y = body(20 * MiB + 5, 7, true);
const F = body(17 * MiB, 8);

/** The input's lines: an identity (lines of one identity compare equal), bytes, terminator. */
const LINES: [string, Buffer, string][] = [
  ["x", Buffer.from("x"), "\n"],
  ["A", A, "\n"],
  ["y", Buffer.from("y"), "\n"],
  ["C", C, "\n"],
  ["B", B, "\r\n"],
  ["E", E, "\n"],
  ["x", Buffer.from("x"), "\n"],
  ["Z", Z, "\n"],
  ["C", C, "\n"],
  ["D", D, "\n"],
  ["B", B, "\n"],
  ["Y", Y, "\n"],
  ["z", Buffer.from("z"), "\n"],
  ["D", D, "\n"],
  ["Z", Z, "\r\n"],
  ["E", E, "\n"],
  ["Y", Y, "\n"],
  ["C", C, "\n"],
  ["w", Buffer.from("w"), "\n"],
  ["F", F, ""],
];
const INPUT = join(dir, "input.txt");

/** MD5 and length of the first occurrences, in input order, as the input has them (a last line gets "\n"). */
function expected(): { md5: string; bytes: number } {
  const hash = createHash("md5");
  const seen = new Set<string>();
  let bytes = 0;
  for (const [id, line, end] of LINES) {
    if (seen.has(id)) continue;
    seen.add(id);
    hash.update(line).update(end === "" ? "\n" : end);
    bytes += line.length + Math.max(1, end.length);
  }
  return { md5: hash.digest("hex"), bytes };
}

/** Runs dedup with stdin from the input file (a pipe when `pipe`) and stdout to a file (or a pipe); MD5 and length of its output, its peak RSS. */
async function run(args: string[], { pipeIn, pipeOut }: { pipeIn: boolean; pipeOut: boolean }) {
  const tmp = mkdtempSync(join(dir, "tmp-"));
  const outPath = join(dir, "out.txt");
  const outFd = pipeOut ? undefined : openSync(outPath, "w");
  // The copies of piped long lines go to the system's temporary folder, here TMPDIR (--tmp is tested below).
  const child = spawn(process.execPath, [CLI, "dedup", ...args, ...(pipeIn ? [] : [INPUT])], {
    stdio: [pipeIn ? "pipe" : "ignore", outFd ?? "pipe", "pipe"],
    env: { ...process.env, TMPDIR: tmp },
  });
  const watch = watchPeakRss(child);
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const hash = createHash("md5");
  let bytes = 0;
  child.stdout?.on("data", (d: Buffer) => {
    hash.update(d);
    bytes += d.length;
  });
  // A run that stops early closes its stdin: the rest of the input is not wanted then.
  child.stdin?.on("error", () => undefined);
  if (pipeIn) createReadStream(INPUT).pipe(child.stdin!);
  const code = await exited(child);
  watch.stop();
  if (outFd !== undefined) {
    closeSync(outFd);
    for await (const chunk of createReadStream(outPath)) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  }
  // The copies of long lines are gone once printed or found repeated.
  const left = readdirSync(tmp);
  return { code, stderr, md5: hash.digest("hex"), bytes, peak: watch.peak, left };
}

describe("dedup of lines of 17 MiB to 200 MiB among short ones", () => {
  beforeAll(() => {
    const fd = openSync(INPUT, "w");
    for (const [, line, end] of LINES) {
      writeSync(fd, line);
      writeSync(fd, end);
    }
    closeSync(fd);
  });

  it.each([
    ["exact, file in, file out", [], false, false],
    ["exact, pipe in, pipe out", [], true, true],
    ["approx, pipe in, file out", ["--approx"], true, false],
    ["md5 fingerprints, file in, pipe out", ["--hash", "md5"], false, true],
  ] as const)(
    "%s: the first occurrences byte for byte, peak RSS under 200 MiB",
    async (_, args, pipeIn, pipeOut) => {
      const result = await run([...args], { pipeIn, pipeOut });
      expect(result.code, result.stderr).toBe(0);
      expect({ md5: result.md5, bytes: result.bytes }).toEqual(expected());
      expect(result.left).toEqual([]);
      expect(result.peak).toBeGreaterThan(0);
      // A 200 MiB line held once would pass this on its own.
      expect(result.peak).toBeLessThan(200 * MiB);
    },
    180_000,
  );
});

describe("a long line's fingerprint, given a byte at a time at its end", () => {
  // begin/update/end take the line as it comes: the "\r" of a "\r\n" may arrive alone, or after
  // the "\n" has been looked for, and must still be left out of the key.
  const W = 1 << 20;
  it("equals the one-shot XXH3-128 of the key whatever the pieces about the window and the terminator", async () => {
    const hasher = new LongLineHasher(false, true);
    const wrong: string[] = [];
    for (const length of [1, 2, W - 1, W, W + 1, 2 * W + 3]) {
      const key = body(length, length);
      const reference = await xxhash128(key);
      for (const ending of ["", "\n", "\r\n"]) {
        const line = Buffer.concat([key, Buffer.from(ending)]);
        for (const tailPieces of [0, 1, 2, 3]) {
          hasher.begin();
          const cut = Math.max(0, line.length - tailPieces);
          hasher.update(line.subarray(0, cut));
          for (let i = cut; i < line.length; i++) hasher.update(line.subarray(i, i + 1));
          const digest = Buffer.from(hasher.end(ending !== ""))
            .reverse()
            .toString("hex");
          if (digest !== reference) wrong.push(`${length} ${JSON.stringify(ending)} ${tailPieces}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe("a long line from a pipe with no room under --tmp", () => {
  // 40 MiB of blocks that differ: its copy needs 40 MiB of disk, and the tmpfs has 4.
  const line = body(40 * MiB, 9);

  it("a full --tmp stops the run with one line and exit 2, and leaves nothing in it", () => {
    const long = join(dir, "long.txt");
    writeFileSync(long, Buffer.concat([Buffer.from("short\n"), line, Buffer.from("\nshort\n")]));
    const run = spawnSync(
      "unshare",
      [
        "-m",
        "sh",
        "-c",
        `set -e; mkdir -p "$FULL"; mount -t tmpfs -o size=4m tmpfs "$FULL"; cat "$LONG" | "$NODE" "$CLI" dedup --tmp "$FULL" > /dev/null 2> "$FULL/../err.txt" || echo "exit $?"; cat "$FULL/../err.txt"; ls -A "$FULL"`,
      ],
      {
        env: { ...process.env, FULL: join(dir, "full"), CLI, NODE: process.execPath, LONG: long },
        maxBuffer: 1 << 20,
        timeout: 60_000,
      },
    );
    expect(run.error).toBeUndefined();
    expect({ code: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() }).toEqual({
      code: 0,
      stdout: `exit 2\ncrawlsieve: cannot keep a long line on disk in ${join(dir, "full")} (no space left on the device, ENOSPC); a line past 16 MiB read from a pipe waits there until it ends: give a writable --tmp with room, or read the input from a file\n`,
      stderr: "",
    });
  });

  it("a --tmp that is not a folder stops the run with one line and exit 2", () => {
    const missing = join(dir, "no-such-folder");
    const run = spawnSync(process.execPath, [CLI, "dedup", "--tmp", missing], {
      input: Buffer.concat([line, Buffer.from("\n")]),
      maxBuffer: 1 << 20,
      timeout: 180_000,
    });
    expect({ code: run.status, stdout: run.stdout.length, stderr: run.stderr.toString() }).toEqual({
      code: 2,
      stdout: 0,
      stderr: `crawlsieve: cannot keep a long line on disk in ${missing} (not a folder, ENOENT); a line past 16 MiB read from a pipe waits there until it ends: give a writable --tmp with room, or read the input from a file\n`,
    });
  });
});
