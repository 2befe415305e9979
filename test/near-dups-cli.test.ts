// `crawlsieve near-dups` as a user runs it: the public form `near-dups --pairs --threshold J` on
// JSON lines checked against exact Jaccard (test/helpers.ts), groups without chains, folders of HTML
// and text with --include/--exclude, --json, SimHash with --max-distance, and bad input.
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { htmlToText } from "../build/js/html/html-to-text.js";
import { exactJaccard } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const EXAMPLES = new URL("../examples/near-dups", import.meta.url).pathname;

function run(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 1 << 26 });
  return { code: result.status, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

const STORY = Array.from(
  { length: 40 },
  (_, i) => `Sentence ${i} of the story tells how crawler ${i % 7} met page ${i * 13} twice and kept one copy.`,
).join(" ");

describe("htmlToText", () => {
  it("keeps the article and drops scripts, navigation, headers, footers, sidebars and hidden parts", () => {
    const html = `<html><head><title>T</title><style>p{}</style></head><body><nav>Home About</nav><header>Logo</header>
      <div role="banner">Banner</div><main><h1>Title &amp; more</h1><p>First<b>bold</b> words.</p><div hidden>secret</div><p>Second</p></main>
      <aside>Ads</aside><footer>Copyright</footer><script>var a = "<p>no</p>";</script></body></html>`;
    expect(htmlToText(html)).toBe("Title & more\nFirstbold words.\nSecond");
    expect(htmlToText("<div>one<br>two</div><p>three</p>")).toBe("one\ntwo\nthree");
    expect(htmlToText("")).toBe("");
  });
});

/** Texts of 40-200 words: families of edited copies at many similarities, and unrelated ones. */
function family(seed: number): { id: number | string; text: string }[] {
  let x = seed;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const docs: { id: number | string; text: string }[] = [];
  for (let f = 0; f < 25; f++) {
    const words = Array.from({ length: 40 + Math.floor(next() * 160) }, () => `w${Math.floor(next() * 5000)}`);
    for (let c = 0; c < 4; c++) {
      const edited = words.map((w) => (next() < c * 0.01 ? `e${Math.floor(next() * 1e6)}` : w));
      docs.push({ id: docs.length % 3 === 0 ? `doc-${docs.length}` : docs.length, text: edited.join(" ") });
    }
  }
  return docs;
}

describe("crawlsieve near-dups --pairs --threshold J (JSON lines on stdin)", () => {
  it("prints exactly the pairs whose exact Jaccard reaches J, with it, ids as given (short texts: the sketch holds the whole set)", () => {
    const docs = family(11);
    for (const threshold of [0.9, 0.8, 0.6]) {
      const { code, stdout } = run(
        ["near-dups", "--pairs", "--threshold", String(threshold)],
        docs.map((d) => JSON.stringify(d)).join("\n"),
      );
      expect(code).toBe(0);
      const printed = stdout
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { a: number | string; b: number | string; similarity: number });
      const expected: string[] = [];
      for (let i = 0; i < docs.length; i++) {
        for (let j = i + 1; j < docs.length; j++) {
          const jac = exactJaccard(docs[i].text, docs[j].text);
          if (jac >= threshold) expected.push(JSON.stringify([docs[i].id, docs[j].id, jac.toFixed(9)]));
        }
      }
      expect(expected.length).toBeGreaterThan(10);
      expect(printed.map((p) => JSON.stringify([p.a, p.b, p.similarity.toFixed(9)])).sort()).toEqual(expected.sort());
      expect(Object.keys(printed[0])).toEqual(["a", "b", "similarity"]);
    }
  });

  it("groups only documents within the threshold of their representative (no chains)", () => {
    // A chain: each text shares most shingles with the next and little with the one after.
    const base = Array.from({ length: 60 }, (_, i) => `c${i}`);
    const chain = [0, 1, 2, 3, 4].map((step) => base.map((w, i) => (i < step * 6 ? `x${i}` : w)).join(" "));
    const lines = chain.map((text, i) => JSON.stringify({ id: `link-${i}`, text })).join("\n");
    const threshold = 0.7;
    const { code, stdout } = run(["near-dups", "--json", "--threshold", String(threshold)], lines);
    expect(code).toBe(0);
    const groups = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { representative: string; members: { id: string; similarity: number }[] });
    const textOf = (id: string) => chain[Number(id.split("-")[1])];
    for (let i = 0; i + 1 < chain.length; i++)
      expect(exactJaccard(chain[i], chain[i + 1])).toBeGreaterThanOrEqual(threshold);
    for (let i = 0; i + 2 < chain.length; i++) expect(exactJaccard(chain[i], chain[i + 2])).toBeLessThan(threshold);
    expect(groups.length).toBeGreaterThan(0);
    const grouped = new Set<string>();
    for (const group of groups) {
      expect(group.members[0]).toEqual({ id: group.representative, similarity: 1 });
      for (const m of group.members) {
        expect(grouped.has(m.id)).toBe(false);
        grouped.add(m.id);
        expect(exactJaccard(textOf(m.id), textOf(group.representative))).toBeGreaterThanOrEqual(threshold);
        expect(m.similarity).toBeCloseTo(exactJaccard(textOf(m.id), textOf(group.representative)), 9);
      }
    }
  });
});

