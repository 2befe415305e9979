// Runs that build on runs (issue 45 item 4): `near-dups --dedup A --save-index DIR`, then
// `--dedup B --against DIR` removes the records of B within J of a record kept from A (naming it)
// or of an earlier record of B, as star clustering by exact Jaccard over A then B decides (written
// here from the definition, on word 3-shingle sets). The corpus keeps every decision far from the
// threshold (copies at J >= 0.85, other pairs near 0), so MinHash's estimate cannot flip one.
// Mismatched parameters, a damaged or unfinished index and a folder that is not empty are exit 2
// and one line, before anything is printed.
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rng } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-near-index-"));
const next = rng(45_4);
const vocabulary = Array.from({ length: 3000 }, (_, i) => `w${i}`);
const words = () => Array.from({ length: 80 }, () => vocabulary[Math.floor(next() * vocabulary.length)]);
/** `text` with the word at `at` replaced (three of its 78 shingles change: J about 0.93). */
const edited = (text: string[], at: number) => text.map((w, i) => (i === at ? `x${Math.floor(next() * 1e9)}` : w));

interface Rec {
  readonly id: string;
  readonly text: string[];
}

// A: 200 documents, every fifth a near copy of the one before it (removed in A's own run).
const A: Rec[] = [];
for (let i = 0; i < 200; i++) A.push({ id: `a${i}`, text: i % 5 === 4 ? edited(A[i - 1].text, 10) : words() });
// B: near copies and exact copies of A's documents (kept or removed there), copies among B, new ones.
const B: Rec[] = [];
for (let i = 0; i < 240; i++) {
  const kind = i % 6;
  const text =
    kind === 0
      ? edited(A[i % 200].text, 40)
      : kind === 1
        ? A[(i * 7) % 200].text
        : kind === 2 && i > 12
          ? edited(B[i - 12].text, 60)
          : words();
  B.push({ id: `b${i}`, text });
}

const line = (r: Rec) => JSON.stringify({ id: r.id, text: r.text.join(" ") });
const fileOf = (name: string, recs: Rec[]) => {
  const path = join(dir, name);
  writeFileSync(path, `${recs.map(line).join("\n")}\n`);
  return path;
};
const fileA = fileOf("a.jsonl", A);
const fileB = fileOf("b.jsonl", B);

function shingles(text: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3).join(" "));
  return out;
}
function jaccard(x: Set<string>, y: Set<string>): number {
  let both = 0;
  for (const s of x) if (y.has(s)) both++;
  return both / (x.size + y.size - both);
}

/** Star clustering by exact Jaccard: each record joins its most similar earlier representative (ties: the first) at J >= 0.8. */
function starClusters(recs: Rec[]): Map<string, { rep: string; j: number }> {
  const reps: { id: string; set: Set<string> }[] = [];
  const out = new Map<string, { rep: string; j: number }>();
  for (const r of recs) {
    const set = shingles(r.text);
    let best: { rep: string; j: number } | undefined;
    for (const rep of reps) {
      const j = jaccard(set, rep.set);
      if (j >= 0.8 && (best === undefined || j > best.j)) best = { rep: rep.id, j };
    }
    if (best === undefined) {
      reps.push({ id: r.id, set });
      out.set(r.id, { rep: r.id, j: 1 });
    } else out.set(r.id, best);
  }
  return out;
}

function nearDups(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, "near-dups", ...args], { encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const removedOf = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; duplicate_of: string; similarity: number });

const index = join(dir, "index-a");
const truth = starClusters([...A, ...B]);

