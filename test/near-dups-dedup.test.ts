// `crawlsieve near-dups --dedup` (dataset mode) and the cost of clusters, as a user runs them:
// every record lands in exactly one of stdout (its original bytes, in input order) and the
// --removed file; a removed record names a kept one whose exact Jaccard (computed here by brute
// force over the same shingles, test/helpers.ts) is high; true pairs at J >= 0.9 do not both
// survive; --annotate, --keep longest, --text-field/--id-field, stdin and bad input; and 6,666
// copies of one page among 20,000 documents end in one group (this failed with "Set maximum size
// exceeded" after 50 s and 2.3 GB before clusters were made in one pass). Star clustering in the
// library is checked against a reference written here over exact Jaccard.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { leaderClusters, MinHashIndex, simhashMany } from "../build/js/index.node.js";
import { exactJaccard, ready, rng, setJaccard, shingleSet } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;

function run(args: string[], input?: string | Buffer) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 1 << 28 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.toString() };
}

const dir = mkdtempSync(join(tmpdir(), "cs-nd-dedup-"));

interface Rec {
  /** The line as written to the input file. */
  readonly line: string;
  /** The id as JSON (what --removed prints), "FILE:LINE" for a record without one. */
  readonly idJson: string;
  /** Its text ("" for a record without text). */
  readonly text: string;
}

/**
 * A shuffled corpus of families: a page of 30-400 words (some long enough, 1,200-2,000 words, that
 * the sketch only estimates) and copies with a share of words replaced (0 to 25%), among unrelated
 * pages; ids of several forms, records without an id, without text and without a word, extra
 * members, CRLF and non-ASCII text.
 */
function corpus(seed: number, families: number, file = join(dir, "corpus.jsonl")): Rec[] {
  const next = rng(seed);
  const texts: string[] = [];
  for (let f = 0; f < families; f++) {
    const long = next() < 0.15;
    const length = long ? 1200 + Math.floor(next() * 800) : 30 + Math.floor(next() * 370);
    const words = Array.from({ length }, () => `w${Math.floor(next() * 50_000)}`);
    const copies = Math.floor(next() * 5);
    texts.push(words.join(" "));
    for (let c = 0; c < copies; c++) {
      const share = [0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.25][Math.floor(next() * 8)];
      texts.push(words.map((w) => (next() < share ? `e${Math.floor(next() * 1e9)}` : w)).join(" "));
    }
  }
  // Shuffle so that a family's copies are spread through the file.
  for (let i = texts.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [texts[i], texts[j]] = [texts[j], texts[i]];
  }
  const recs: Rec[] = [];
  texts.forEach((text, i) => {
    const number = recs.length + 1;
    const kind = i % 7;
    if (kind === 0)
      recs.push({
        line: JSON.stringify({ text, id: `doc-${i}`, lang: "xx" }),
        idJson: JSON.stringify(`doc-${i}`),
        text,
      });
    else if (kind === 1)
      recs.push({
        line: `{"id": ${1e6 + i}, "meta": {"id": "inner"},   "text": ${JSON.stringify(text)} }\r`,
        idJson: String(1e6 + i),
        text,
      });
    else if (kind === 2)
      recs.push({
        line: JSON.stringify({ text: text.replace("w1", "wé1") }),
        idJson: JSON.stringify(`${file}:${number}`),
        text: text.replace("w1", "wé1"),
      });
    else recs.push({ line: JSON.stringify({ id: 10_000 + i, text }), idJson: String(10_000 + i), text });
    if (i % 50 === 0)
      recs.push({
        line: JSON.stringify({ id: `empty-${i}`, text: " -- !! " }),
        idJson: JSON.stringify(`empty-${i}`),
        text: " -- !! ",
      });
    if (i % 75 === 0)
      recs.push({
        line: JSON.stringify({ id: `notext-${i}`, title: "no text member" }),
        idJson: JSON.stringify(`notext-${i}`),
        text: "",
      });
  });
  return recs;
}

