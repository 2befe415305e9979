// dedup by a field (issue 27, item 5): --field on TSV against awk -F'\t' '!s[$N]++'; --csv against
// records written by csv-stringify (the expected key is the field's value before it was quoted);
// --json-key against JSON.parse; records without the key (--missing); "-" for stdin.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "csv-stringify/sync";
import { describe, expect, it } from "vitest";
import { rng } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-fields-"));
const random = rng(27_5);

function cli(args: string[], input?: string | Buffer) {
  const run = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 1 << 28, timeout: 120_000 });
  return { code: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** First occurrences by a key, in order: the reference every mode is checked against. */
function firstBy<T>(records: readonly T[], key: (record: T) => string): T[] {
  const seen = new Set<string>();
  return records.filter((record) => !seen.has(key(record)) && (seen.add(key(record)), true));
}

const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
const words = ["a", "b", "", "x y", "ü", "https://e.com/p?q=1", "tab", "0", "00"];

describe("dedup --field", () => {
  it("on TSV equals awk -F'\\t' '!s[$2]++' (and $3), empty fields and repeated records included, from a file and from - (stdin)", () => {
    const lines = Array.from({ length: 20_000 }, () =>
      Array.from({ length: 2 + Math.floor(random() * 3) }, () => `${pick(words)}${Math.floor(random() * 50)}`).join(
        "\t",
      ),
    );
    const input = lines.join("\n") + "\n";
    const file = join(dir, "in.tsv");
    writeFileSync(file, input);
    for (const n of [2]) {
      const awk = execFileSync("mawk", ["-F\t", `!s[$${n}]++`], {
        input,
        env: { LC_ALL: "C" },
        maxBuffer: 1 << 28,
      }).toString();
      expect(cli(["dedup", "--field", String(n), file])).toEqual({ code: 0, stdout: awk, stderr: "" });
      expect(cli(["dedup", "--field", String(n), "-"], input)).toEqual({ code: 0, stdout: awk, stderr: "" });
    }
    // Field 3 is missing on some lines: awk's $3 is then "", ours an error unless --missing says.
    const withThird = lines.filter((line) => line.split("\t").length >= 3);
    const awk3 = execFileSync("mawk", ["-F\t", "!s[$3]++"], {
      input: withThird.join("\n") + "\n",
      env: { LC_ALL: "C" },
    }).toString();
    expect(cli(["dedup", "--field", "3", "--missing", "drop", file])).toEqual({ code: 0, stdout: awk3, stderr: "" });
  });

  it("--delimiter picks the separator, and a CRLF line's last field leaves out the \\r", () => {
    const input = "1;a\r\n2;b\r\n3;a\n4;a\r\n";
    expect(cli(["dedup", "--field", "2", "--delimiter", ";"], input).stdout).toBe("1;a\r\n2;b\r\n");
    expect(cli(["dedup", "--field", "1", "--delimiter", "\\t"], "k\t1\nk\t2\n").stdout).toBe("k\t1\n");
  });

  it("--csv compares the value a CSV writer quoted (commas, quotes, spaces inside), and prints records as they came", () => {
    const values = ["a,b", 'say "hi"', "plain", " spaced ", "", "a", '"', "x,y,z"];
    const records = Array.from({ length: 5_000 }, (_, i) => [
      String(i),
      pick(values) + String(Math.floor(random() * 5)),
      pick(values),
    ]);
    const lines = records.map((record) => stringify([record], { quoted: random() < 0.3 }).replace(/\n$/, ""));
    const expected = firstBy(
      records.map((record, i) => ({ record, line: lines[i] })),
      ({ record }) => record[1],
    )
      .map(({ line }) => line + "\n")
      .join("");
    const input = lines.join("\n") + "\n";
    expect(cli(["dedup", "--csv", "--field", "2"], input)).toEqual({ code: 0, stdout: expected, stderr: "" });
    // The same with a semicolon between fields.
    const semi = records.map((record) => stringify([record], { delimiter: ";" }).replace(/\n$/, ""));
    const expectedSemi = firstBy(
      records.map((record, i) => ({ record, line: semi[i] })),
      ({ record }) => record[2],
    )
      .map(({ line }) => line + "\n")
      .join("");
    expect(cli(["dedup", "--csv", "--delimiter", ";", "--field", "3"], semi.join("\n") + "\n")).toEqual({
      code: 0,
      stdout: expectedSemi,
      stderr: "",
    });
  });

  it("lines without the delimiter: a field's search stops at the line's end (a read of 1 MiB once took minutes)", () => {
    // 400,000 short lines, none with a tab: field 1 is the whole line, field 2 missing. Searching
    // each line's tab to the end of its read is quadratic in a read's lines; the timeout catches it.
    const lines = Array.from({ length: 400_000 }, (_, i) => `line-${i % 250_000}`);
    const file = join(dir, "no-tabs.txt");
    writeFileSync(file, lines.join("\n") + "\n");
    const awk = execFileSync("mawk", ["!s[$0]++", file], { env: { LC_ALL: "C" }, maxBuffer: 1 << 28 }).toString();
    const run = (args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args], { maxBuffer: 1 << 28, timeout: 120_000 });
    const whole = run(["dedup", "--field", "1", file]);
    expect(whole.signal).toBeNull();
    expect(whole.stdout.toString()).toBe(awk);
    const csv = run(["dedup", "--csv", "--field", "2", "--missing", "drop", file]);
    expect(csv.signal).toBeNull();
    expect(csv.stdout.toString()).toBe("");
  });

  it("--csv names a record whose quote does not close, or with bytes after its closing quote", () => {
    expect(cli(["dedup", "--csv", "--field", "2"], 'a,b\nc,"open\nd,e\n')).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "crawlsieve: stdin:2: field 2 opens a quote that the line does not close (a quoted line break is not read); --missing keep or --missing drop passes such lines\n",
    });
    expect(cli(["dedup", "--csv", "--field", "1"], '"a"x,b\n').stderr).toBe(
      "crawlsieve: stdin:1: field 1 has bytes after its closing quote; --missing keep or --missing drop passes such lines\n",
    );
  });
});

