// Issue 14, item 3: line reading must be linear in the line's length. A 128 MiB line reaches the
// CLI through a pipe in 64 KiB reads; re-joining and rescanning the partial line on every read
// (the old reader) copies about 128 GiB and runs for minutes, a linear reader takes about a second.
// The run is a subprocess with a generous bound instead of a timed assertion.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";

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
    expect(stdout.toString()).toBe(`${createHash("md5").update(LINE).digest("hex")}\n${createHash("md5").update("short").digest("hex")}\n`);
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
