// `crawlsieve near-dups`: SimHash every document, find all pairs within the distance with the
// permuted-table index (its batch mode), and print the groups they form (connected pairs).
import { createInterface } from "node:readline";
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { parseArgs } from "node:util";
import { InvalidArgumentError } from "../../errors.js";
import { NearDupIndex, nearDupGroups } from "../../simhash/near-dup-index.js";
import { features, hammingDistance, simhash } from "../../simhash/simhash.js";
import { Output } from "../output.js";
import { count, Progress } from "../progress.js";

/** Usage of `near-dups`. */
export const nearDupsUsage = `crawlsieve near-dups [PATH...] [--max-distance K] [--shingle W] [--json]
  Finds near-duplicate documents: .html, .htm, .txt and .md files (folders are walked), or with
  no PATH, JSON lines {"id": ..., "text": ...} (or "html": ...) on stdin. HTML is reduced to its
  main text first (scripts, navigation, headers, footers and sidebars dropped).
  Prints each group of documents within K bits of SimHash distance of another member, every
  member with its distance to the group's first. Documents without a word are left out.
  --max-distance K  largest Hamming distance between 64-bit fingerprints (default 3, at most 8)
  --shingle W       words per shingle (default 3)
  --json            one JSON object per group: {"group", "members": [{"id", "distance"}], "pairs"}`;

const EXTENSIONS = new Set([".html", ".htm", ".txt", ".md"]);

interface Doc {
  readonly id: string;
  readonly text: string;
  readonly html: boolean;
}

/** Runs `near-dups`; returns the exit code. */
export async function nearDups(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { "max-distance": { type: "string" }, shingle: { type: "string" }, json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const maxDistance = integerOption("--max-distance", values["max-distance"], 3, 0, 8);
  const shingle = integerOption("--shingle", values.shingle, 3, 1, 16);
  const progress = new Progress();
  const docs = positionals.length > 0 ? await filesIn(positionals) : await jsonLines();
  const toText = docs.some((doc) => doc.html) ? (await import("../../html/html-to-text.js")).htmlToText : undefined;
  const names: string[] = [];
  const fps: bigint[] = [];
  let skipped = 0;
  for (const doc of docs) {
    const text = doc.html ? toText!(doc.text) : doc.text;
    const fp = simhash(text, { shingle });
    if (fp === 0n && features(text, { shingle }).length === 0) skipped++;
    else {
      names.push(doc.id);
      fps.push(fp);
    }
    progress.update(() => `fingerprinted ${count(names.length + skipped)} of ${count(docs.length)} documents`);
  }
  progress.done();
  const index = new NearDupIndex({ maxDistance });
  index.addMany(names.map((_, i) => i), fps);
  const pairs = index.pairs();
  const groups = nearDupGroups(pairs);
  const out = new Output();
  groups.forEach((members, g) => {
    const first = fps[members[0]];
    const distance = (i: number) => hammingDistance(fps[i], first);
    if (values.json) {
      const inGroup = new Set(members);
      out.push(Buffer.from(JSON.stringify({
        group: g + 1,
        members: members.map((i) => ({ id: names[i], distance: distance(i) })),
        pairs: pairs.filter((p) => inGroup.has(p.a)).map((p) => ({ a: names[p.a], b: names[p.b], distance: p.distance })),
      }) + "\n"));
    } else {
      out.push(Buffer.from(`group ${g + 1} (${members.length} documents)\n${members.map((i) => `  ${distance(i)}\t${names[i]}`).join("\n")}\n`));
    }
  });
  await out.end();
  if (skipped > 0) process.stderr.write(`crawlsieve: ${count(skipped)} document(s) without a word were left out\n`);
  index.dispose();
  return 0;
}

function integerOption(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(flag, value, `an integer from ${min} to ${max}`);
  return n;
}

/** Files named on the command line and every matching file under named folders, sorted. */
async function filesIn(paths: readonly string[]): Promise<Doc[]> {
  const files: string[] = [];
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) {
      const entries = await readdir(path, { recursive: true, withFileTypes: true });
      for (const entry of entries) {
        if (entry.isFile() && EXTENSIONS.has(extname(entry.name).toLowerCase())) files.push(join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name));
      }
    } else {
      files.push(path);
    }
  }
  files.sort();
  return Promise.all(files.map(async (file) => ({ id: file, text: await readFile(file, "utf8"), html: /\.html?$/i.test(file) })));
}

/** {"id", "text"} or {"id", "html"} per line of stdin. */
async function jsonLines(): Promise<Doc[]> {
  const docs: Doc[] = [];
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
    docs.push({ id: String(record.id), text: body, html: typeof record.text !== "string" });
  }
  return docs;
}
