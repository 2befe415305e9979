// `crawlsieve near-dups`: near-duplicate documents by estimated Jaccard similarity of word
// shingles (MinHashIndex: LSH candidates, each verified by its bottom-k estimate), or with
// --max-distance by SimHash distance (NearDupIndex). Documents stream in (files one at a time,
// JSON lines as they come) and are sketched in batches, so memory holds the sketches and the ids,
// not the texts. Output: groups around a representative (no chaining), or every pair.
import { createInterface } from "node:readline";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { parseArgs } from "node:util";
import { InvalidArgumentError } from "../../errors.js";
import { groupPairs, type ScoredPair } from "../../simhash/groups.js";
import { MinHashIndex } from "../../simhash/minhash-index.js";
import { sketchMany } from "../../simhash/minhash.js";
import { NearDupIndex } from "../../simhash/near-dup-index.js";
import { features } from "../../simhash/features.js";
import { simhashMany } from "../../simhash/simhash.js";
import { globMatcher } from "../glob.js";
import { Output } from "../output.js";
import { count, Progress } from "../progress.js";

/** Usage of `near-dups`. */
export const nearDupsUsage = `crawlsieve near-dups [PATH...] [--threshold J] [--pairs] [--json] [--include GLOB] [--exclude GLOB]
  Finds near-duplicate documents: files named, and in folders (walked) .html, .htm, .txt and .md
  files, or with no PATH, JSON lines {"id": ..., "text": ...} (or "html": ...) on stdin. HTML is
  reduced to its main text first (scripts, navigation, headers, footers and sidebars dropped).
  Two documents are near-duplicates when the estimated Jaccard similarity of their sets of word
  shingles is at least J (MinHash: LSH finds candidates, a 1024-value bottom-k sketch checks each).
  Prints groups: a representative and the documents within J of it, each with its similarity to
  the representative (a document is in one group at most). Documents without a word are left out.
  --threshold J      least Jaccard similarity, in (0, 1] (default 0.8)
  --pairs            one JSON object per pair instead: {"a": id, "b": id, "similarity": J}
  --json             one JSON object per group: {"group", "representative", "members": [{"id", "similarity"}]}
  --include GLOB     in folders, read only files matching GLOB (repeatable; default *.html, *.htm, *.txt, *.md)
  --exclude GLOB     in folders, skip files and folders matching GLOB (repeatable), e.g. --exclude '_sources'
  --shingle W        words per shingle (default 3)
  --sketch-size K    values per sketch: more is closer and takes 4 bytes each per document (default 1024)
  --max-distance K   SimHash instead: documents within K bits of 64-bit SimHash distance (0 to 8),
                     groups and pairs with "distance" instead of "similarity"`;

const DEFAULT_INCLUDE = ["*.html", "*.htm", "*.txt", "*.md"];
const BATCH_DOCS = 512;
const BATCH_CHARS = 1 << 21; // raw HTML held until its batch is sketched: a few MB

interface Doc {
  readonly id: string | number;
  readonly text: string;
  readonly html: boolean;
}

/** The similarity engine behind the command: one per mode. */
interface Finder {
  add(numbers: number[], texts: string[]): number;
  pairs(): ScoredPair[];
  readonly field: "similarity" | "distance";
  dispose(): void;
}