describe("near-dups --save-index and --against", () => {
  it("B against A's index keeps and removes what star clustering by exact Jaccard over A then B does", () => {
    const first = nearDups(["--dedup", fileA, "--save-index", index]);
    expect(first.code, first.stderr).toBe(0);
    const keptA = A.filter((r) => truth.get(r.id)!.rep === r.id);
    expect(keptA.length).toBe(160);
    expect(first.stdout).toBe(keptA.map((r) => `${line(r)}\n`).join(""));
    expect(existsSync(join(index, "index.json"))).toBe(true);

    const removed = join(dir, "removed-b.jsonl");
    const second = nearDups(["--dedup", fileB, "--against", index, "--removed", removed]);
    expect(second.code, second.stderr).toBe(0);
    const keptB = B.filter((r) => truth.get(r.id)!.rep === r.id);
    // Near and exact copies of A and copies inside B are removed; the new documents are kept.
    expect(keptB.length).toBeGreaterThan(60);
    expect(keptB.length).toBeLessThan(160);
    expect(second.stdout).toBe(keptB.map((r) => `${line(r)}\n`).join(""));
    const got = removedOf(removed);
    expect(got.map((x) => [x.id, x.duplicate_of])).toEqual(
      B.filter((r) => truth.get(r.id)!.rep !== r.id).map((r) => [r.id, truth.get(r.id)!.rep]),
    );
    expect(got.filter((x) => x.duplicate_of.startsWith("a")).length).toBeGreaterThan(60);
    for (const x of got) {
      const want = truth.get(x.id)!.j;
      expect(Math.abs(x.similarity - want), `${x.id}`).toBeLessThan(0.05);
    }
  });

  it("--against with --save-index adds this run's documents: B again removes everything, new texts stay", () => {
    const grown = join(dir, "index-ab");
    const r = nearDups(["--dedup", fileB, "--against", index, "--save-index", grown]);
    expect(r.code, r.stderr).toBe(0);
    expect(nearDups(["--dedup", fileB, "--against", grown])).toEqual({ code: 0, stdout: "", stderr: "" });
    const fresh = Array.from({ length: 30 }, (_, i) => ({ id: `c${i}`, text: words() }));
    const fileC = fileOf("c.jsonl", fresh);
    expect(nearDups(["--dedup", fileC, "--against", grown]).stdout).toBe(fresh.map((c) => `${line(c)}\n`).join(""));
  });

  it("parameters other than the index's are refused naming both; left out, the index's are taken", () => {
    const shingle = nearDups(["--dedup", fileB, "--against", index, "--shingle", "4"]);
    expect(shingle.code).toBe(2);
    expect(shingle.stdout).toBe("");
    expect(shingle.stderr).toMatch(
      /^crawlsieve: --against .*index-a: the index was made with --shingle 3 .*this run has 4/,
    );
    expect(shingle.stderr.trim().split("\n")).toHaveLength(1);
    const size = nearDups(["--dedup", fileB, "--against", index, "--sketch-size", "512"]);
    expect(size.stderr).toMatch(/--sketch-size 2048 .*this run has 512/);
    const low = nearDups(["--dedup", fileB, "--against", index, "--threshold", "0.5"]);
    expect(low.code).toBe(2);
    expect(low.stderr).toMatch(/LSH bands \(from --threshold\)/);
  });

  it("--index re-clusters the saved documents at another threshold without their texts", () => {
    const groups = nearDups(["--index", index, "--json"]);
    expect(groups.code, groups.stderr).toBe(0);
    const truthA = starClusters(A);
    const want = A.filter((r) => truthA.get(r.id)!.rep !== r.id).map((r) => [truthA.get(r.id)!.rep, r.id]);
    expect(want.length).toBe(40);
    const got = groups.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { representative: string; members: { id: string; similarity: number }[] })
      .flatMap((g) => g.members.filter((m) => m.id !== g.representative).map((m) => [g.representative, m.id]));
    expect(got).toEqual(want);
    // The near copies are at J = 75/81 = 0.93: none reaches 0.97.
    expect(nearDups(["--index", index, "--threshold", "0.97", "--json"])).toEqual({ code: 0, stdout: "", stderr: "" });
    const low = nearDups(["--index", index, "--threshold", "0.5"]);
    expect(low.code).toBe(2);
    expect(low.stderr).toMatch(/laid out for J >= 0\.8; a threshold of 0\.5 needs a new run/);
    expect(nearDups(["--index", index, fileA]).stderr).toMatch(/--index reads no input/);
    expect(nearDups(["--index", index, "--dedup"]).stderr).toMatch(/--dedup does not apply/);
  });

  it("a damaged, cut or unfinished index is exit 2 and one line naming the file, nothing printed", () => {
    const cases: [string, (copy: string) => void, RegExp][] = [
      [
        "flipped",
        (copy) => {
          const bytes = readFileSync(join(copy, "sketches.bin"));
          // A value of the last sketch (a count's damage is caught before the checksum, as a count past k).
          bytes[bytes.length - 2] ^= 0x10;
          writeFileSync(join(copy, "sketches.bin"), bytes);
        },
        /sketches\.bin does not match its checksum/,
      ],
      [
        "cut",
        (copy) => writeFileSync(join(copy, "keys.bin"), readFileSync(join(copy, "keys.bin")).subarray(0, 1000)),
        /keys\.bin ends before its documents do/,
      ],
      ["unfinished", (copy) => rmSync(join(copy, "index.json")), /has no readable index\.json/],
      [
        "forged",
        (copy) => {
          const manifest = JSON.parse(readFileSync(join(copy, "index.json"), "utf8"));
          manifest.documents = 1e12;
          writeFileSync(join(copy, "index.json"), JSON.stringify(manifest));
        },
        /parameters out of range/,
      ],
    ];
    for (const [name, harm, message] of cases) {
      const copy = join(dir, `damaged-${name}`);
      cpSync(index, copy, { recursive: true });
      harm(copy);
      const r = nearDups(["--dedup", fileB, "--against", copy]);
      expect({ code: r.code, stdout: r.stdout, lines: r.stderr.trim().split("\n").length }, name).toEqual({
        code: 2,
        stdout: "",
        lines: 1,
      });
      expect(r.stderr, name).toMatch(message);
    }
  });

  it("--save-index wants a new or empty folder, MinHash and --dedup; a failed run leaves no index that loads", () => {
    const full = join(dir, "full");
    mkdirSync(full);
    copyFileSync(fileA, join(full, "something"));
    const busy = nearDups(["--dedup", fileA, "--save-index", full]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toMatch(/--save-index must be a folder that does not exist yet, or an empty one, got ".*full"/);
    expect(nearDups(["--dedup", fileA, "--save-index", join(dir, "s1"), "--max-distance", "3"]).stderr).toMatch(
      /--save-index keeps MinHash sketches/,
    );
    expect(nearDups([fileA, "--against", index]).stderr).toMatch(/--against applies to --dedup/);
    const broken = join(dir, "broken.jsonl");
    writeFileSync(broken, `${readFileSync(fileA, "utf8")}{"id": "x", "text": \n`);
    const left = join(dir, "left");
    const failed = nearDups(["--dedup", broken, "--save-index", left]);
    expect(failed.code).toBe(2);
    expect(existsSync(join(left, "index.json"))).toBe(false);
    expect(nearDups(["--dedup", fileB, "--against", left]).stderr).toMatch(/has no readable index\.json/);
  });
});