describe("crawlsieve near-dups", () => {
  it("groups one article in two templates with its print view and leaves unrelated documents out", () => {
    const { code, stdout } = run(["near-dups", EXAMPLES]);
    expect(code).toBe(0);
    const groups = stdout
      .split(/^group \d+ \(\d+ documents\)\n/m)
      .filter(Boolean)
      .map((block) =>
        block
          .trim()
          .split("\n")
          .map((line) => line.trim().split("\t")[1].replace(`${EXAMPLES}/`, ""))
          .sort(),
      );
    expect(groups).toEqual([
      ["print-view.txt", "site-a-article.html", "site-b-mirror.html"],
      ["zh-news-1.txt", "zh-news-2.txt"],
    ]);
    expect(stdout).toMatch(/^ {2}1\.000\t/m);
  });

  it("with --max-distance uses SimHash: the edited print view and the edited Chinese news item at k = 6", () => {
    const { code, stdout } = run(["near-dups", "--max-distance", "6", "--json", EXAMPLES]);
    expect(code).toBe(0);
    const groups = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const ids = groups.map((g: { members: { id: string }[] }) =>
      g.members.map((m) => m.id.replace(`${EXAMPLES}/`, "")).sort(),
    );
    expect(ids).toEqual([
      ["print-view.txt", "site-a-article.html", "site-b-mirror.html"],
      ["zh-news-1.txt", "zh-news-2.txt"],
    ]);
    for (const g of groups) for (const m of g.members) expect(m.distance).toBeLessThanOrEqual(6);
    expect(run(["near-dups", EXAMPLES]).stdout).not.toBe(run(["near-dups", "--max-distance", "0", EXAMPLES]).stdout);
  });

  it("reads JSON lines (text or html) from stdin and walks nested folders, reading a file named .html", () => {
    const lines = [
      { id: 1, text: STORY },
      { id: "b", text: STORY.replace("twice", "two times") },
      { id: 3, html: `<article><p>${STORY}</p></article><footer>x</footer>` },
      { id: 4, text: "Something else entirely about counting filters and their counters." },
    ]
      .map((x) => JSON.stringify(x))
      .join("\n");
    const { code, stdout } = run(["near-dups", "--json"], lines);
    expect(code).toBe(0);
    const group = JSON.parse(stdout.trim());
    expect(group.members.map((m: { id: string }) => m.id).sort()).toEqual([1, 3, "b"]);
    const dir = mkdtempSync(join(tmpdir(), "cs-nd-"));
    mkdirSync(join(dir, "deep", "er"), { recursive: true });
    mkdirSync(join(dir, "_sources"), { recursive: true });
    writeFileSync(join(dir, "a.txt"), STORY);
    writeFileSync(join(dir, "deep", "er", "b.md"), STORY);
    writeFileSync(join(dir, "deep", ".html"), `<html><body><p>${STORY}</p></body></html>`);
    writeFileSync(join(dir, "deep", "ignored.json"), STORY);
    writeFileSync(join(dir, "_sources", "a.rst.txt"), STORY);
    writeFileSync(join(dir, "empty.txt"), "   ");
    const walked = run(["near-dups", dir]);
    const files = (out: string) =>
      out
        .split("\n")
        .filter((line) => line.startsWith("  "))
        .map((line) => line.split("\t")[1].slice(dir.length + 1))
        .sort();
    expect(files(walked.stdout)).toEqual(["_sources/a.rst.txt", "a.txt", "deep/.html", "deep/er/b.md"]);
    expect(walked.stderr).toMatch(/1 document\(s\) without a word/);
    expect(files(run(["near-dups", "--exclude", "_sources", dir]).stdout)).toEqual([
      "a.txt",
      "deep/.html",
      "deep/er/b.md",
    ]);
    expect(files(run(["near-dups", "--include", "*.{md,json}", dir]).stdout)).toEqual([
      "deep/er/b.md",
      "deep/ignored.json",
    ]);
    expect(files(run(["near-dups", "--include", "deep/**", "--exclude", "*.json", dir]).stdout)).toEqual([
      "deep/.html",
      "deep/er/b.md",
    ]);
    // A file named on the command line is read whatever its name.
    expect(files(run(["near-dups", join(dir, "deep", "ignored.json"), join(dir, "a.txt")]).stdout)).toEqual([
      "a.txt",
      "deep/ignored.json",
    ]);
  });

  // Issue 30 item 12: a 600 MB document crashed with "Invalid string length" naming nothing; a BOM
  // failed line 1; {"id":1e400} printed null and ids past 2^53 came back rounded.
  it("says so when a .json file it reads as one document holds JSON lines, and not for one JSON document", () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-nd-json-"));
    const lines = join(dir, "pages.json");
    writeFileSync(
      lines,
      [JSON.stringify({ id: 1, text: STORY }), JSON.stringify({ id: 2, text: STORY })].join("\n") + "\n",
    );
    const one = join(dir, "one.json");
    writeFileSync(one, JSON.stringify({ id: 1, text: STORY }, null, 2));
    const hinted = run(["near-dups", lines]);
    expect(hinted.code).toBe(0);
    expect(hinted.stderr).toBe(
      `crawlsieve: near-dups: ${lines} is read as one document, but its lines look like JSON records; name it .jsonl (or give it on stdin) to read a record a line\n`,
    );
    expect(run(["near-dups", one]).stderr).toBe("");
  });

  it("refuses a document over --max-bytes by file or stdin line, with the limit, in one line", () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-nd-big-"));
    writeFileSync(join(dir, "a.txt"), "a short one");
    writeFileSync(join(dir, "big.txt"), "word ".repeat(201));
    const file = run(["near-dups", "--max-bytes", "1000", dir]);
    expect([file.code, file.stderr]).toEqual([
      2,
      `crawlsieve: ${join(dir, "big.txt")} is 1,005 bytes, over the limit of 1,000 bytes a document (--max-bytes)\n`,
    ]);
    const lines = [JSON.stringify({ id: 1, text: "short" }), JSON.stringify({ id: 2, text: "x".repeat(1000) })].join(
      "\n",
    );
    const stdin = run(["near-dups", "--max-bytes", "1000"], lines);
    expect([stdin.code, stdin.stderr]).toEqual([
      2,
      "crawlsieve: stdin line 2 is more than the limit of 1,000 bytes a document (--max-bytes)\n",
    ]);
    // A line at the limit is taken; one byte over is not, whether or not a newline ends it.
    const exact = JSON.stringify({ id: 1, text: "y".repeat(1000 - 18) });
    expect(Buffer.byteLength(exact)).toBe(1000);
    expect(run(["near-dups", "--max-bytes", "1000"], exact + "\n").code).toBe(0);
    expect(run(["near-dups", "--max-bytes", "999"], exact).stderr).toMatch(
      /stdin line 1 is more than the limit of 999 bytes/,
    );
    expect(run(["near-dups", "--max-bytes", "0"], exact).stderr).toMatch(
      /--max-bytes must be an integer from 1 to 268435456/,
    );
  });

  it("skips a UTF-8 byte order mark before the first JSON line and prints ids as they came", () => {
    const ids = ["1e400", "12345678901234567890", "1.50", "-0", '"1e400"'];
    const input =
      "\ufeff" + ids.map((id, i) => `{"text": ${JSON.stringify(STORY)}, "id": ${id}, "n": ${i}}`).join("\r\n") + "\n";
    const pairs = run(["near-dups", "--pairs"], input);
    expect(pairs.stderr).toBe("");
    const printed = pairs.stdout
      .trim()
      .split("\n")
      .map((line) => /^\{"a":(.*),"b":(.*),"similarity":1\}$/.exec(line)?.slice(1).join(" "));
    const expected: string[] = [];
    for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) expected.push(`${ids[i]} ${ids[j]}`);
    expect(printed.sort()).toEqual(expected.sort());
    const groups = run(["near-dups", "--json", "--max-distance", "3"], input);
    expect(groups.stdout).toBe(
      `{"group":1,"representative":1e400,"members":[${ids.map((id) => `{"id":${id},"distance":0}`).join(",")}]}\n`,
    );
    const text = run(["near-dups"], input);
    expect(
      text.stdout
        .split("\n")
        .slice(1, -1)
        .map((line) => line.split("\t")[1]),
    ).toEqual(["1e400", "12345678901234567890", "1.50", "-0", "1e400"]);
    // Escaped quotes and nested objects before the id do not confuse where it is read.
    const tricky = `{"t\\"id\\"": 5, "meta": {"id": 7}, "text": ${JSON.stringify(STORY)}, "id": 9007199254740993}\n{"id": 2.0, "text": ${JSON.stringify(STORY)}}\n`;
    expect(run(["near-dups", "--pairs"], tricky).stdout).toBe('{"a":9007199254740993,"b":2.0,"similarity":1}\n');
  });

  // Issue 30 item 5: 1,000 copies of one document did not finish in 5 minutes with --max-distance.
  it("groups 1,000 copies of one document by SimHash in one group, every copy at distance 0", () => {
    const input = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ id: i, text: STORY })).join("\n");
    const { code, stdout } = run(["near-dups", "--json", "--max-distance", "3"], input);
    expect(code).toBe(0);
    const groups = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(groups).toHaveLength(1);
    expect(groups[0].representative).toBe(0);
    expect(groups[0].members).toEqual(Array.from({ length: 1000 }, (_, id) => ({ id, distance: 0 })));
  });

  it("names bad input", () => {
    const bad = run(["near-dups"], '{"id": 1, "text": "ok"}\nnot json\n');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/stdin line 2/);
    expect(run(["near-dups"], '{"text": "no id"}\n').stderr).toMatch(/"id"/);
    expect(run(["near-dups", "--max-distance", "9", EXAMPLES]).stderr).toMatch(
      /--max-distance must be an integer from 0 to 8/,
    );
    expect(run(["near-dups", "--threshold", "1.2", EXAMPLES]).stderr).toMatch(/--threshold/);
    expect(run(["near-dups", "--threshold", "0", EXAMPLES]).code).toBe(2);
    expect(run(["near-dups", "--threshold", "0.9", "--max-distance", "3", EXAMPLES]).code).toBe(2);
    expect(run(["near-dups", "--include", "[abc", EXAMPLES]).stderr).toMatch(/--include/);
    expect(run(["near-dups", "/nonexistent/folder"]).code).toBe(2);
  });
});
