// Input as datasets come (issue 45, item 1): gzip and Zstandard files made by Debian's own gzip
// and zstd, named anything (the first bytes tell), read by dedup (whole lines, keys, a store) and
// near-dups --dedup, from a file and from a pipe, give the output the plain file gives (mawk's
// '!s[$0]++' for dedup). Damaged copies are test/damaged-input-fuzz.test.ts's.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rng } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-compressed-"));
const random = rng(45_1);

function run(args: string[], options: { input?: Buffer; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    input: options.input,
    maxBuffer: 1 << 28,
    timeout: 120_000,
    env: { ...process.env, ...options.env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** `file` compressed by the Debian tool, written under a name that says nothing of it. */
function compressed(tool: "gzip" | "zstd", file: string, name: string): string {
  const path = join(dir, name);
  // gzip -n: no name in the header, so its header is the 10 bytes the damage test steps over.
  writeFileSync(
    path,
    execFileSync(tool, tool === "gzip" ? ["-n", "-c", file] : ["-q", "-c", file], { maxBuffer: 1 << 28 }),
  );
  return path;
}

const lines = Array.from({ length: 60_000 }, (_, i) =>
  i % 5 === 0
    ? `{"url":"https://e.example/${Math.floor(random() * 9000)}","n":${i}}`
    : `https://e.example/${Math.floor(random() * 20_000)}\r`,
);
// A line longer than the engine's carry (64 KiB): gathered aside, and from a pipe copied under --tmp if long enough.
lines.splice(30_000, 0, `https://long.example/${"x".repeat(200_000)}`);
const plain = join(dir, "plain.txt");
writeFileSync(plain, lines.join("\n") + "\n");
const awk = execFileSync("mawk", ["!s[$0]++", plain], { env: { LC_ALL: "C" }, maxBuffer: 1 << 28 });

describe("compressed input", () => {
  it.each(["gzip", "zstd"] as const)(
    "%s: dedup of a file and of a pipe equals mawk on the plain file; so do a key and a store",
    (tool) => {
      const file = compressed(tool, plain, `input-${tool}.data`);
      expect(readFileSync(file).length).toBeLessThan(readFileSync(plain).length / 2);
      expect(run(["dedup", file]).stdout.equals(awk)).toBe(true);
      expect(run(["dedup"], { input: readFileSync(file) }).stdout.equals(awk)).toBe(true);
      // The in-process decoder, as where the zstd tool is missing (CRAWLSIEVE_ZSTD=js: fzstd before Node 22.15).
      expect(run(["dedup", file], { env: { CRAWLSIEVE_ZSTD: "js" } }).stdout.equals(awk)).toBe(true);
      const store = join(dir, `store-${tool}`);
      expect(run(["dedup", "--store", store, file]).stdout.equals(awk)).toBe(true);
      expect(run(["dedup", "--store", store, plain]).stdout.length).toBe(0);
      const keyed = run(["dedup", "--json-key", "url", "--missing", "keep", file]);
      expect(keyed.code, keyed.stderr).toBe(0);
      expect(keyed.stdout.equals(run(["dedup", "--json-key", "url", "--missing", "keep", plain]).stdout)).toBe(true);
    },
    120_000,
  );

  it("gzip members one after another read as one input, as gzip -dc reads them", () => {
    const a = compressed("gzip", plain, "a.gz");
    const both = join(dir, "both.gz");
    writeFileSync(both, Buffer.concat([readFileSync(a), readFileSync(a)]));
    expect(run(["dedup", both]).stdout.equals(awk)).toBe(true);
  });

  it("near-dups --dedup reads a.jsonl.gz and a.jsonl.zst as it reads a.jsonl", () => {
    const docs = Array.from({ length: 400 }, (_, i) =>
      JSON.stringify({
        id: `d${i}`,
        text: `page ${i % 150} of the manual, with the words that every page shares ${"and more words ".repeat(8)}`,
      }),
    );
    const jsonl = join(dir, "docs.jsonl");
    writeFileSync(jsonl, docs.join("\n") + "\n");
    const want = run(["near-dups", "--dedup", jsonl]);
    expect(want.code, want.stderr).toBe(0);
    expect(want.stdout.toString().split("\n").length).toBeLessThan(300);
    for (const [tool, name] of [
      ["gzip", "docs.jsonl.gz"],
      ["zstd", "docs.jsonl.zst"],
    ] as const) {
      const got = run(["near-dups", "--dedup", compressed(tool, jsonl, name)]);
      expect({ code: got.code, stderr: got.stderr }).toEqual({ code: 0, stderr: "" });
      expect(got.stdout.equals(want.stdout)).toBe(true);
    }
  }, 120_000);
});
