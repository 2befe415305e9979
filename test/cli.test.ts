// The command line as a user runs it: real processes, real files, real pipes.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rng } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const SAMPLE = new URL("../examples/nodejs-doc-links.txt", import.meta.url).pathname;

function run(args: string[], input?: Uint8Array | string) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 1 << 28 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.toString() };
}

/** The reference: split on \n, compare lines without a trailing \r, keep the first occurrence's bytes. */
function firstOccurrences(input: Buffer): Buffer {
  const seen = new Set<string>();
  const out: Buffer[] = [];
  let start = 0;
  while (start < input.length) {
    let end = input.indexOf(10, start);
    const terminated = end !== -1;
    if (!terminated) end = input.length;
    let keyEnd = end;
    if (keyEnd > start && input[keyEnd - 1] === 13) keyEnd--;
    const key = input.subarray(start, keyEnd).toString("latin1");
    if (!seen.has(key)) {
      seen.add(key);
      out.push(input.subarray(start, terminated ? end + 1 : end));
      if (!terminated) out.push(Buffer.from("\n"));
    }
    start = end + 1;
  }
  return Buffer.concat(out);
}

describe("crawlsieve dedup (exact, the default)", () => {
  it("equals first occurrences on the shipped sample, with look-up statistics", () => {
    const input = readFileSync(SAMPLE);
    const { code, stdout, stderr } = run(["dedup", "--stats", SAMPLE]);
    expect(code, stderr).toBe(0);
    expect(stdout.equals(firstOccurrences(input))).toBe(true);
    const stats = JSON.parse(stderr.trim());
    expect(stats.mode).toBe("exact");
    expect(stats.lookups + stats.lookupsAvoided).toBe(stats.lines);
  });

  it("equals first occurrences on adversarial bytes and on random input from several files", () => {
    const megabyte = Buffer.alloc(1 << 20, 0x62);
    const input = Buffer.concat([
      Buffer.from("a\r\nb\n\n\na\n"),
      Buffer.from([0xff, 0xfe, 0x0a, 0xff, 0xfe, 0x0a]),
      megabyte,
      Buffer.from("\n"),
      megabyte,
      Buffer.from("\nlast"),
    ]);
    const result = run(["dedup", "--items", "10"], input);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.equals(firstOccurrences(input))).toBe(true);
    const next = rng(7);
    const dir = mkdtempSync(join(tmpdir(), "crawlsieve-exact-"));
    const files: string[] = [];
    const all: Buffer[] = [];
    for (let f = 0; f < 3; f++) {
      const body = Buffer.from(
        Array.from({ length: 30_000 }, () => `u${Math.floor(next() * 20_000)}`).join("\n") + "\n",
      );
      files.push(join(dir, `p${f}.txt`));
      writeFileSync(files[f], body);
      all.push(body);
    }
    // Planned for 1,000 lines, given 20,000 distinct: the table grows and stays exact.
    const exact = run(["dedup", "--items", "1000", ...files]);
    expect(exact.stdout.equals(firstOccurrences(Buffer.concat(all)))).toBe(true);
  });
});

