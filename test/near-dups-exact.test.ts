// Issue 45 items 2 and 3 and issue 49's leftovers for `near-dups --dedup`: exact-first (records
// whose text differs only in ASCII white space and A-Z case are one document, sketched once, and
// never texts the tokenizer tells apart), the --keep rules (first, longest, max:FIELD, min:FIELD
// with missing and non-numeric values ranked last, ties to the earlier record), cluster_size with
// --annotate, --annotate beside --removed, byte-identical outputs run after run, and usage lines
// that list every option. The corpus is exact copies of unrelated pages, so every decision is known
// by construction, checked here with node:crypto digests of the pages and JSON.parse.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simhashMany, sketchMany, xxh128 } from "../build/js/index.node.js";
import { exactDigests } from "../build/js/near-dup/exact-text.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-nd-exact-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const next = rng(45);
const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
const SPACES = [" ", "  ", "\t", "\n", " \r\n ", "\f", "\v"];

/** `page` with its words re-spaced at random and random ASCII letters' case flipped: an exact copy to exact-first. */
function variant(page: string): string {
  const words = page
    .split(" ")
    .map((word) => [...word].map((c) => (/[a-z]/i.test(c) && next() < 0.2 ? c.toUpperCase() : c)).join(""));
  const lead = next() < 0.3 ? pick(SPACES) : "";
  const tail = next() < 0.3 ? pick(SPACES) : "";
  return lead + words.map((w, i) => (i === 0 ? w : pick(SPACES) + w)).join("") + tail;
}

/** A packed digest of exactDigests as xxh128()'s hex (high 64 bits first). */
const hex = (digests: Uint8Array, i: number) => {
  const view = Buffer.from(digests.buffer, digests.byteOffset + 16 * i, 16);
  return (
    view.readBigUInt64LE(8).toString(16).padStart(16, "0") + view.readBigUInt64LE(0).toString(16).padStart(16, "0")
  );
};

describe("exactDigests: what exact-first compares", () => {
  it("is XXH3-128 of the text with ASCII white space collapsed and trimmed and A-Z lowered; equal digests, equal sketches and SimHashes", () => {
    const vocabulary = ["alpha", "beta", "Café", "ÉCOLE", "straße", "Ωμέγα", "snake_case", "x1", "déjà-vu", "42"];
    for (let t = 0; t < 200; t++) {
      const page = Array.from({ length: 3 + Math.floor(next() * 20) }, () => pick(vocabulary)).join(" ");
      const [a, b] = [variant(page), variant(page)];
      const digests = exactDigests([a, b, page]);
      // The rule as the docs state it, applied here by String methods on the single-spaced page.
      const rule = page.replace(/[A-Z]/g, (c) => c.toLowerCase());
      expect([hex(digests, 0), hex(digests, 1), hex(digests, 2)], JSON.stringify([a, b])).toEqual([
        xxh128(rule),
        xxh128(rule),
        xxh128(rule),
      ]);
      const sketches = sketchMany([a, b], { shingle: 3, k: 64, bands: 8, rows: 2 });
      const stride = 65;
      expect(sketches.values.subarray(0, stride)).toEqual(sketches.values.subarray(stride));
      expect(sketches.keys.subarray(0, 8)).toEqual(sketches.keys.subarray(8));
      const [x, y] = simhashMany([a, b]);
      expect(x).toBe(y);
    }
  });

  it("keeps apart texts the tokenizer tells apart, which NFC or full lower-casing would join", () => {
    for (const [a, b] of [
      ["un café noir ici", "un cafe\u0301 noir ici"], // composed and decomposed é: different bytes, different tokens
      ["Արամ գնաց տուն", "արամ գնաց տուն"], // Armenian capitals: the kernel does not fold them
      ["the ǅ letter here", "the ǆ letter here"], // a title-case digraph, folded by toLowerCase only
    ]) {
      expect(a.normalize("NFC").toLowerCase()).toBe(b.normalize("NFC").toLowerCase());
      const sketches = sketchMany([a, b], { shingle: 1, k: 16, bands: 4, rows: 2 });
      expect(sketches.values.subarray(0, 17)).not.toEqual(sketches.values.subarray(17));
      const digests = exactDigests([a, b]);
      expect(hex(digests, 0)).not.toBe(hex(digests, 1));
    }
    // Unspaced scripts are cut by Intl.Segmenter in pieces placed by offset: hashed as they are.
    const unspaced = ["漢字  テスト A", "漢字 テスト a", "ไทย  ภาษา"];
    const digests = exactDigests(unspaced);
    unspaced.forEach((text, i) => expect(hex(digests, i)).toBe(xxh128(text)));
  });
});