/** The input file of records, each line ended by "\n". */
function write(name: string, recs: readonly Rec[]): string {
  const path = join(dir, name);
  writeFileSync(path, recs.map((r) => `${r.line}\n`).join(""));
  return path;
}

interface Removed {
  id: unknown;
  duplicate_of: unknown;
  similarity: number;
}

/** Checks the exactly-one-of invariant and order; returns the kept and removed records by index. */
function account(recs: readonly Rec[], stdout: Buffer, removedText: string) {
  const lines = stdout.toString("utf8").split("\n");
  expect(lines.pop()).toBe("");
  // Kept lines are original lines, byte for byte, in input order: a subsequence of the input.
  const kept: number[] = [];
  let at = 0;
  for (const line of lines) {
    while (at < recs.length && recs[at].line !== line) at++;
    expect(at, `kept line not in input order: ${line.slice(0, 60)}`).toBeLessThan(recs.length);
    kept.push(at++);
  }
  expect(Buffer.concat(kept.map((i) => Buffer.from(`${recs[i].line}\n`)))).toEqual(stdout);
  const byId = new Map(recs.map((r, i) => [r.idJson, i]));
  expect(byId.size).toBe(recs.length);
  const removed = removedText
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const value = JSON.parse(line) as Removed;
      expect(Object.keys(value)).toEqual(["id", "duplicate_of", "similarity"]);
      return {
        index: byId.get(JSON.stringify(value.id))!,
        of: byId.get(JSON.stringify(value.duplicate_of))!,
        similarity: value.similarity,
      };
    });
  // Every record in exactly one of the two.
  const places = new Array<number>(recs.length).fill(0);
  for (const i of kept) places[i]++;
  for (const r of removed) places[r.index]++;
  expect(places.every((n) => n === 1)).toBe(true);
  const isKept = new Set(kept);
  for (const r of removed) expect(isKept.has(r.of), `duplicate_of ${recs[r.of]?.idJson} is not kept`).toBe(true);
  return { kept, removed, isKept };
}

/** Exact Jaccard of every pair of records, those at >= floor. */
function truePairs(recs: readonly Rec[], floor: number): [number, number, number][] {
  const sets = recs.map((r) => shingleSet(r.text));
  const out: [number, number, number][] = [];
  for (let i = 0; i < recs.length; i++) {
    for (let j = i + 1; j < recs.length; j++) {
      // Jaccard is at most the ratio of the set sizes: a bound that skips no pair at the floor.
      const a = sets[i].size;
      const b = sets[j].size;
      if (a === 0 || b === 0 || Math.min(a, b) / Math.max(a, b) < floor) continue;
      const jac = setJaccard(sets[i], sets[j]);
      if (jac >= floor) out.push([i, j, jac]);
    }
  }
  return out;
}

