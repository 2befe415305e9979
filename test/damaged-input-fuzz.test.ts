// 200 damaged datasets (issue 45's bad-input target): gzip and Zstandard files made by Debian's
// gzip and zstd, and Parquet files made by hyparquet-writer, cut short, with bytes flipped, zeroed
// or appended, or with a wrong magic. The tools themselves say which damage is real: what
// `gzip -t` / `zstd -t` accept must decode to what `gzip -dc` / `zstd -dc` give (dedup's output
// equals mawk's on it), and what they refuse must end with exit 2 and one line naming the file;
// Zstandard both through the zstd tool in a child process and in process (fzstd, frames checked).
// A Parquet file has no checksum over its values, so a flipped value may read: then the run ends
// 0; otherwise exit 2, one line naming the file, nothing on stdout. Every run within 60 s and 1 GiB.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { rng } from "./helpers.js";
import { exited, watchPeakRss } from "./support/peak-rss.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-fuzz-"));
const random = rng(45_200);
const pick = (n: number) => Math.floor(random() * n);

interface Run {
  readonly code: number | string;
  readonly stdout: Buffer;
  readonly stderr: string;
  readonly peak: number;
}

/** Runs the command line on args, watching its peak RSS (killed past 1 GiB) and its time (60 s). */
async function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const rss = watchPeakRss(child, 2 ** 30);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (b: Buffer) => out.push(b));
  child.stderr.on("data", (b: Buffer) => err.push(b));
  const code = await exited(child);
  await new Promise((resolve) => setImmediate(resolve));
  clearTimeout(timer);
  rss.stop();
  return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), peak: rss.peak };
}

/** Runs `jobs` three at a time, in order of their results. */
async function inTurn<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  return results;
}

/** A damaged copy of `good`: cut short, bytes flipped, a range zeroed, bytes appended, or its magic changed. */
function damage(good: Buffer, kind: number, magic: number): Buffer {
  const bad = Buffer.from(good);
  switch (kind) {
    case 0:
      return bad.subarray(0, magic + pick(bad.length - magic));
    case 1:
      for (let f = 1 + pick(4); f > 0; f--) bad[magic + pick(bad.length - magic)] ^= 1 << pick(8);
      return bad;
    case 2: {
      const at = magic + pick(bad.length - magic);
      bad.fill(0, at, at + 1 + pick(64));
      return bad;
    }
    case 3:
      return Buffer.concat([bad, Buffer.from(Array.from({ length: 1 + pick(40) }, () => pick(256)))]);
    default:
      bad[pick(magic)] ^= 1 << pick(8);
      return bad;
  }
}

function oneLineNaming(r: Run, path: string): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.trimEnd().split("\n"), r.stderr).toHaveLength(1);
  expect(r.stderr.startsWith(`crawlsieve: ${path}`), r.stderr).toBe(true);
}

const lines = Array.from({ length: 6_000 }, (_, i) =>
  i % 4 === 0
    ? `{"id":${i},"text":"w${pick(900)} w${pick(900)} w${pick(900)} w${pick(900)}"}`
    : `{"id":${i},"text":"page ${pick(3_000)} of the example site"}`,
);
const plain = join(dir, "plain.jsonl");
writeFileSync(plain, lines.join("\n") + "\n");

