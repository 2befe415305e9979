// Parquet input of near-dups --dedup: files written by hyparquet-writer (a writer no one here
// wrote), several row groups, decided as the same rows given as JSON lines are; the kept rows'
// ids as output; a file without the text column, and damaged or cut-off copies, end with exit 2
// and one line naming the file, nothing on stdout.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { rng } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-parquet-"));

function nearDups(args: string[]) {
  return spawnSync(process.execPath, [CLI, "near-dups", ...args], { encoding: "utf8", timeout: 60_000 });
}

/** 300 rows: ids 1000..1299, the text of row i that of row i % 100 (exact copies), q rising with the row. */
const rows = Array.from({ length: 300 }, (_, i) => {
  const next = rng(i % 100);
  const words = Array.from({ length: 40 }, () => `w${Math.floor(next() * 5000)}`).join(" ");
  return { id: 1000 + i, text: words, q: i / 10 };
});

function parquetOf(name: string, columns: { name: string; data: unknown[]; type: string }[]): string {
  const path = join(dir, name);
  writeFileSync(path, Buffer.from(parquetWriteBuffer({ columnData: columns, rowGroupSize: 64 } as never)));
  return path;
}

const file = parquetOf("rows.parquet", [
  { name: "id", data: rows.map((r) => BigInt(r.id)), type: "INT64" },
  { name: "text", data: rows.map((r) => r.text), type: "STRING" },
  { name: "q", data: rows.map((r) => r.q), type: "DOUBLE" },
]);

describe("near-dups --dedup on Parquet", () => {
  it("keeps the first row of each text (its id a line), as the same rows in JSON lines; --keep max:q keeps the last", () => {
    const got = nearDups(["--dedup", file]);
    expect(got.status, got.stderr).toBe(0);
    expect(got.stdout).toBe(
      rows
        .slice(0, 100)
        .map((r) => `{"id":${r.id}}\n`)
        .join(""),
    );
    const jsonl = join(dir, "rows.jsonl");
    writeFileSync(jsonl, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const asJson = nearDups(["--dedup", jsonl])
      .stdout.split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).id);
    expect(
      got.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).id),
    ).toEqual(asJson);
    const best = nearDups(["--dedup", file, "--keep", "max:q"]);
    expect(best.stdout).toBe(
      rows
        .slice(200)
        .map((r) => `{"id":${r.id}}\n`)
        .join(""),
    );
  });

  it("names rows by file and row without an id column, and reads --text-field and --id-field columns", () => {
    const other = parquetOf("named.parquet", [
      { name: "url", data: rows.map((r) => `https://example.com/${r.id}`), type: "STRING" },
      { name: "body", data: rows.map((r) => r.text), type: "STRING" },
    ]);
    const byUrl = nearDups(["--dedup", other, "--text-field", "body", "--id-field", "url"]);
    expect(byUrl.stdout.split("\n")[0]).toBe('{"url":"https://example.com/1000"}');
    const noId = nearDups(["--dedup", other, "--text-field", "body"]);
    expect(noId.status, noId.stderr).toBe(0);
    expect(noId.stdout.split("\n").length - 1).toBe(100);
    const removed = join(dir, "removed.jsonl");
    nearDups(["--dedup", other, "--text-field", "body", "--removed", removed]);
    expect(JSON.parse(readFileSync(removed, "utf8").split("\n")[0])).toEqual({
      id: `${other}:101`,
      duplicate_of: `${other}:1`,
      similarity: 1,
    });
  });

  it("a file without the text column: exit 2, one line naming the file and its columns, nothing printed (damaged files: damaged-input-fuzz.test.ts)", () => {
    const missing = nearDups(["--dedup", file, "--text-field", "body"]);
    expect(missing.status).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toBe(
      `crawlsieve: ${file}: the Parquet file has no column "body" (--text-field; its columns: id, text, q)\n`,
    );
  });
});
