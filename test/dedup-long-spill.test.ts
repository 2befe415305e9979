// Issue 30, item 6, with a memory budget: lines past --memory wait in the spill (files under --tmp)
// and are printed at the end. A long line among them went to the spill joined whole, and the
// spill's reader gathered it again across its reads (copying it again on each): a 100 MiB line
// took several times its size in memory, a 2 GB one more than that. Now it goes to the spill a
// block at a time from where it waits (the input file, or its copy) and comes out the same way.
// Expected: every first occurrence once (MD5s of lines by node:crypto, sorted: which lines
// spill depends on when the table freezes; test/dedup-spill.test.ts checks their order with awk).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, createReadStream, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exited, watchPeakRss } from "./support/peak-rss.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const MiB = 1 << 20;
const dir = mkdtempSync(join(tmpdir(), "cs-long-spill-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A line's bytes (no "\n"): letters only, varied every 4,099 bytes by `seed`. */
function body(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length, 0x61 + (seed % 26));
  for (let i = 0; i < length; i += 4099) bytes[i] = 0x61 + ((i / 4099 + seed) % 26);
  return bytes;
}

describe("long lines past the memory budget (--memory)", () => {
  // 700,000 distinct short lines fill a 16 MiB table, so the lines after them wait in the spill.
  const SPILL_INPUT = join(dir, "spill-input.txt");
  const L1 = body(100 * MiB, 10);
  const L2 = body(20 * MiB, 11);

  /** MD5s of the lines of a stream (each line's bytes but its "\n"), sorted. */
  async function lineDigests(stream: AsyncIterable<Buffer>): Promise<string[]> {
    const out: string[] = [];
    let hash = createHash("md5");
    for await (const chunk of stream) {
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        out.push(hash.update(chunk.subarray(start, nl)).digest("hex"));
        hash = createHash("md5");
        start = nl + 1;
      }
      hash.update(chunk.subarray(start));
    }
    return out.sort();
  }

  it("from a file and from a pipe: every first occurrence printed once, peak RSS under 200 MiB", async () => {
    const short = Array.from({ length: 700_000 }, (_, i) => `line-${i}\n${i % 3 === 0 ? `line-${i >> 1}\n` : ""}`).join(
      "",
    );
    const fd = openSync(SPILL_INPUT, "w");
    for (const piece of [short, L1, "\n", "line-5\n", L1, "\r\n", L2, "\n", "after\n", L2])
      writeSync(fd, typeof piece === "string" ? Buffer.from(piece) : piece);
    closeSync(fd);
    const md5 = (bytes: Buffer | string) => createHash("md5").update(bytes).digest("hex");
    const expected = [
      ...Array.from({ length: 700_000 }, (_, i) => md5(`line-${i}`)),
      md5(L1),
      md5(L2),
      md5("after"),
    ].sort();
    for (const pipeIn of [false, true]) {
      const tmp = mkdtempSync(join(dir, "spill-"));
      const child = spawn(
        process.execPath,
        [CLI, "dedup", "--stats", "--memory", "16MiB", "--tmp", tmp, ...(pipeIn ? [] : [SPILL_INPUT])],
        { stdio: [pipeIn ? "pipe" : "ignore", "pipe", "pipe"] },
      );
      const watch = watchPeakRss(child);
      let stderr = "";
      child.stderr!.on("data", (d) => (stderr += d));
      child.stdin?.on("error", () => undefined);
      if (pipeIn) createReadStream(SPILL_INPUT).pipe(child.stdin!);
      const digests = lineDigests(child.stdout!);
      const code = await exited(child);
      watch.stop();
      expect(code, stderr).toBe(0);
      expect(JSON.parse(stderr).spilledLines).toBeGreaterThan(100_000);
      expect(await digests).toEqual(expected);
      expect(readdirSync(tmp)).toEqual([]);
      expect(watch.peak).toBeGreaterThan(0);
      expect(watch.peak).toBeLessThan(200 * MiB);
    }
  }, 240_000);
});