describe("near-dups --dedup --threshold 0.8 --removed R corpus.jsonl", () => {
  const recs = corpus(28, 260);
  const input = write("corpus.jsonl", recs);
  const removedPath = join(dir, "removed.jsonl");
  const result = run(["near-dups", "--dedup", "--threshold", "0.8", "--removed", removedPath, input]);

  it("writes every record to exactly one of stdout and the removed file, kept ones verbatim and in order", () => {
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const { kept, removed } = account(recs, result.stdout, readFileSync(removedPath, "utf8"));
    expect(removed.length).toBeGreaterThan(100);
    expect(kept.length + removed.length).toBe(recs.length);
    // Records without a word (or without text) are kept untouched.
    recs.forEach((r, i) => {
      if (!/[\p{L}\p{N}_]/u.test(r.text)) expect(kept).toContain(i);
    });
  });

  it("names a kept duplicate_of with exact Jaccard >= 0.75 for at least 99% of removed records, and keeps both of at most 1% of the pairs at J >= 0.9", () => {
    const { removed, isKept } = account(recs, result.stdout, readFileSync(removedPath, "utf8"));
    const good = removed.filter((r) => exactJaccard(recs[r.index].text, recs[r.of].text) >= 0.75).length;
    expect(good / removed.length).toBeGreaterThanOrEqual(0.99);
    for (const r of removed)
      expect(Math.abs(r.similarity - exactJaccard(recs[r.index].text, recs[r.of].text))).toBeLessThan(0.1);
    const pairs = truePairs(recs, 0.9);
    expect(pairs.length).toBeGreaterThan(100);
    const both = pairs.filter(([i, j]) => isKept.has(i) && isKept.has(j)).length;
    expect(both / pairs.length).toBeLessThanOrEqual(0.01);
    // And the first record of a cluster is the one kept: a removed record's duplicate_of comes before it.
    for (const r of removed) expect(r.of).toBeLessThan(r.index);
  });

  it("reads stdin (or -) as it reads the file, through a copy, and --annotate keeps every record with its cluster and duplicate_of", () => {
    const file = readFileSync(input);
    const spool = mkdtempSync(join(dir, "spool-"));
    const stdin = run(["near-dups", "--dedup", "--threshold", "0.8", "--tmp", spool], file);
    expect(stdin.code).toBe(0);
    expect(stdin.stdout.equals(result.stdout)).toBe(true);
    expect(readdirSync(spool)).toEqual([]); // the copy of stdin is removed
    expect(run(["near-dups", "--dedup", "--threshold", "0.8", "-"], file).stdout.equals(result.stdout)).toBe(true);
    const annotated = run(["near-dups", "--dedup", "--annotate", "--threshold", "0.8", input]);
    expect([annotated.code, annotated.stderr]).toEqual([0, ""]);
    const lines = annotated.stdout.toString("utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(recs.length);
    const { removed } = account(recs, result.stdout, readFileSync(removedPath, "utf8"));
    const removedOf = new Map(removed.map((r) => [r.index, r.of]));
    const clusterOf = new Map<number, number>();
    lines.forEach((line, i) => {
      const value = JSON.parse(line);
      const original = JSON.parse(recs[i].line);
      const { cluster, cluster_size: size, duplicate_of: duplicateOf, ...rest } = value;
      expect(rest).toEqual(original);
      const hasWord = /[\p{L}\p{N}_]/u.test(recs[i].text);
      if (!hasWord) {
        expect([cluster, size, duplicateOf]).toEqual([null, null, null]);
        return;
      }
      // cluster_size is the records annotated with the same cluster.
      expect(size).toBe(lines.filter((other) => JSON.parse(other).cluster === cluster).length);
      expect(Number.isInteger(cluster) && cluster > 0).toBe(true);
      const of = removedOf.get(i);
      expect(JSON.stringify(duplicateOf)).toBe(of === undefined ? "null" : recs[of].idJson);
      if (of === undefined) {
        expect(clusterOf.has(cluster)).toBe(false); // one kept record per cluster
        clusterOf.set(cluster, i);
      }
    });
    // A removed record's cluster is its kept record's.
    lines.forEach((line, i) => {
      const of = removedOf.get(i);
      if (of !== undefined) expect(clusterOf.get(JSON.parse(line).cluster)).toBe(of);
    });
  });

  it("with --keep longest keeps the longest text of a cluster, a removed record within the threshold of it", () => {
    const removedLongest = join(dir, "removed-longest.jsonl");
    const longest = run(["near-dups", "--dedup", "--keep", "longest", "--removed", removedLongest, input]);
    expect([longest.code, longest.stderr]).toEqual([0, ""]);
    const { removed } = account(recs, longest.stdout, readFileSync(removedLongest, "utf8"));
    const good = removed.filter((r) => exactJaccard(recs[r.index].text, recs[r.of].text) >= 0.75).length;
    expect(good / removed.length).toBeGreaterThanOrEqual(0.99);
    for (const r of removed) expect(recs[r.of].text.length).toBeGreaterThanOrEqual(recs[r.index].text.length);
    expect(removed.some((r) => r.of > r.index)).toBe(true); // not merely the first
  });
});

describe("near-dups --dedup input", () => {
  const page = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
  const good = join(dir, "good.jsonl");
  writeFileSync(good, `${JSON.stringify({ id: 1, text: page })}\n`);

  it("takes --text-field and --id-field; a record without an id is FILE:LINE", () => {
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    writeFileSync(
      a,
      [
        JSON.stringify({ url: "u1", content: page }),
        JSON.stringify({ content: page }),
        "",
        JSON.stringify({ url: "u3", content: `${page} more words here` }),
      ].join("\n"),
    );
    writeFileSync(b, `${JSON.stringify({ content: page })}\n`);
    const removed = join(dir, "fields-removed.jsonl");
    const one = run(["near-dups", "--dedup", "--text-field", "content", "--id-field", "url", "--removed", removed, a]);
    expect([one.code, one.stderr]).toEqual([0, ""]);
    expect(one.stdout.toString()).toBe(`${JSON.stringify({ url: "u1", content: page })}\n`);
    expect(
      readFileSync(removed, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .map((r) => [r.id, r.duplicate_of]),
    ).toEqual([
      [`${a}:2`, "u1"],
      ["u3", "u1"],
    ]);
    const two = run([
      "near-dups",
      "--dedup",
      "--text-field",
      "content",
      "--id-field",
      "url",
      "--removed",
      removed,
      b,
      a,
    ]);
    expect(two.code).toBe(0);
    expect(two.stdout.toString()).toBe(`${JSON.stringify({ content: page })}\n`);
    expect(
      readFileSync(removed, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line).duplicate_of),
    ).toEqual([`${b}:1`, `${b}:1`, `${b}:1`]);
    // The default text member is absent: every record has no word, and all are kept untouched.
    expect(run(["near-dups", "--dedup", a]).stdout.toString()).toBe(
      readFileSync(a, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => `${l}\n`)
        .join(""),
    );
  });

  it("reduces an html member to text, and writes a last line without a newline with one", () => {
    const lines = [
      JSON.stringify({ id: 1, html: `<html><body><nav>menu</nav><p>${page}</p></body></html>` }),
      JSON.stringify({ id: 2, text: page }),
    ];
    const out = run(["near-dups", "--dedup"], lines.join("\n"));
    expect(out.stdout.toString()).toBe(`${lines[0]}\n`);
  });

  it("reads .jsonl arguments as JSON lines outside --dedup too, and reduces a member named by --text-field html", () => {
    const c = join(dir, "c.jsonl");
    writeFileSync(c, `${JSON.stringify({ id: "x", text: page })}\n${JSON.stringify({ id: "y", text: page })}\n`);
    expect(run(["near-dups", "--pairs", c]).stdout.toString()).toBe('{"a":"x","b":"y","similarity":1}\n');
    const script = Array.from({ length: 80 }, (_, i) => `code${i}`).join(" ");
    const lines = [
      JSON.stringify({ id: 1, html: `<p>${page}</p><script>${script}</script>` }),
      JSON.stringify({ id: 2, html: `<p>${page}</p>` }),
    ];
    expect(run(["near-dups", "--dedup", "--text-field", "html"], lines.join("\n")).stdout.toString()).toBe(
      `${lines[0]}\n`,
    );
  });

  it("names the file and line of malformed JSON or a bad member, in one line, exit 2", () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, `${JSON.stringify({ id: 1, text: page })}\n\n{"id": 3, "text": "unterminated\n`);
    const result = run(["near-dups", "--dedup", good, bad]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^crawlsieve: ${bad.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:3 must be a JSON object`),
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const spool = mkdtempSync(join(dir, "spool-"));
    const stdin = run(["near-dups", "--dedup", "--tmp", spool], `${JSON.stringify({ id: 1, text: page })}\n[1, 2]\n`);
    expect([stdin.code, stdin.stderr]).toEqual([
      2,
      expect.stringMatching(/^crawlsieve: stdin line 2 must be a JSON object/),
    ]);
    expect(readdirSync(spool)).toEqual([]); // removed on the way out of an error too
    expect(run(["near-dups", "--dedup"], `{"id": {"x": 1}, "text": "a b c"}\n`).stderr).toMatch(
      /stdin line 1 "id" must be a string or a number/,
    );
    expect(run(["near-dups", "--dedup"], `{"id": 1, "text": 5}\n`).stderr).toMatch(
      /stdin line 1 "text" must be a string/,
    );
    expect(run(["near-dups", "--dedup", "--annotate"], `{"id": 1, "text": "a b c", "cluster": 4}\n`).stderr).toMatch(
      /stdin line 1 "cluster" must be absent/,
    );
  });

  // script(1) gives the command a terminal: progress is drawn there for each phase, and the
  // runs above, whose stderr is a pipe, check that it stays quiet elsewhere.
  it("shows each phase's progress on a terminal", () => {
    const file = join(dir, "progress.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 1500 }, (_, id) =>
        JSON.stringify({ id, text: id % 2 === 0 ? page : `${page} ${id} w${id * 7} x${id * 13}` }),
      ).join("\n"),
    );
    const log = join(dir, "tty.txt");
    const command = `"${process.execPath}" "${CLI}" near-dups --dedup --removed "${join(dir, "progress-removed.jsonl")}" "${file}" > "${join(dir, "progress-kept.jsonl")}"`;
    expect(spawnSync("/usr/bin/script", ["-qec", command, log]).status).toBe(0);
    const shown = readFileSync(log, "utf8");
    expect(shown).toMatch(/read [\d,]+ documents/);
    // Half the records are one page: exact-first makes them one document, so 751 are clustered.
    expect(shown).toMatch(/clustering: [\d,]+ of 751 documents, [\d,]+ candidates verified/);
    expect(shown).toMatch(/written [\d,]+ of 1,500 records/);
    const pairs = `"${process.execPath}" "${CLI}" near-dups --pairs "${file}" > /dev/null`;
    expect(spawnSync("/usr/bin/script", ["-qec", pairs, log]).status).toBe(0);
    expect(readFileSync(log, "utf8")).toMatch(/pairs: [\d,]+ of 1,500 documents, [\d,]+ candidates verified/);
  });

  it("refuses options that do not go together", () => {
    const a = good;
    for (const args of [["--removed", "x"], ["--annotate"], ["--keep", "longest"]])
      expect(run(["near-dups", ...args, a]).stderr).toMatch(/applies to --dedup/);
    expect(run(["near-dups", "--dedup", "--pairs", a]).code).toBe(2);
    expect(run(["near-dups", "--dedup", "--keep", "shortest", a]).stderr).toMatch(
      /--keep must be first, longest, max:FIELD or min:FIELD .*got "shortest"/,
    );
    expect(run(["near-dups", "--dedup", "--removed", join(dir, "no", "such", "dir"), a]).code).toBe(2);
    expect(run(["near-dups", "--dedup", "-", "-"], "").stderr).toMatch(/stdin can be read only once/);
    expect(run(["near-dups", "--dedup", "--include", "*.jsonl", a]).stderr).toMatch(
      /--include chooses files in folders/,
    );
    // --removed naming an input would empty it before it is read: refused, the input left whole.
    const before = readFileSync(a);
    expect(run(["near-dups", "--dedup", "--removed", a, a]).stderr).toMatch(
      /--removed must be a file other than the input/,
    );
    expect(readFileSync(a)).toEqual(before);
    // A bad value of another option stops the run before the --removed file is opened (and emptied).
    const kept = join(dir, "removed-kept.jsonl");
    writeFileSync(kept, '{"id":1}\n');
    for (const bad of [
      ["--sketch-size", "3"],
      ["--threshold", "2"],
      ["--max-distance", "9"],
    ]) {
      expect(run(["near-dups", "--dedup", "--removed", kept, ...bad, a])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(new RegExp(bad[0])),
      });
      expect(readFileSync(kept, "utf8")).toBe('{"id":1}\n');
    }
  });

  it("keeps the sketches in --tmp while it runs, in every mode, removes them at the end and on Ctrl-C, and says so when it cannot", async () => {
    const sketches = mkdtempSync(join(dir, "sketches-"));
    for (const mode of [[], ["--pairs"], ["--dedup"]]) {
      const result = run(["near-dups", ...mode, "--tmp", sketches, good]);
      expect([result.code, result.stderr]).toEqual([0, ""]);
      expect(readdirSync(sketches)).toEqual([]); // the sketch file is removed at the end
    }
    // On Ctrl-C too: stdin held open while the sketch file (and the copy of stdin) exist.
    const child = spawn(process.execPath, [CLI, "near-dups", "--dedup", "--tmp", sketches], {
      stdio: ["pipe", "ignore", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.stdin.on("error", () => undefined);
    child.stdin.write(readFileSync(good));
    for (let i = 0; i < 200 && readdirSync(sketches).length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readdirSync(sketches)).toHaveLength(2);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(readdirSync(sketches)).toEqual([]);
    const missing = join(dir, "no-such-folder");
    const failed = run(["near-dups", "--tmp", missing, good]);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toBe(
      `crawlsieve: cannot keep the documents' sketches on disk in ${missing} (not a folder, ENOENT); give a writable --tmp with room (about 4 bytes per distinct shingle, at most 8196 bytes a document)\n`,
    );
  });

  it("stops with one line and exit code 2 when the sketches fill the disk, and leaves nothing on it (a loop filesystem mounted as root)", () => {
    const folder = mkdtempSync(join(dir, "full-"));
    const image = join(folder, "disk.img");
    const mountPoint = join(folder, "mnt");
    mkdirSync(mountPoint);
    const sh = (command: string, args: string[]) => spawnSync(command, args, { stdio: "ignore" }).status === 0;
    // 2 MiB, and 200 pages of 4,200 distinct words with 4,096-value sketches: about 3.3 MB of sketches.
    // A test that cannot make its full disk fails: it is never counted as passed unrun (.ci/run runs as root).
    const mounted =
      sh("truncate", ["-s", "2M", image]) &&
      sh("mkfs.ext2", ["-q", "-F", image]) &&
      sh("mount", ["-o", "loop", image, mountPoint]);
    expect(mounted, "a 2 MiB ext2 image mounted on a loop device (needs root and e2fsprogs)").toBe(true);
    try {
      const next = rng(2);
      const pages = Array.from({ length: 200 }, (_, id) =>
        JSON.stringify({ id, text: Array.from({ length: 4200 }, () => `w${Math.floor(next() * 1e9)}`).join(" ") }),
      );
      const result = run(["near-dups", "--sketch-size", "4096", "--tmp", mountPoint], `${pages.join("\n")}\n`);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^crawlsieve: cannot keep the documents' sketches on disk in .* \(no space left on the device, ENOSPC\)/,
      );
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(readdirSync(mountPoint).filter((name) => name !== "lost+found")).toEqual([]);
    } finally {
      sh("umount", [mountPoint]);
    }
  });

  it("with --max-distance (SimHash) removes copies with their distance", () => {
    const lines = [0, 1, 2]
      .map((id) => JSON.stringify({ id, text: page }))
      .concat(JSON.stringify({ id: 3, text: "something else entirely, nothing like the others at all" }));
    const removed = join(dir, "simhash-removed.jsonl");
    const out = run(["near-dups", "--dedup", "--max-distance", "3", "--removed", removed], lines.join("\n"));
    expect(out.stdout.toString()).toBe(`${lines[0]}\n${lines[3]}\n`);
    expect(readFileSync(removed, "utf8")).toBe(
      '{"id":1,"duplicate_of":0,"distance":0}\n{"id":2,"duplicate_of":0,"distance":0}\n',
    );
  });
});

