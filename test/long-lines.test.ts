// Issue 14, item 3: line reading must be linear in the line's length. A 128 MiB line reaches the
// CLI through a pipe in 64 KiB reads; re-joining and rescanning the partial line on every read
// (the old reader) copies about 128 GiB and runs for minutes, a linear reader takes about a second.
// The run is a subprocess with a generous bound instead of a timed assertion.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { xxhash128 } from "hash-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { LongLineHasher } from "../build/js/lines/long-line.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const LINE = Buffer.alloc(128 << 20, 0x61);
LINE[12345] = 0x62;
const BOUND_MS = 30_000;

function run(args: string[], input: Buffer) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, timeout: BOUND_MS, maxBuffer: 1 << 29 });
  return { error: result.error, code: result.status, stdout: result.stdout, stderr: result.stderr?.toString() };
}

describe("a 128 MiB line", () => {
  it("md5 hashes it within the bound (line reader of md5, canonicalize and the stored/Redis dedup)", () => {
    const input = Buffer.concat([LINE, Buffer.from("\nshort\n")]);
    const { error, code, stdout, stderr } = run(["md5"], input);
    expect(error, "the command did not finish within the bound").toBeUndefined();
    expect(code, stderr).toBe(0);
    expect(stdout.toString()).toBe(
      `${createHash("md5").update(LINE).digest("hex")}\n${createHash("md5").update("short").digest("hex")}\n`,
    );
  });

  it("dedup prints it once within the bound, twice given, with and without a final newline", () => {
    const input = Buffer.concat([LINE, Buffer.from("\r\nshort\n"), LINE]);
    const { error, code, stdout, stderr } = run(["dedup"], input);
    expect(error, "the command did not finish within the bound").toBeUndefined();
    expect(code, stderr).toBe(0);
    expect(stdout.length).toBe(LINE.length + 2 + 6);
    expect(stdout.subarray(0, LINE.length).equals(LINE)).toBe(true);
    expect(stdout.subarray(LINE.length).toString()).toBe("\r\nshort\n");
  });
});

describe("a long line's fingerprint, streamed through a fixed window", () => {
  // Lengths about the 1 MiB window and XXH3's 1,024-byte blocks and 64-byte last stripe: the
  // streamed digest must be the one-shot hash of the key (hash-wasm's XXH3-128, node:crypto's MD5).
  const W = 1 << 20;
  const lengths = [
    W - 1,
    W,
    W + 1,
    W + 63,
    W + 64,
    W + 65,
    W + 1023,
    W + 1024,
    W + 1025,
    2 * W,
    2 * W + 1,
    3 * W + 777,
  ];
  const random = rng(7);
  const source = Buffer.from(Array.from({ length: 3 * W + 800 }, () => Math.floor(random() * 256)));

  /** The key cut into random pieces, with "\r\n", "\n" or no terminator. */
  function pieces(key: Buffer, ending: string): Uint8Array[] {
    const whole = Buffer.concat([key, Buffer.from(ending)]);
    const out: Uint8Array[] = [];
    for (let at = 0; at < whole.length; ) {
      const n = Math.min(whole.length - at, 1 + Math.floor(random() * 300_000));
      out.push(whole.subarray(at, at + n));
      at += n;
    }
    return out;
  }

  it("XXH3-128 (exact and approximate modes) and MD5 equal the one-shot references at every length about the window", async () => {
    const xxh = new LongLineHasher(false, true);
    const approx = new LongLineHasher(true, false);
    const md5 = new LongLineHasher(false, false);
    const wrong: string[] = [];
    for (const length of lengths) {
      // A key that ends in "\r" keeps it when no "\n" follows.
      const key = Buffer.from(source.subarray(0, length));
      key[key.length - 1] = key[key.length - 1] === 0x0d || key[key.length - 1] === 0x0a ? 0x41 : key[key.length - 1];
      const xxhHex = await xxhash128(key);
      const md5Hex = createHash("md5").update(key).digest("hex");
      for (const ending of ["\n", "\r\n", ""]) {
        const terminated = ending !== "";
        const asXxh = Buffer.from(xxh.digest(pieces(key, ending), terminated))
          .reverse()
          .toString("hex");
        const asApprox = Buffer.from(approx.digest(pieces(key, ending), terminated))
          .reverse()
          .toString("hex");
        const asMd5 = Buffer.from(md5.digest(pieces(key, ending), terminated)).toString("hex");
        if (asXxh !== xxhHex) wrong.push(`xxh ${length} ${JSON.stringify(ending)}`);
        if (asApprox !== xxhHex) wrong.push(`approx ${length} ${JSON.stringify(ending)}`);
        if (asMd5 !== md5Hex) wrong.push(`md5 ${length} ${JSON.stringify(ending)}`);
      }
    }
    expect(wrong).toEqual([]);
    // The window is all the memory a line of any length takes.
    expect(xxh.byteLength).toBeLessThan(4 << 20);
  }, 180_000);
});

describe("md5 of a line of 640 MiB through a pipe", () => {
  it("prints what node:crypto gives for the whole line, in bounded memory (peak RSS under 256 MiB)", async () => {
    const child = spawn(process.execPath, [CLI, "md5"], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    // The kernel's high-water mark of the child's resident memory, read while it runs.
    let peak = 0;
    const poll = setInterval(() => {
      try {
        peak = Math.max(
          peak,
          Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) * 1024,
        );
      } catch {
        // Exited between two reads.
      }
    }, 50);
    const expected = createHash("md5");
    const piece = Buffer.alloc(1 << 20);
    for (let i = 0; i < piece.length; i++) piece[i] = 0x20 + ((i * 7) % 90);
    for (let i = 0; i < 640; i++) {
      piece[0] = 0x21 + (i % 90);
      expected.update(piece);
      if (!child.stdin.write(piece)) await new Promise((r) => child.stdin.once("drain", r));
    }
    child.stdin.end("\r\nshort\n");
    const code = await new Promise((r) => child.on("exit", r));
    clearInterval(poll);
    expect(code, stderr).toBe(0);
    expect(stdout).toBe(`${expected.digest("hex")}\n${createHash("md5").update("short").digest("hex")}\n`);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(256 << 20);
  }, 120_000);
});