/** Runs `near-dups`; returns the exit code. */
export async function nearDups(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      threshold: { type: "string" },
      pairs: { type: "boolean" },
      json: { type: "boolean" },
      include: { type: "string", multiple: true },
      exclude: { type: "string", multiple: true },
      shingle: { type: "string" },
      "sketch-size": { type: "string" },
      "max-distance": { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  const shingle = integerOption("--shingle", values.shingle, 3, 1, 16);
  if (values["max-distance"] !== undefined && values.threshold !== undefined) {
    throw new InvalidArgumentError("--max-distance", values["max-distance"], "to be left out when --threshold is given (one measure at a time)");
  }
  const finder = values["max-distance"] !== undefined
    ? simhashFinder(integerOption("--max-distance", values["max-distance"], 3, 0, 8), shingle)
    : minhashFinder(thresholdOption(values.threshold), shingle, integerOption("--sketch-size", values["sketch-size"], 1024, 8, 4096));
  const include = (values.include ?? DEFAULT_INCLUDE).map((glob) => globMatcher("--include", glob));
  const exclude = (values.exclude ?? []).map((glob) => globMatcher("--exclude", glob));
  const docs = positionals.length > 0 ? filesIn(positionals, include, exclude) : jsonLines();

  const progress = new Progress();
  const names: (string | number)[] = [];
  let skipped = 0;
  let batch: Doc[] = [];
  let chars = 0;
  let toText: ((html: string) => string) | undefined;
  const flush = async () => {
    if (batch.length === 0) return;
    if (batch.some((doc) => doc.html)) toText ??= (await import("../../html/html-to-text.js")).htmlToText;
    const texts = batch.map((doc) => (doc.html ? toText!(doc.text) : doc.text));
    const numbers = batch.map((_, i) => names.length + i);
    for (const doc of batch) names.push(doc.id);
    skipped += finder.add(numbers, texts);
    batch = [];
    chars = 0;
    progress.update(() => `sketched ${count(names.length)} documents`);
  };
  for await (const doc of docs) {
    batch.push(doc);
    chars += doc.text.length;
    if (batch.length >= BATCH_DOCS || chars >= BATCH_CHARS) await flush();
  }
  await flush();
  progress.done();

  const pairs = finder.pairs();
  const out = new Output();
  const field = finder.field;
  const score = (s: number) => (field === "distance" ? -s : s);
  if (values.pairs) {
    for (const p of pairs) {
      out.push(Buffer.from(JSON.stringify({ a: names[p.a], b: names[p.b], [field]: score(p.similarity) }) + "\n"));
      if (out.full) await out.flush();
    }
  } else {
    groupPairs(pairs).forEach((group, g) => {
      const members = group.members.map((m) => ({ id: names[m.id], [field]: m.id === group.representative ? (field === "distance" ? 0 : 1) : score(m.similarity) }));
      if (values.json) {
        out.push(Buffer.from(JSON.stringify({ group: g + 1, representative: names[group.representative], members }) + "\n"));
      } else {
        const shown = (v: number) => (field === "distance" ? String(v) : v.toFixed(3));
        out.push(Buffer.from(`group ${g + 1} (${members.length} documents)\n${members.map((m) => `  ${shown(m[field] as number)}\t${m.id}`).join("\n")}\n`));
      }
    });
  }
  await out.end();
  if (skipped > 0) process.stderr.write(`crawlsieve: ${count(skipped)} document(s) without a word were left out\n`);
  finder.dispose();
  return 0;
}

function minhashFinder(threshold: number, shingle: number, sketchSize: number): Finder {
  const index = new MinHashIndex({ threshold, shingle, sketchSize });
  return {
    field: "similarity",
    add(numbers, texts) {
      const sketches = sketchMany(texts, index.params);
      index.addSketches(numbers, sketches);
      let empty = 0;
      for (let i = 0; i < sketches.count; i++) if (sketches.values[i * (sketchSize + 1)] === 0) empty++;
      return empty;
    },
    pairs: () => index.pairs(),
    dispose: () => index.dispose(),
  };
}

function simhashFinder(maxDistance: number, shingle: number): Finder {
  const index = new NearDupIndex({ maxDistance });
  return {
    field: "distance",
    add(numbers, texts) {
      const fps = simhashMany(texts, { shingle });
      const kept: number[] = [];
      texts.forEach((text, i) => {
        if (fps[i] !== 0n || features(text, { shingle }).length > 0) kept.push(i);
      });
      index.addMany(kept.map((i) => numbers[i]), BigUint64Array.from(kept, (i) => fps[i]));
      return texts.length - kept.length;
    },
    // Larger is closer for grouping: the score is minus the distance.
    pairs: () => index.pairs().map(({ a, b, distance }) => (a < b ? { a, b, similarity: -distance } : { a: b, b: a, similarity: -distance })).sort((x, y) => x.a - y.a || x.b - y.b),
    dispose: () => index.dispose(),
  };
}

function thresholdOption(text: string | undefined): number {
  if (text === undefined) return 0.8;
  const value = Number(text);
  if (text.trim() === "" || !(value > 0 && value <= 1)) throw new InvalidArgumentError("--threshold", text, "a number greater than 0 and at most 1, e.g. 0.9");
  return value;
}

function integerOption(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(flag, value, `an integer from ${min} to ${max}`);
  return n;
}

/**
 * Files named on the command line (read whatever their name), then the files under named folders
 * that match an include glob and no exclude glob (an excluded folder is not entered), sorted.
 * One file is read at a time.
 */
async function* filesIn(paths: readonly string[], include: ((path: string) => boolean)[], exclude: ((path: string) => boolean)[]): AsyncGenerator<Doc> {
  const files: string[] = [];
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) await walk(path, path, include, exclude, files);
    else files.push(path);
  }
  files.sort();
  for (const file of files) {
    const text = await readFile(file, "utf8");
    yield { id: file, text, html: /\.x?html?$/i.test(file) || /^\s*<(!doctype html|html[\s>])/i.test(text) };
  }
}

async function walk(root: string, dir: string, include: ((path: string) => boolean)[], exclude: ((path: string) => boolean)[], out: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path).split(sep).join("/");
    if (exclude.some((match) => match(rel))) continue;
    if (entry.isDirectory()) await walk(root, path, include, exclude, out);
    else if (entry.isFile() && include.some((match) => match(rel))) out.push(path);
  }
}

/** {"id", "text"} or {"id", "html"} per line of stdin, as the lines come. */
async function* jsonLines(): AsyncGenerator<Doc> {
  let line = 0;
  for await (const text of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new InvalidArgumentError(`stdin line ${line}`, text.length > 80 ? `${text.slice(0, 80)}...` : text, 'a JSON object {"id": ..., "text": ...}');
    }
    const record = value as { id?: unknown; text?: unknown; html?: unknown };
    const body = typeof record?.text === "string" ? record.text : record?.html;
    if (value === null || typeof value !== "object" || typeof body !== "string" || (typeof record.id !== "string" && typeof record.id !== "number")) {
      throw new InvalidArgumentError(`stdin line ${line}`, value, 'an object with an "id" (string or number) and a "text" or "html" string');
    }
    yield { id: record.id, text: body, html: typeof record.text !== "string" };
  }
}