/** 600 records: copies (variants) of 200 unrelated 30-word pages, shuffled, with a score "q" of mixed kinds. */
const PAGES = 200;
const pages = Array.from({ length: PAGES }, () =>
  Array.from({ length: 30 }, () => `w${Math.floor(next() * 1e9)}`).join(" "),
);
const SCORES: unknown[] = [1, 2, 3, 2.5, -1, 1e300, "9", null, true, undefined];
const order = Array.from({ length: 3 * PAGES }, (_, i) => i % PAGES);
for (let i = order.length - 1; i > 0; i--) {
  const j = Math.floor(next() * (i + 1));
  [order[i], order[j]] = [order[j], order[i]];
}
const records = order.map((page, id) => {
  const q = pick(SCORES);
  const record: Record<string, unknown> = { id, text: variant(pages[page]) };
  if (q !== undefined) record.q = q;
  return { id, page, q, line: JSON.stringify(record), text: record.text as string };
});
const INPUT = join(dir, "copies.jsonl");
writeFileSync(INPUT, records.map((r) => `${r.line}\n`).join(""));

type Rule = "first" | "longest" | "max:q" | "min:q";

/** The record kept for each page under `rule`, computed here from the records' own members. */
function keptByPage(rule: Rule): Map<number, number> {
  const value = (r: (typeof records)[number]) =>
    rule === "longest" ? r.text.length : typeof r.q === "number" ? r.q : Number.NaN;
  const better = (a: (typeof records)[number], b: (typeof records)[number]) => {
    if (rule === "first") return false;
    const [x, y] = [value(a), value(b)];
    if (Number.isNaN(x)) return false;
    if (Number.isNaN(y)) return true;
    return rule === "min:q" ? x < y : x > y; // a tie stays with b, the earlier record
  };
  const kept = new Map<number, number>();
  for (const r of records) {
    const held = kept.get(r.page);
    if (held === undefined || better(r, records[held])) kept.set(r.page, r.id);
  }
  return kept;
}

/** Stdout and the --removed file the docs promise for `rule`, `annotate` with --removed or not. */
function expected(rule: Rule, annotate: "no" | "kept" | "all"): { stdout: string; removed: string } {
  const kept = keptByPage(rule);
  const size = new Map<number, number>();
  const cluster = new Map<number, number>();
  for (const r of records) {
    size.set(r.page, (size.get(r.page) ?? 0) + 1);
    if (!cluster.has(r.page)) cluster.set(r.page, cluster.size + 1); // numbered by first appearance
  }
  let stdout = "";
  let removed = "";
  for (const r of records) {
    const of = kept.get(r.page)!;
    const isKept = of === r.id;
    if (annotate === "all" || (annotate === "kept" && isKept))
      stdout += `${r.line.slice(0, -1)},"cluster":${cluster.get(r.page)},"cluster_size":${size.get(r.page)},"duplicate_of":${isKept ? null : of}}\n`;
    else if (isKept) stdout += `${r.line}\n`;
    if (!isKept && annotate !== "all") removed += `${JSON.stringify({ id: r.id, duplicate_of: of, similarity: 1 })}\n`;
  }
  return { stdout, removed };
}

let runs = 0;
/** `near-dups --dedup ARGS`, with a fresh --removed file when `removed`, read back after the run. */
function run(args: string[], { removed = false, input }: { removed?: boolean; input?: Buffer } = {}) {
  const path = join(dir, `removed-${runs++}.jsonl`);
  const result = spawnSync(
    process.execPath,
    [CLI, "near-dups", "--dedup", ...(removed ? ["--removed", path] : []), ...args],
    { input, maxBuffer: 1 << 26, timeout: 60_000 },
  );
  const file = removed ? readFileSync(path, "utf8") : "";
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.toString(), removed: file };
}