describe("clusters cost what they hold", () => {
  // 6,666 copies of one page (a third identical, the others with 1-3 words changed) among 13,334
  // distinct pages of 150 words: before clusters were made in one pass, groups failed with
  // "Set maximum size exceeded" after 50 s and 2.3 GB (every bucket enumerated all its pairs).
  const next = rng(6666);
  const word = () => `w${Math.floor(next() * 20_000)}`;
  const expired = Array.from({ length: 150 }, word);
  const docs: string[] = [];
  const copies = new Set<number>();
  for (let id = 0; id < 20_000; id++) {
    if (id % 3 === 0 && copies.size < 6666) {
      const words = expired.slice();
      for (let e = 0; e < copies.size % 4; e++) words[Math.floor(next() * 150)] = `token${Math.floor(next() * 1e9)}`;
      copies.add(id);
      docs.push(JSON.stringify({ id, text: words.join(" ") }));
    } else docs.push(JSON.stringify({ id, text: Array.from({ length: 150 }, word).join(" ") }));
  }
  const input = `${docs.join("\n")}\n`;

  it("groups 6,666 copies among 20,000 documents in one group, exit 0", () => {
    const result = run(["near-dups", "--json"], input);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const groups = result.stdout
      .toString()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(groups).toHaveLength(1);
    expect(groups[0].representative).toBe(0);
    expect(groups[0].members.map((m: { id: number }) => m.id).sort((a: number, b: number) => a - b)).toEqual([
      ...copies,
    ]);
  }, 180_000);

  it("--dedup keeps the first copy and the 13,334 distinct pages", () => {
    const removed = join(dir, "copies-removed.jsonl");
    const result = run(["near-dups", "--dedup", "--removed", removed], input);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const kept = result.stdout
      .toString()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).id);
    expect(kept).toEqual(Array.from({ length: 20_000 }, (_, id) => id).filter((id) => id === 0 || !copies.has(id)));
    const gone = readFileSync(removed, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(gone).toHaveLength(6665);
    for (const r of gone) expect(r.duplicate_of).toBe(0);
  }, 180_000);

  it("--pairs streams every pair of a cluster of 400 copies (79,800), each once", () => {
    const lines = Array.from({ length: 400 }, (_, id) => JSON.stringify({ id, text: expired.join(" ") })).concat(
      docs.slice(0, 30).filter((_, i) => !copies.has(i)),
    );
    const result = run(["near-dups", "--pairs"], lines.join("\n"));
    expect(result.code).toBe(0);
    const pairs = result.stdout
      .toString()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { a: number; b: number; similarity: number });
    expect(pairs).toHaveLength((400 * 399) / 2);
    expect(new Set(pairs.map((p) => `${p.a} ${p.b}`)).size).toBe(pairs.length);
    expect(pairs.every((p) => p.a < p.b && p.b < 400 && p.similarity === 1)).toBe(true);
    // Found in order of a, then b.
    expect(
      pairs.every((p, i) => i === 0 || pairs[i - 1].a < p.a || (pairs[i - 1].a === p.a && pairs[i - 1].b < p.b)),
    ).toBe(true);
  }, 180_000);
});

