// `crawlsieve near-dups` as a user runs it: folders of HTML and text, JSON lines on stdin, --json,
// boilerplate removal across templates, and bad input.
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { htmlToText } from "../build/js/html/html-to-text.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const EXAMPLES = new URL("../examples/near-dups", import.meta.url).pathname;

function run(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 1 << 26 });
  return { code: result.status, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

const STORY = Array.from({ length: 40 }, (_, i) => `Sentence ${i} of the story tells how crawler ${i % 7} met page ${i * 13} twice and kept one copy.`).join(" ");

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

describe("crawlsieve near-dups", () => {
  it("groups one article in two templates (distance 0) and leaves unrelated documents out", () => {
    const { code, stdout } = run(["near-dups", EXAMPLES]);
    expect(code).toBe(0);
    expect(stdout).toBe(`group 1 (2 documents)\n  0\t${EXAMPLES}/site-a-article.html\n  0\t${EXAMPLES}/site-b-mirror.html\n`);
  });

  it("with a larger distance also finds the edited print view and the edited Chinese news item", () => {
    const { code, stdout } = run(["near-dups", "--max-distance", "6", "--json", EXAMPLES]);
    expect(code).toBe(0);
    const groups = stdout.trim().split("\n").map((line) => JSON.parse(line));
    const ids = groups.map((g: { members: { id: string }[] }) => g.members.map((m) => m.id.replace(`${EXAMPLES}/`, "")).sort());
    expect(ids).toEqual([["print-view.txt", "site-a-article.html", "site-b-mirror.html"], ["zh-news-1.txt", "zh-news-2.txt"]]);
    for (const g of groups) for (const p of g.pairs) expect(p.distance).toBeLessThanOrEqual(6);
  });

  it("reads JSON lines from stdin and walks nested folders", () => {
    const lines = [
      { id: 1, text: STORY },
      { id: "b", text: STORY.replace("twice", "two times") },
      { id: 3, html: `<article><p>${STORY}</p></article><footer>x</footer>` },
      { id: 4, text: "Something else entirely about counting filters and their counters." },
    ].map((x) => JSON.stringify(x)).join("\n");
    const { code, stdout } = run(["near-dups", "--max-distance", "6", "--json"], lines);
    expect(code).toBe(0);
    const group = JSON.parse(stdout.trim());
    expect(group.members.map((m: { id: string }) => m.id).sort()).toEqual(["1", "3", "b"]);
    const dir = mkdtempSync(join(tmpdir(), "cs-nd-"));
    mkdirSync(join(dir, "deep", "er"), { recursive: true });
    writeFileSync(join(dir, "a.txt"), STORY);
    writeFileSync(join(dir, "deep", "er", "b.md"), STORY);
    writeFileSync(join(dir, "deep", "ignored.json"), STORY);
    writeFileSync(join(dir, "empty.txt"), "   ");
    const walked = run(["near-dups", dir]);
    expect(walked.stdout).toBe(`group 1 (2 documents)\n  0\t${join(dir, "a.txt")}\n  0\t${join(dir, "deep", "er", "b.md")}\n`);
    expect(walked.stderr).toMatch(/1 document\(s\) without a word/);
  });

  it("names bad input", () => {
    const bad = run(["near-dups"], '{"id": 1, "text": "ok"}\nnot json\n');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/stdin line 2/);
    expect(run(["near-dups"], '{"text": "no id"}\n').stderr).toMatch(/"id"/);
    expect(run(["near-dups", "--max-distance", "9", EXAMPLES]).stderr).toMatch(/--max-distance must be an integer from 0 to 8/);
    expect(run(["near-dups", "/nonexistent/folder"]).code).toBe(2);
  });
});
