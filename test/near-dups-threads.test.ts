// Sketching on worker threads: SketchPool gives the bytes sketchMany gives on one thread (texts
// of every kind: empty, wordless, unspaced scripts, long), and `near-dups --dedup` prints the same
// bytes to stdout and --removed with --threads 1, 2 and 3 on a corpus of families of copies.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { sketchMany } from "../build/js/near-dup/minhash.js";
import { SketchPool } from "../build/js/near-dup/sketch-pool.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);
const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-nd-threads-"));

/** Families of a page and copies with some words replaced, shuffled, as JSON lines. */
function corpus(seed: number, families: number): string {
  const next = rng(seed);
  const texts: string[] = [];
  for (let f = 0; f < families; f++) {
    const words = Array.from({ length: 40 + Math.floor(next() * 300) }, () => `w${Math.floor(next() * 20_000)}`);
    texts.push(words.join(" "));
    for (let c = Math.floor(next() * 4); c > 0; c--)
      texts.push(words.map((w) => (next() < 0.05 ? `e${Math.floor(next() * 1e9)}` : w)).join(" "));
  }
  texts.push("", "!!! ???", "東京都の天気は晴れです 東京都の天気は晴れです", "Ünïcödé wörds hère");
  for (let i = texts.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [texts[i], texts[j]] = [texts[j], texts[i]];
  }
  return `${texts.map((text, i) => JSON.stringify({ id: `d${i}`, text })).join("\n")}\n`;
}

describe("sketching on worker threads", () => {
  it("SketchPool.sketchMany equals sketchMany, for 1 to 3 threads and batches smaller than the pool", async () => {
    const lines = corpus(11, 600).trim().split("\n");
    const texts = lines.map((line) => JSON.parse(line).text as string);
    const params = { shingle: 3, k: 128, bands: 16, rows: 16 };
    const expected = sketchMany(texts, params);
    for (const threads of [1, 2, 3]) {
      const pool = await SketchPool.start(threads);
      try {
        for (const slice of [texts, texts.slice(0, 5), texts.slice(7, 200), []]) {
          const got = await pool.sketchMany(slice, params);
          const one = sketchMany(slice, params);
          expect(got.count).toBe(slice.length);
          expect(Buffer.from(got.values.buffer).equals(Buffer.from(one.values.buffer)), `${threads} threads`).toBe(
            true,
          );
          expect(Buffer.from(got.keys.buffer).equals(Buffer.from(one.keys.buffer))).toBe(true);
        }
        const whole = await pool.sketchMany(texts, params);
        expect(Array.from(whole.values.subarray(0, 300))).toEqual(Array.from(expected.values.subarray(0, 300)));
      } finally {
        await pool.close();
      }
    }
  });

  it("near-dups --dedup prints the same bytes (stdout, --removed, --annotate) with --threads 1, 2 and 3", () => {
    const input = join(dir, "corpus.jsonl");
    writeFileSync(input, corpus(29, 1_200));
    const outputs = [1, 2, 3].map((threads) => {
      const removed = join(dir, `removed-${threads}.jsonl`);
      const run = spawnSync(
        process.execPath,
        [CLI, "near-dups", "--dedup", input, "--removed", removed, "--threads", String(threads)],
        { maxBuffer: 1 << 28 },
      );
      expect(run.status, run.stderr.toString()).toBe(0);
      const annotated = spawnSync(
        process.execPath,
        [CLI, "near-dups", "--dedup", input, "--annotate", "--threads", String(threads)],
        { maxBuffer: 1 << 28 },
      );
      expect(annotated.status, annotated.stderr.toString()).toBe(0);
      return {
        kept: run.stdout.toString(),
        removed: readFileSync(removed, "utf8"),
        annotated: annotated.stdout.toString(),
      };
    });
    // Copies exist and were removed: the comparison is not of two empty outputs.
    expect(outputs[0].removed.split("\n").length).toBeGreaterThan(400);
    expect(outputs[1]).toEqual(outputs[0]);
    expect(outputs[2]).toEqual(outputs[0]);
  }, 120_000);

  it("refuses --threads where it does not apply, or out of range, naming it", () => {
    const input = join(dir, "small.jsonl");
    writeFileSync(input, corpus(3, 5));
    for (const [args, message] of [
      [["--dedup", input, "--threads", "0"], /--threads.*0/],
      [["--dedup", input, "--threads", "two"], /--threads.*two/],
      [["--filter", input, "--threads", "2"], /--threads.*--filter/],
      [["--dedup", input, "--max-distance", "3", "--threads", "2"], /--threads.*SimHash/],
    ] as const) {
      const run = spawnSync(process.execPath, [CLI, "near-dups", ...args]);
      expect(run.status, args.join(" ")).toBe(2);
      const stderr = run.stderr.toString();
      expect(stderr).toMatch(message);
      expect(stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