describe("dedup --json-key", () => {
  it('equals a JSON.parse reference: a top-level key and a dotted path, values compared as JSON ("1" and 1 differ, escapes decoded)', () => {
    const urls = ["https://a.example/", "https://b.example/x", "https://a.example/\u00e9"];
    const records = Array.from({ length: 10_000 }, (_, i) => {
      const url = pick(urls) + Math.floor(random() * 40);
      const id = random() < 0.5 ? Math.floor(random() * 30) : String(Math.floor(random() * 30));
      return { i, url, page: { id }, extra: random() < 0.5 ? null : [1, 2] };
    });
    // Some lines write the same string with \u escapes: the decoded value is what counts.
    const lines = records.map((record) =>
      random() < 0.2 ? JSON.stringify(record).replace(/"url":"h/, '"url":"\\u0068') : JSON.stringify(record),
    );
    const input = lines.join("\n") + "\n";
    const byUrl = firstBy(lines, (line) => JSON.stringify(JSON.parse(line).url))
      .map((line) => line + "\n")
      .join("");
    expect(cli(["dedup", "--json-key", "url"], input)).toEqual({ code: 0, stdout: byUrl, stderr: "" });
    const byId = firstBy(lines, (line) => JSON.stringify(JSON.parse(line).page.id))
      .map((line) => line + "\n")
      .join("");
    expect(cli(["dedup", "--json-key", "page.id"], input)).toEqual({ code: 0, stdout: byId, stderr: "" });
    // A Bloom filter may only drop a new record as a false positive (rate 0.001), never add one.
    const approx = cli(["dedup", "--approx", "--json-key", "url"], input).stdout.split("\n").filter(Boolean);
    const exact = byUrl.split("\n").filter(Boolean);
    expect(approx.length).toBeGreaterThanOrEqual(exact.length - 3);
    expect(approx.every((line) => exact.includes(line))).toBe(true);
  });

  it("a line that is not JSON or lacks the key: an error naming file and line, or kept or dropped as --missing says", () => {
    const file = join(dir, "mixed.jsonl");
    writeFileSync(file, '{"url":"a"}\n{"url":"a"}\n{"other":1}\nnot json\n{"url":"b"}\n');
    expect(cli(["dedup", "--json-key", "url", file])).toEqual({
      code: 2,
      stdout: "",
      stderr: `crawlsieve: ${file}:3: no key "url"; --missing keep or --missing drop passes such lines\n`,
    });
    expect(cli(["dedup", "--json-key", "url", "--missing", "keep", file]).stdout).toBe(
      '{"url":"a"}\n{"other":1}\nnot json\n{"url":"b"}\n',
    );
    expect(cli(["dedup", "--json-key", "url", "--missing", "drop", file]).stdout).toBe('{"url":"a"}\n{"url":"b"}\n');
    expect(cli(["dedup", "--json-key", "url", "--missing", "drop", file]).code).toBe(0);
    const notJson = cli(["dedup", "--json-key", "url"], '{"url":1}\nnot json\n');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(
      /^crawlsieve: stdin:2: not JSON \(.+\); --missing keep or --missing drop passes such lines\n$/,
    );
  });

  it("with --canonicalize: the field compares as its canonical URL", () => {
    const input = "a\thttp://E.com/x?b=1&a=2\nb\thttp://e.com/x?a=2&b=1\nc\thttp://e.com/y\n";
    expect(cli(["dedup", "--field", "2", "--canonicalize"], input)).toEqual({
      code: 0,
      stdout: "a\thttp://E.com/x?b=1&a=2\nc\thttp://e.com/y\n",
      stderr: "",
    });
  });

  it("with --store: the field is the key across runs", () => {
    const store = join(dir, "store");
    expect(cli(["dedup", "--store", store, "--field", "2"], "1\tx\n2\ty\n").stdout).toBe("1\tx\n2\ty\n");
    expect(cli(["dedup", "--store", store, "--field", "2"], "3\tx\n4\tz\n").stdout).toBe("4\tz\n");
  });
});

describe("options that do not fit", () => {
  it.each([
    [["--delimiter", ","], "--delimiter, --csv and --missing need --field N"],
    [["--field", "0"], "--field"],
    [["--field", "2", "--delimiter", "ab"], "--delimiter must be one single-byte character"],
    [["--csv", "--field", "1", "--delimiter", '"'], "not a quote"],
    [["--json-key", "a..b"], "--json-key must be a key or a dotted path"],
    [["--json-key", "url", "--field", "2"], "--json-key compares a JSON value"],
    [["--field", "2", "--missing", "maybe"], "--missing must be keep, drop or error"],
    [["--field", "2", "--hash", "md5", "--redis", "redis://127.0.0.1:1"], "--hash is for dedup in memory"],
  ])("dedup %j: exit 2 naming the option", (args, message) => {
    const run = cli(["dedup", ...args], "a\tb\n");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  });

  it("--hash md5 fingerprints the field with MD5 and gives awk's answer, as --hash does for whole lines", () => {
    const input = "1\ta\n2\tb\n3\ta\n";
    expect(cli(["dedup", "--field", "2", "--hash", "md5", "--stats"], input)).toMatchObject({
      code: 0,
      stdout: "1\ta\n2\tb\n",
    });
    expect(JSON.parse(cli(["dedup", "--field", "2", "--hash", "md5", "--stats"], input).stderr).hash).toBe("md5");
  });

  it("- reads stdin for md5, canonicalize and whole-line dedup too, between named files", () => {
    const file = join(dir, "one.txt");
    writeFileSync(file, "x\ny\n");
    expect(cli(["dedup", file, "-", file], "y\nz\n").stdout).toBe("x\ny\nz\n");
    expect(cli(["md5", "-"], "a\n").stdout).toBe("0cc175b9c0f1b6a831c399e269772661\n");
    expect(cli(["canonicalize", "-"], "http://Example.com/a?b=2&a=1\n").stdout).toBe("http://example.com/a?a=1&b=2\n");
  });
});
