// `crawlsieve near-dups`: near-duplicate documents by estimated Jaccard similarity of word
// shingles (MinHashIndex: LSH candidates, each verified by its bottom-k estimate), or with
// --max-distance by SimHash distance (NearDupIndex). Documents stream in (files one at a time,
// JSON lines as they come) and are sketched in batches, so memory holds the sketches and the ids,
// not the texts. Output: groups around a representative (no chaining), or every pair.
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { parseArgs } from "node:util";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import { groupPairs, type ScoredPair } from "../../near-dup/groups.js";
import { MinHashIndex } from "../../near-dup/minhash-index.js";
import { sketchMany } from "../../near-dup/minhash.js";
import { NearDupIndex } from "../../near-dup/near-dup-index.js";
import { features } from "../../near-dup/features.js";
import { simhashMany } from "../../near-dup/simhash.js";
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
                     groups and pairs with "distance" instead of "similarity"
  --max-bytes N      largest document (a file, or a JSON line) in bytes; a larger one ends the run
                     with an error naming it (default 268435456, 256 MiB: a JavaScript string
                     holds at most about 512 M characters)
  Ids are printed as they came (a numeric id such as 12345678901234567890 keeps its digits); a
  UTF-8 byte order mark before the first JSON line is skipped.`;

const DEFAULT_INCLUDE = ["*.html", "*.htm", "*.txt", "*.md"];
const BATCH_DOCS = 512;
const BATCH_CHARS = 1 << 21; // raw HTML held until its batch is sketched: a few MB
const DEFAULT_MAX_BYTES = 2 ** 28;

interface Doc {
  /** The id as printed in JSON (a string quoted, a number as its source text). */
  readonly idJson: string;
  /** The id as printed in text output. */
  readonly idText: string;
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
      "max-bytes": { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  const shingle = integerOption("--shingle", values.shingle, 3, 1, 16);
  const maxBytes = integerOption("--max-bytes", values["max-bytes"], DEFAULT_MAX_BYTES, 1, DEFAULT_MAX_BYTES);
  if (values["max-distance"] !== undefined && values.threshold !== undefined) {
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "near-dups: --max-distance (SimHash) and --threshold (MinHash) choose different measures; give one of them");
  }
  const finder = values["max-distance"] !== undefined
    ? simhashFinder(integerOption("--max-distance", values["max-distance"], 3, 0, 8), shingle)
    : minhashFinder(thresholdOption(values.threshold), shingle, integerOption("--sketch-size", values["sketch-size"], 1024, 8, 4096));
  const include = (values.include ?? DEFAULT_INCLUDE).map((glob) => globMatcher("--include", glob));
  const exclude = (values.exclude ?? []).map((glob) => globMatcher("--exclude", glob));
  const docs = positionals.length > 0 ? filesIn(positionals, include, exclude, maxBytes) : jsonLines(maxBytes);

  const progress = new Progress();
  const names: Doc[] = [];
  let skipped = 0;
  let batch: Doc[] = [];
  let chars = 0;
  let toText: ((html: string) => string) | undefined;
  const flush = async () => {
    if (batch.length === 0) return;
    if (batch.some((doc) => doc.html)) toText ??= (await import("../../html/html-to-text.js")).htmlToText;
    const texts = batch.map((doc) => (doc.html ? toText!(doc.text) : doc.text));
    const numbers = batch.map((_, i) => names.length + i);
    for (const doc of batch) names.push(doc);
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
  // JSON written by hand around each id's own text, so a numeric id is printed as it came.
  const key = JSON.stringify(field);
  if (values.pairs) {
    for (const p of pairs) {
      out.push(Buffer.from(`{"a":${names[p.a].idJson},"b":${names[p.b].idJson},${key}:${JSON.stringify(score(p.similarity))}}\n`));
      if (out.full) await out.flush();
    }
  } else {
    groupPairs(pairs).forEach((group, g) => {
      const members = group.members.map((m) => ({ doc: names[m.id], score: m.id === group.representative ? (field === "distance" ? 0 : 1) : score(m.similarity) }));
      if (values.json) {
        const list = members.map((m) => `{"id":${m.doc.idJson},${key}:${JSON.stringify(m.score)}}`).join(",");
        out.push(Buffer.from(`{"group":${g + 1},"representative":${names[group.representative].idJson},"members":[${list}]}\n`));
      } else {
        const shown = (v: number) => (field === "distance" ? String(v) : v.toFixed(3));
        out.push(Buffer.from(`group ${g + 1} (${members.length} documents)\n${members.map((m) => `  ${shown(m.score)}\t${m.doc.idText}`).join("\n")}\n`));
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
async function* filesIn(paths: readonly string[], include: ((path: string) => boolean)[], exclude: ((path: string) => boolean)[], maxBytes: number): AsyncGenerator<Doc> {
  const files: string[] = [];
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) await walk(path, path, include, exclude, files);
    else files.push(path);
  }
  files.sort();
  for (const file of files) {
    const { size } = await stat(file);
    if (size > maxBytes) throw tooLarge(file, size, maxBytes);
    const text = await readFile(file, "utf8");
    yield { idJson: JSON.stringify(file), idText: file, text, html: /\.x?html?$/i.test(file) || /^\s*<(!doctype html|html[\s>])/i.test(text) };
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

/** A document over the --max-bytes limit, named. */
function tooLarge(where: string, bytes: number | undefined, maxBytes: number): CrawlsieveError {
  const size = bytes === undefined ? "more than" : `${bytes.toLocaleString("en-US")} bytes, over`;
  return new CrawlsieveError("ERR_DOCUMENT_TOO_LARGE", `${where} is ${size} the limit of ${maxBytes.toLocaleString("en-US")} bytes a document (--max-bytes)`);
}

/**
 * The lines of stdin as strings, split on the bytes (a line longer than maxBytes is refused by
 * number before it is joined: readline would build it whole and crash on a 600 MB line), with a
 * UTF-8 byte order mark before the first line dropped.
 */
async function* stdinLines(maxBytes: number): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  let first = true;
  const take = (piece: Buffer): string => {
    pending.push(piece);
    let whole = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    if (first && whole[0] === 0xef && whole[1] === 0xbb && whole[2] === 0xbf) whole = whole.subarray(3);
    first = false;
    return whole.toString("utf8");
  };
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      line++;
      if (pendingBytes + nl - from > maxBytes) throw tooLarge(`stdin line ${line}`, undefined, maxBytes);
      yield take(chunk.subarray(from, nl));
      from = nl + 1;
    }
    if (from < chunk.length) {
      pending.push(chunk.subarray(from));
      pendingBytes += chunk.length - from;
      if (pendingBytes > maxBytes) throw tooLarge(`stdin line ${line + 1}`, undefined, maxBytes);
    }
  }
  if (pendingBytes > 0) yield take(Buffer.alloc(0));
}

/** {"id", "text"} or {"id", "html"} per line of stdin, as the lines come. */
async function* jsonLines(maxBytes: number): AsyncGenerator<Doc> {
  let line = 0;
  for await (const text of stdinLines(maxBytes)) {
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
    // A number keeps its source text: JSON.parse makes 1e400 Infinity and rounds past 2^53.
    const idJson = typeof record.id === "string" ? JSON.stringify(record.id) : (numberSource(text, "id") ?? String(record.id));
    yield { idJson, idText: typeof record.id === "string" ? record.id : idJson, text: body, html: typeof record.text !== "string" };
  }
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The source text of the number that is member `name` of the JSON object `json` (the last, as JSON.parse keeps), or undefined. */
function numberSource(json: string, name: string): string | undefined {
  let depth = 0;
  let found: string | undefined;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === '"') {
      // The closing quote: the next one not escaped (an odd run of backslashes before it escapes it).
      let end = json.indexOf('"', i + 1);
      for (;;) {
        let slashes = 0;
        while (json[end - 1 - slashes] === "\\") slashes++;
        if (slashes % 2 === 0) break;
        end = json.indexOf('"', end + 1);
      }
      let j = end + 1;
      while (j < json.length && " \t\r\n".includes(json[j])) j++;
      if (depth === 1 && json[j] === ":" && JSON.parse(json.slice(i, end + 1)) === name) {
        j++;
        while (j < json.length && " \t\r\n".includes(json[j])) j++;
        NUMBER.lastIndex = j;
        found = NUMBER.exec(json)?.[0] ?? found;
      }
      i = end;
    }
  }
  return found;
}