describe("near-dups --max-distance (SimHash) clusters and pairs from batches of queries", () => {
  it("equal a star clustering and all pairs by Hamming distance computed here over the fingerprints", () => {
    // Families of copies with a word or two changed: SimHash puts them at distances 0 to 10.
    const next = rng(64);
    const texts: string[] = [];
    for (let f = 0; f < 60; f++) {
      const words = Array.from({ length: 80 + Math.floor(next() * 80) }, () => `w${Math.floor(next() * 30_000)}`);
      for (let c = 0; c < 1 + Math.floor(next() * 30); c++)
        texts.push(words.map((w) => (next() < 0.01 * (c % 4) ? `e${Math.floor(next() * 1e9)}` : w)).join(" "));
    }
    const fps = simhashMany(texts, { shingle: 3 });
    const distance = (i: number, j: number) => {
      let x = fps[i] ^ fps[j];
      let n = 0;
      for (; x > 0n; x &= x - 1n) n++;
      return n;
    };
    const k = 3;
    const leads: number[] = [];
    const expected: string[] = [];
    texts.forEach((_, i) => {
      let best = -1;
      for (const r of leads) if (distance(i, r) <= k && (best === -1 || distance(i, r) < distance(i, best))) best = r;
      if (best === -1) leads.push(i);
      else expected.push(JSON.stringify({ id: i, duplicate_of: best, distance: distance(i, best) }));
    });
    const pairs: string[] = [];
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (distance(i, j) <= k) pairs.push(JSON.stringify({ a: i, b: j, distance: distance(i, j) }));
    expect(expected.length).toBeGreaterThan(100);
    expect(pairs.length).toBeGreaterThan(expected.length);
    const input = texts.map((text, id) => JSON.stringify({ id, text })).join("\n");
    const removed = join(dir, "simhash-family-removed.jsonl");
    expect(run(["near-dups", "--dedup", "--max-distance", String(k), "--removed", removed], input).code).toBe(0);
    expect(readFileSync(removed, "utf8").trim().split("\n")).toEqual(expected);
    expect(
      run(["near-dups", "--pairs", "--max-distance", String(k)], input)
        .stdout.toString()
        .trim()
        .split("\n"),
    ).toEqual(pairs);
  }, 120_000);
});