describe("near-dups --dedup: exact-first and the --keep rules", () => {
  it("the corpus: 200 distinct pages (node:crypto), each record a copy of one", () => {
    const digests = new Set(pages.map((page) => createHash("sha256").update(page).digest("hex")));
    expect(digests.size).toBe(PAGES);
    for (const r of records)
      expect(JSON.parse(r.line).text.split(/\s+/).filter(Boolean).join(" ").toLowerCase()).toBe(pages[r.page]);
  });

  it("exact-first (the default) and --no-exact-first remove the same copies, at similarity 1, and keep the first", () => {
    const want = expected("first", "no");
    for (const flags of [[], ["--no-exact-first"]]) {
      const result = run([...flags, INPUT], { removed: true });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout.toString()).toBe(want.stdout);
      expect(result.removed).toBe(want.removed);
    }
  });

  it.each(["longest", "max:q", "min:q"] as const)(
    "--keep %s keeps the record the rule ranks first (missing or non-numbers last, ties to the earlier), stdout annotated beside --removed",
    (rule) => {
      const want = expected(rule, "kept");
      const result = run(["--keep", rule, "--annotate", INPUT], { removed: true });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout.toString()).toBe(want.stdout);
      expect(result.removed).toBe(want.removed);
    },
  );

  it("--annotate alone writes every record with cluster, cluster_size and duplicate_of; the same bytes every run, file or stdin", () => {
    const want = expected("max:q", "all").stdout;
    const outputs = [
      run(["--keep", "max:q", "--annotate", INPUT]),
      run(["--keep", "max:q", "--annotate", INPUT]),
      run(["--keep", "max:q", "--annotate", "--no-exact-first", "--tmp", dir], { input: readFileSync(INPUT) }),
    ];
    for (const result of outputs) {
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout.toString()).toBe(want);
    }
    expect(outputs[1].stdout.equals(outputs[0].stdout)).toBe(true);
  });

  it("an exact copy goes where the first of its text went; --no-exact-first lets it join a closer representative that came between", () => {
    // 60 words; R1 and R2 change E at different places: J(R1, E) = 52/64, J(E, R2) = 55/61, J(R1, R2) = 49/67.
    const words = Array.from({ length: 60 }, () => `v${Math.floor(next() * 1e9)}`);
    const changed = (at: number[]) => words.map((w, i) => (at.includes(i) ? `${w}x` : w)).join(" ");
    const [r1, e, r2] = [changed([10, 30]), changed([]), changed([50])];
    const shingles = (text: string) => {
      const t = text.split(" ");
      return new Set(t.slice(2).map((_, i) => t.slice(i, i + 3).join(" ")));
    };
    const jaccard = (a: string, b: string) => {
      const [x, y] = [shingles(a), shingles(b)];
      const both = [...x].filter((s) => y.has(s)).length;
      return both / (x.size + y.size - both);
    };
    expect([jaccard(r1, e), jaccard(e, r2), jaccard(r1, r2)]).toEqual([52 / 64, 55 / 61, 49 / 67]);
    const input = Buffer.from(
      [r1, e, r2, e.toUpperCase()].map((text, id) => `${JSON.stringify({ id, text })}\n`).join(""),
    );
    const removed = (flags: string[]) =>
      run([...flags, "--threshold", "0.8", "--tmp", dir], { removed: true, input })
        .removed.trim()
        .split("\n")
        .map((line) => JSON.parse(line));
    expect(removed([])).toEqual([
      { id: 1, duplicate_of: 0, similarity: 52 / 64 },
      { id: 3, duplicate_of: 0, similarity: 52 / 64 },
    ]);
    expect(removed(["--no-exact-first"])).toEqual([
      { id: 1, duplicate_of: 0, similarity: 52 / 64 },
      { id: 3, duplicate_of: 2, similarity: 55 / 61 },
    ]);
  });

  it("a --keep value that is no rule: exit 2, one line naming it", () => {
    for (const bad of ["max:", "avg:q", "max", "Longest"]) {
      const result = run(["--keep", bad, INPUT]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `crawlsieve: --keep must be first, longest, max:FIELD or min:FIELD (FIELD a JSON member holding a number, e.g. max:quality), got ${JSON.stringify(bad)}\n`,
      );
      expect(result.stdout.length).toBe(0);
    }
  });
});

describe("near-dups --no-exact-first", () => {
  it("is the one --no- form, and applies to --dedup only: exit 2, one line naming what was typed", () => {
    const stderr = (args: string[]) =>
      spawnSync(process.execPath, [CLI, "near-dups", ...args], { input: "", encoding: "utf8" });
    expect(stderr(["--no-exact-first"])).toMatchObject({
      status: 2,
      stderr: "crawlsieve: near-dups: --no-exact-first applies to --dedup (dataset mode); add --dedup\n",
    });
    expect(stderr(["--dedup", "--no-annotate"])).toMatchObject({
      status: 2,
      stderr: "crawlsieve: near-dups: unknown option --no-annotate (--annotate is off unless given)\n",
    });
  });
});

describe("near-dups usage", () => {
  it("its usage lines list every option its help describes", () => {
    const help = spawnSync(process.execPath, [CLI, "help", "near-dups"], { encoding: "utf8" }).stdout;
    const usage = help.split("\n").filter((line) => line.startsWith("crawlsieve near-dups"));
    expect(usage.length).toBe(4);
    const described = [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(described.length).toBeGreaterThan(20);
    const listed = new Set(usage.join(" ").match(/--[a-z-]+/g));
    for (const option of described)
      expect(listed.has(option) || listed.has(option.replace(/^--/, "--no-")), option).toBe(true);
  });
});