describe("crawlsieve dedup --approx", () => {
  it("equals first occurrences on the shipped sample (FP rate 1e-9 makes a drop vanishingly unlikely)", () => {
    const input = readFileSync(SAMPLE);
    const { code, stdout, stderr } = run(["dedup", "--approx", "--fp-rate", "1e-9", "--stats", SAMPLE]);
    expect(code, stderr).toBe(0);
    expect(stdout.equals(firstOccurrences(input))).toBe(true);
    const stats = JSON.parse(stderr.trim());
    expect(stats.lines).toBe(input.toString().split("\n").length - 1);
    expect(stats.unique).toBe(new Set(input.toString().split("\n").slice(0, -1)).size);
    expect(stats.duplicates).toBe(stats.lines - stats.unique);
  });

  it("keeps bytes exactly: CRLF, empty lines, invalid UTF-8, a 1 MB line, no final newline", () => {
    const megabyte = Buffer.alloc(1 << 20, 0x61);
    const input = Buffer.concat([
      Buffer.from("a\r\nb\n\n\na\n"),
      Buffer.from([0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0x0a, 0xff, 0xfe, 0x80, 0x0a]),
      megabyte,
      Buffer.from("\n"),
      megabyte,
      Buffer.from("\nb\r\nlast"),
    ]);
    for (const extra of [[], ["--items", "1000"], ["--items", "1000", "--blocked"]]) {
      const { code, stdout, stderr } = run(["dedup", "--approx", "--fp-rate", "1e-9", ...extra], input);
      expect(code, stderr).toBe(0);
      expect(stdout.equals(firstOccurrences(input)), extra.join(" ")).toBe(true);
    }
  });

  it("equals first occurrences on random input with many repeats, read from several files", () => {
    const next = rng(99);
    const dir = mkdtempSync(join(tmpdir(), "crawlsieve-cli-"));
    const files: string[] = [];
    const all: Buffer[] = [];
    for (let f = 0; f < 3; f++) {
      const lines: string[] = [];
      for (let i = 0; i < 20_000; i++)
        lines.push(`https://site${Math.floor(next() * 50)}.example/p/${Math.floor(next() * 5000)}`);
      const body = Buffer.from(lines.join("\n") + "\n");
      files.push(join(dir, `part${f}.txt`));
      writeFileSync(files[f], body);
      all.push(body);
    }
    const { code, stdout } = run(["dedup", "--approx", "--fp-rate", "1e-9", ...files]);
    expect(code).toBe(0);
    expect(stdout.equals(firstOccurrences(Buffer.concat(all)))).toBe(true);
  });

  it("is exact-or-fewer at a loose FP rate: output is a subsequence of first occurrences", () => {
    const input = readFileSync(SAMPLE);
    const { stdout } = run(["dedup", "--approx", "--fp-rate", "0.05", "--items", "2000", SAMPLE]);
    const reference = firstOccurrences(input).toString().split("\n");
    const got = stdout.toString().split("\n");
    let j = 0;
    for (const line of got) {
      while (j < reference.length && reference[j] !== line) j++;
      expect(j < reference.length, `line ${line} out of order or invented`).toBe(true);
      j++;
    }
    expect(got.length).toBeLessThan(reference.length);
  });

  it("rejects bad values by name, with exit code 2", () => {
    expect(run(["dedup", "--approx", "--fp-rate", "1.5"], "")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--fp-rate must be .* got "1.5"/),
    });
    expect(run(["dedup", "--approx", "--items=-3"], "")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--items must be .* got "-3"/),
    });
    expect(run(["dedup", "--blocked", "--items", "5"], "")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--blocked needs --approx/),
    });
    expect(run(["dedup", "--approx", "--bogus"], "")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown option --bogus; see crawlsieve dedup --help/),
    });
    expect(run(["dedup", "--approx", "/nonexistent/file"], "")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/ENOENT.*\/nonexistent\/file/),
    });
    expect(run(["frobnicate"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown command "frobnicate"/),
    });
  });

  it("shows progress on stderr only when stderr is a terminal", () => {
    // `script` gives the command a terminal; the plain pipe in the other tests gives none.
    const result = spawnSync("script", ["-qec", `node ${CLI} dedup --approx ${SAMPLE} > /dev/null`, "/dev/null"]);
    expect(result.status).toBe(0);
    expect(result.stdout.toString()).toMatch(/\d[\d,]* lines, [\d,]+ unique, [\d,]+ lines\/s/);
    const piped = run(["dedup", "--approx", SAMPLE]);
    expect(piped.stderr).toBe("");
  });

  it("stops quietly when the reader goes away (| head)", () => {
    const result = spawnSync("bash", ["-c", `node ${CLI} dedup --approx ${SAMPLE} | head -n 3`]);
    expect(result.status).toBe(0);
    expect(result.stdout.toString().split("\n")).toHaveLength(4);
    expect(result.stderr.toString()).toBe("");
  });
});

describe("crawlsieve canonicalize and dedup --canonicalize", () => {
  it("prints canonical forms and dedups by them while printing the lines as they came", () => {
    const input =
      "http://Example.com/a?b=2&a=1#top\nhttp://example.com/a?a=1&b=2\nhttps://www.bücher.de?q=bücher&utm_source=x\n";
    const canonical = run(["canonicalize"], input);
    expect(canonical.stdout.toString()).toBe(
      "http://example.com/a?a=1&b=2\nhttp://example.com/a?a=1&b=2\nhttps://www.xn--bcher-kva.de/?q=b%C3%BCcher&utm_source=x\n",
    );
    const extras = run(["canonicalize", "--remove-tracking", "--fold-www"], input);
    expect(extras.stdout.toString().split("\n")[2]).toBe("https://xn--bcher-kva.de/?q=b%C3%BCcher");
    const deduped = run(["dedup", "--approx", "--canonicalize"], input);
    expect(deduped.stdout.toString()).toBe(
      "http://Example.com/a?b=2&a=1#top\nhttps://www.bücher.de?q=bücher&utm_source=x\n",
    );
    expect(run(["dedup", "--approx"], input).stdout.toString()).toBe(input);
    expect(run(["canonicalize", "--encoding", "bogus"], input)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/encoding must be .* got "bogus"/),
    });
  });
});