describe("200 damaged datasets", () => {
  it.each([
    ["gzip", ["-n", "-c"], 2],
    ["zstd", ["-q", "-c"], 4],
  ] as const)(
    "%s: 70 damaged copies; what the tool accepts decodes as the tool decodes it, the rest is exit 2 and one line",
    async (tool, flags, magic) => {
      const good = spawnSync(tool, [...flags, plain], { maxBuffer: 1 << 26 }).stdout;
      expect(good.length).toBeGreaterThan(1000);
      const cases = Array.from({ length: 70 }, (_, k) => {
        const path = join(dir, `bad-${tool}-${k}`);
        writeFileSync(path, damage(good, k % 5, magic));
        return path;
      });
      const results = await inTurn(
        cases.map((path, k) => async () => {
          // A wrong magic leaves no compressed data to tell: near-dups reads JSON lines and names the line.
          const args = k % 5 === 4 ? ["near-dups", "--dedup", "--threads", "1", path] : ["dedup", path];
          // Zstandard alternates between the zstd tool in a child and the in-process decoder.
          return { path, k, r: await run(args, tool === "zstd" && k % 2 === 1 ? { CRAWLSIEVE_ZSTD: "js" } : {}) };
        }),
      );
      let accepted = 0;
      for (const { path, k, r } of results) {
        expect(r.stderr, `case ${k}`).not.toMatch(/\n\s+at /);
        expect(r.peak, `case ${k}`).toBeLessThan(2 ** 30);
        const test = spawnSync(tool, ["-t", "-q", path]);
        if (k % 5 === 4) {
          oneLineNaming(r, path);
          continue;
        }
        if (test.status === 0) {
          accepted++;
          const decoded = spawnSync(tool, ["-dc", path], { maxBuffer: 1 << 26 }).stdout;
          const want = spawnSync("mawk", ["!s[$0]++"], { input: decoded, env: { LC_ALL: "C" }, maxBuffer: 1 << 26 });
          expect(r.code, `case ${k}: ${r.stderr}`).toBe(0);
          expect(r.stdout.equals(want.stdout), `case ${k}`).toBe(true);
        } else {
          oneLineNaming(r, path);
          expect(r.stderr, `case ${k}`).toMatch(/the (gzip|Zstandard) data is damaged or cut off/);
        }
      }
      // gzip's header has bytes no decoder reads (its time stamp): some flips there are no damage.
      expect(accepted).toBeLessThan(35);
    },
    300_000,
  );

  it("Parquet: 60 damaged copies end 0, or 2 with one line naming the file and nothing on stdout", async () => {
    const rows = lines.slice(0, 2_000).map((line) => JSON.parse(line) as { id: number; text: string });
    const good = Buffer.from(
      parquetWriteBuffer({
        columnData: [
          { name: "id", data: rows.map((r) => BigInt(r.id)), type: "INT64" },
          { name: "text", data: rows.map((r) => r.text), type: "STRING" },
        ],
        rowGroupSize: 300,
      } as never),
    );
    const cases = Array.from({ length: 60 }, (_, k) => {
      const path = join(dir, `bad-${k}.parquet`);
      // Wrong magics alternate between the head's PAR1 and the tail's.
      const bad = damage(good, k % 5, 4);
      if (k % 10 === 9) bad[bad.length - 1 - pick(4)] ^= 0x20;
      writeFileSync(path, bad);
      return path;
    });
    const results = await inTurn(
      cases.map((path) => async () => ({ path, r: await run(["near-dups", "--dedup", "--threads", "1", path]) })),
    );
    let refused = 0;
    for (const { path, r } of results) {
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.peak).toBeLessThan(2 ** 30);
      if (r.code === 0) continue;
      refused++;
      oneLineNaming(r, path);
      expect(r.stdout.length).toBe(0);
    }
    expect(refused).toBeGreaterThan(30);
    expect(readFileSync(plain).length).toBeGreaterThan(0);
  }, 300_000);

  it("a Zstandard window past 128 MiB is refused as zstd refuses it, before anything that size is allocated", async () => {
    // Without a content size the frame cannot be single-segment, so it has a window descriptor.
    const good = spawnSync("zstd", ["-q", "-c", "--no-content-size", plain], { maxBuffer: 1 << 26 }).stdout;
    // Byte 5 is the window descriptor when the frame is not single-segment (bit 5 of byte 4 clear).
    expect(good[4] & 0x20).toBe(0);
    const path = join(dir, "window.zst");
    const bad = Buffer.from(good);
    bad[5] = 19 << 3; // 2^(10 + 19) = 512 MiB
    writeFileSync(path, bad);
    expect(spawnSync("zstd", ["-t", "-q", path]).stderr.toString()).toMatch(/too much memory/);
    const r = await run(["dedup", path], { CRAWLSIEVE_ZSTD: "js" });
    oneLineNaming(r, path);
    expect(r.stderr).toMatch(/a frame needs a window of 536870912 bytes/);
    expect(r.peak).toBeLessThan(512 * 2 ** 20);
    const tool = await run(["dedup", path]);
    oneLineNaming(tool, path);
    expect(tool.stderr).toMatch(/Frame requires too much memory for decoding/);
  });
});