describe("MinHashIndex.cluster and pairBatches", () => {
  it("equals star clustering by exact Jaccard written here (short texts: estimates are exact), in any order", () => {
    const recs = corpus(5, 120).filter((r) => /[\p{L}\p{N}_]/u.test(r.text) && r.text.split(" ").length < 900);
    const index = new MinHashIndex({ threshold: 0.8, sketchSize: 1024 });
    index.addMany(
      recs.map((_, i) => i),
      recs.map((r) => r.text),
    );
    // Each text's shingles once: the reference compares every document with every leader.
    const sets = recs.map((r) => shingleSet(r.text));
    const sim = (i: number, j: number) => setJaccard(sets[i], sets[j]);
    for (const order of [recs.map((_, i) => i), recs.map((_, i) => recs.length - 1 - i)]) {
      // Reference: each document joins its most similar earlier representative at J >= 0.8 (ties: the earlier), else leads.
      const leads: number[] = [];
      const expected = order.map((i) => {
        let best = -1;
        let bestSim = 0;
        for (const r of leads) {
          const s = sim(i, r);
          if (s >= 0.8 - 1e-12 && s > bestSim + 1e-12) [best, bestSim] = [r, s];
        }
        if (best === -1) leads.push(i);
        return best === -1 ? i : best;
      });
      const got = index.cluster(order);
      expect([...got.ids]).toEqual(order);
      expect([...got.representatives]).toEqual(expected);
      // The same from the whole list of pairs.
      expect([...leaderClusters(order, index.pairs()).representatives]).toEqual(expected);
      expect(leads.length).toBeLessThan(order.length - 50);
      got.ids.forEach((id, i) => {
        if (got.representatives[i] !== id) expect(got.similarities[i]).toBeCloseTo(sim(id, got.representatives[i]), 9);
      });
    }
    expect(() => index.cluster([0, 0])).toThrow(/order\[1\]/);
    expect(() => index.cluster([recs.length + 5])).toThrow(/stored document/);
    // pairBatches: each document's later pairs in one batch, all of pairs() between them.
    const batches = [...index.pairBatches()];
    for (const batch of batches) expect(new Set(batch.map((p) => Math.min(p.a, p.b))).size).toBe(1);
    expect(batches.flat().sort((p, q) => p.a - q.a || p.b - q.b)).toEqual(index.pairs());
    index.dispose();
  }, 120_000);
});