describe("crawlsieve md5", () => {
  it("prints node:crypto's digest of every line", () => {
    const input = Buffer.concat([
      Buffer.from("abc\r\n\nhello world\n"),
      Buffer.from([0xff, 0x00, 0x0a]),
      Buffer.from("tail"),
    ]);
    const { code, stdout } = run(["md5"], input);
    expect(code).toBe(0);
    const lines = [
      Buffer.from("abc"),
      Buffer.from(""),
      Buffer.from("hello world"),
      Buffer.from([0xff, 0x00]),
      Buffer.from("tail"),
    ];
    expect(stdout.toString()).toBe(lines.map((l) => createHash("md5").update(l).digest("hex") + "\n").join(""));
  });
});

describe("crawlsieve size", () => {
  it("gives the worked example's numbers", () => {
    const { code, stdout } = run(["size", "--items", "1e9", "--fp-rate", "0.01", "--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout.toString());
    expect(report.standard.bits / 9.585e9).toBeCloseTo(1, 3);
    expect(report.standard.hashes).toBe(7);
    expect(report.standard.bytes / 1.2e9).toBeCloseTo(1, 1);
    // P(max c >= 16) <= m (e ln 2 / 16)^16, about 1.37e-15 m.
    expect(report.counting.overflowBound / (1.37e-15 * report.standard.bits)).toBeCloseTo(1, 1);
  });

  it("prints a table and rejects bad counter widths", () => {
    const { stdout } = run(["size", "--items", "1000000", "--fp-rate", "0.001"]);
    expect(stdout.toString()).toMatch(/hashes \(k\)\s+10/);
    expect(run(["size", "--items", "10", "--fp-rate", "0.1", "--counter-bits", "3"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--counter-bits must be 2, 4 or 8, got "3"/),
    });
    expect(run(["size", "--fp-rate", "0.1"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--items is required: an integer from 1/),
    });
  });
});

describe("the command line explains what went wrong, in one line", () => {
  it("names an unknown option and offers the nearest real one", () => {
    const typo = run(["dedup", "--apporx"], "a\n");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      "crawlsieve: dedup: unknown option --apporx (did you mean --approx?); see crawlsieve dedup --help\n",
    );
    expect(run(["size", "--itmes", "10", "--fp-rate", "0.1"]).stderr).toMatch(
      /unknown option --itmes \(did you mean --items\?\)/,
    );
    expect(run(["size", "--items"]).stderr).toBe(
      "crawlsieve: size: --items needs a value; see crawlsieve size --help\n",
    );
    expect(run(["size", "--zzzzzzzz"]).stderr).toBe(
      "crawlsieve: size: unknown option --zzzzzzzz; see crawlsieve size --help\n",
    );
  });

  // Issue 30 item 16: Node's three-line parser text, an abort on "counters", a garbled sentence and
  // 70 lines of help.
  it("says a value starting with '-' reads as an option, marks a counting filter past 2^53 counters not planned, and names one measure at a time", () => {
    expect(run(["size", "--items", "-5", "--fp-rate", "0.01"])).toMatchObject({
      code: 2,
      stderr:
        'crawlsieve: size: --items was given "-5", which starts with "-" and reads as an option; write --items=-5 to give it as the value; see crawlsieve size --help\n',
    });
    const huge = run(["size", "--items", "1e15", "--fp-rate", "1e-12", "--json"]);
    expect(huge.code).toBe(0);
    const report = JSON.parse(huge.stdout.toString());
    expect(report.counting).toEqual({ counterBits: 4, error: `${report.standard.bits} counters exceed 2^53 - 1` });
    expect(report.standard.bits).toBeGreaterThan(2 ** 53);
    expect(run(["size", "--items", "1e15", "--fp-rate", "1e-12"]).stdout.toString()).toMatch(
      /counting \(4-bit\)\s+not planned: \d+ counters exceed 2\^53 - 1\noverflow bound\s+not planned\n$/,
    );
    expect(run(["near-dups", "--max-distance", "3", "--threshold", "0.9"], "")).toMatchObject({
      code: 2,
      stderr:
        "crawlsieve: near-dups: --max-distance (SimHash) and --threshold (MinHash) choose different measures; give one of them\n",
    });
  });

  // Issue 49 item 7: "help dedup" printed the global help; a bare crawlsieve printed 130 lines on stdout.
  it("help CMD and CMD --help print that command's help; a bare crawlsieve is a short usage error on stderr", () => {
    const own = run(["md5", "--help"]);
    expect(own.code).toBe(0);
    expect(own.stdout.toString()).toMatch(/^crawlsieve md5 \[FILE\.\.\.\]\n/);
    expect(run(["help", "md5"])).toMatchObject({ code: 0, stdout: own.stdout });
    expect(run(["help", "dedupe"]).stderr).toMatch(/^crawlsieve: unknown command "dedupe" \(did you mean dedup\?\)/);
    const bare = run([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout.length).toBe(0);
    expect(bare.stderr.toString()).toBe(
      "usage: crawlsieve <command> [options]; commands: dedup, canonicalize, near-dups, md5, size, forget\nsee crawlsieve help <command>, or crawlsieve --help for all of them\n",
    );
    expect(run(["help"]).stdout.toString()).toMatch(/^usage: crawlsieve <command>/);
  });

  it("answers an unknown command in one line, with the nearest command", () => {
    expect(run(["dedupe"])).toMatchObject({
      code: 2,
      stderr:
        'crawlsieve: unknown command "dedupe" (did you mean dedup?); commands: dedup, canonicalize, near-dups, md5, size, forget; see crawlsieve --help\n',
    });
    expect(run(["nears-dup"]).stderr).toMatch(/did you mean near-dups\?/);
    expect(run(["zzzzzz"]).stderr.split("\n")).toHaveLength(2);
  });

  it("says a required option is missing instead of 'got undefined'", () => {
    expect(run(["size", "--items", "10"])).toMatchObject({
      code: 2,
      stderr: "crawlsieve: --fp-rate is required: a number strictly between 0 and 1, e.g. 0.01\n",
    });
  });

  it("prints its version", () => {
    const version = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
    expect(run(["--version"])).toMatchObject({ code: 0 });
    expect(run(["--version"]).stdout.toString()).toBe(`crawlsieve ${version}\n`);
  });

  it("names the path of a directory given as input", () => {
    const dir = mkdtempSync(join(tmpdir(), "crawlsieve-dir-"));
    for (const command of ["dedup", "md5", "canonicalize"]) {
      expect(run([command, dir])).toMatchObject({
        code: 2,
        stderr: `crawlsieve: ${dir} is a directory; give files (or no FILE to read stdin)\n`,
      });
    }
  });

  it("checks --save-filter before reading any input", () => {
    const dir = mkdtempSync(join(tmpdir(), "crawlsieve-save-"));
    expect(run(["dedup", "--approx", "--save-filter", dir], "a\n")).toMatchObject({
      code: 2,
      stdout: Buffer.alloc(0),
      stderr: `crawlsieve: --save-filter ${dir} is a directory; give a file path\n`,
    });
    const missing = join(dir, "no", "such", "filter.bin");
    expect(run(["dedup", "--approx", "--save-filter", missing], "a\n")).toMatchObject({
      code: 2,
      stdout: Buffer.alloc(0),
    });
  });

  it("refuses a --redis value that is not a Redis URL, without a stack trace", () => {
    const result = run(["dedup", "--redis", "notaurl", "--namespace", "x"], "a\n");
    expect(result).toMatchObject({
      code: 2,
      stderr:
        'crawlsieve: --redis must be a Redis URL such as redis://127.0.0.1:6379 (or rediss:// for TLS), got "notaurl"\n',
    });
  });

  it("size: a rate a blocked filter cannot reach is reported in bounded time, the rest still planned", () => {
    const result = spawnSync(process.execPath, [CLI, "size", "--items", "10", "--fp-rate", "1e-300", "--json"], {
      timeout: 120_000,
    });
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout.toString());
    expect(report.standard.hashes).toBe(64);
    expect(report.blocked.error).toMatch(
      /a blocked filter cannot reach fpRate 1e-300 for 10 items within 1099511627776 bytes/,
    );
  });
});

describe("examples/make-sample.js (how the quick start's input is made)", () => {
  it("lists every <a href> of the HTML files, in file and document order, resolved against the page", () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-sample-"));
    writeFileSync(
      join(dir, "b.html"),
      '<p><a href="fs.html#fs_read">read</a> <a name="x">no href</a> <a href="https://example.org/a?b=1">out</a></p>',
    );
    writeFileSync(join(dir, "a.html"), '<a href="#top">top</a><A HREF="../../index.html">up</A>');
    writeFileSync(join(dir, "notes.txt"), '<a href="ignored.html">not html</a>');
    const result = spawnSync(process.execPath, [new URL("../examples/make-sample.js", import.meta.url).pathname, dir], {
      encoding: "utf8",
    });
    expect(result.stderr).toBe("");
    const base = `https://nodejs.org/docs/${process.version}/api/`;
    expect(result.stdout).toBe(
      [
        `${base}a.html#top`,
        "https://nodejs.org/docs/index.html",
        `${base}fs.html#fs_read`,
        "https://example.org/a?b=1",
      ].join("\n") + "\n",
    );
  });
});
