// `crawlsieve near-dups`: near-duplicate documents by estimated Jaccard similarity of word
// shingles (MinHashSpill: LSH candidates, each verified by its bottom-k estimate), or with
// --max-distance by SimHash distance (NearDupIndex). Documents stream in (files one at a time,
// JSON lines as they come) and are sketched in batches; the sketches go to a temporary file, so
// memory holds band keys and ids (about 200 bytes a document in all), not the texts or the sketches.
// Output: groups around a representative (no chaining), found in time linear in the documents and
// the candidates verified (a cluster of n copies costs n, not n^2); every pair, streamed; or with
// --dedup the JSON-lines records themselves, the duplicates left out; --filter leaves them out in
// one pass through a yes/no filter (near-dups-filter.ts).
import { open, stat, type FileHandle } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import { probabilityOption, thresholdOption } from "../parse.js";
import { NearDupFilter } from "../../near-dup/near-dup-filter.js";
import { checkFilterFlags, filterRecords } from "./near-dups-filter.js";
import { durabilityOption } from "../../redis/durability.js";
import { RedisNearDupFilter } from "../../redis/redis-near-dup-filter.js";
import { connectRedis } from "../redis-set.js";
import { clusterGroups } from "../../near-dup/groups.js";
import { globMatcher } from "../glob.js";
import type { RecordDoc, RecordFields } from "../json-records.js";
import { Output } from "../output.js";
import { count, Progress } from "../progress.js";
import { makeTempFolder, removeTempFolder, removeTempFoldersAtExit } from "../../files/temp-folders.js";
import { Column } from "../../near-dup/column.js";
import { DEFAULT_SPILL_SKETCH_SIZE } from "../../near-dup/minhash-spill.js";
import { lshLayout } from "../../near-dup/minhash.js";
import { SketchPool } from "../../near-dup/sketch-pool.js";
import { writeDataset } from "./near-dups-dataset.js";
import { minhashFinder, simhashFinder, type Finder, type OnProgress } from "./near-dups-finders.js";
import { ExactGroups } from "./near-dups-exact.js";
import { IdList } from "./near-dups-ids.js";
import { checkAgainst, IndexWriter, SavedIndex } from "./near-dups-index.js";
import { keepOrder, keepRule, type KeepRule } from "./near-dups-keep.js";
import { datasetPlan } from "./near-dups-plan.js";
import { datasetSources, documents, jsonLines } from "./near-dups-inputs.js";

/** Usage of `near-dups`. */
export const nearDupsUsage = `crawlsieve near-dups [PATH...] [--threshold J | --max-distance K] [--shingle W] [--sketch-size K] [--pairs] [--json] [--include GLOB] [--exclude GLOB] [--max-bytes N] [--text-field F] [--id-field F] [--tmp DIR] [--threads N]
crawlsieve near-dups --dedup [FILE.jsonl...] [--threshold J | --max-distance K] [--shingle W] [--sketch-size K] [--no-exact-first] [--keep first|longest|max:FIELD|min:FIELD] [--removed FILE] [--annotate] [--save-index DIR] [--against DIR] [--max-bytes N] [--text-field F] [--id-field F] [--tmp DIR] [--threads N]
crawlsieve near-dups --index DIR [--threshold J] [--pairs] [--json]
crawlsieve near-dups --filter [FILE.jsonl...] [--threshold J] [--shingle W] [--items N] [--fp-rate P] [--max-bytes N] [--text-field F] [--id-field F] [--redis URL [--cluster] --namespace NAME [--durability local|replicated]]
  Finds near-duplicate documents: files named, and in folders (walked) .html, .htm, .txt and .md
  files, or JSON lines {"id": ..., "text": ...} (or "html": ...) from .jsonl and .ndjson files,
  from "-" or, with no PATH, from stdin. HTML is reduced to its main text first (scripts,
  navigation, headers, footers and sidebars dropped).
  Two documents are near-duplicates when the estimated Jaccard similarity of their sets of word
  shingles is at least J (MinHash: LSH finds candidates, a 2048-value bottom-k sketch checks each;
  the sketches wait in a temporary file, so memory holds about 200 bytes a document).
  Prints groups: a representative (the first document of its group) and the later documents
  within J of it, each with its similarity to the representative (a document joins the most
  similar representative before it, so it is in one group at most and no group chains).
  Documents without a word are left out.
  --threshold J      least Jaccard similarity, in (0, 1] (default 0.8)
  --pairs            one JSON object per pair instead, as found: {"a": id, "b": id, "similarity": J}
  --json             one JSON object per group: {"group", "representative", "members": [{"id", "similarity"}]}
  --include GLOB     in folders, read only files matching GLOB (repeatable; default *.html, *.htm, *.txt, *.md)
  --exclude GLOB     in folders, skip files and folders matching GLOB (repeatable), e.g. --exclude '_sources'
  --shingle W        words per shingle (default 3)
  --sketch-size K    values per sketch: more is closer and takes up to 4 bytes each per document on
                     disk (default 2048; memory does not depend on it)
  --tmp DIR          where the documents' sketches are kept while the command runs (4 bytes per
                     distinct shingle, at most 8 KB a document, on disk; memory keeps about 200
                     bytes a document); default TMPDIR; removed at the end and on Ctrl-C
  --threads N        worker threads that make the MinHash sketches (default: the cores available);
                     the output is the same bytes for every N
  --max-distance K   SimHash instead: documents within K bits of 64-bit SimHash distance (0 to 8),
                     groups and pairs with "distance" instead of "similarity"
  --max-bytes N      largest document (a file, or a JSON line) in bytes; a larger one ends the run
                     with an error naming it (default 268435456, 256 MiB: a JavaScript string
                     holds at most about 512 M characters)
  --text-field F     JSON lines: the member holding the text (default text; "html" when it is absent)
  --id-field F       JSON lines: the member holding the id (default id)
  Dataset mode (JSON lines from the FILEs, every one read as JSON lines, or stdin):
  --dedup            writes the records kept, each as its original line, in input order: one record
                     of each cluster (--keep), and every record without a word; a removed record is
                     within J of the record kept for it. A record without an id is named
                     "FILE:LINE" ("stdin:LINE"). Stdin is copied to a temporary file
                     (in --tmp DIR) to be read twice, and removed at the end. When stdout's reader
                     goes away (| head), --removed still gets every record read until then.
  --exact-first      (the default; --no-exact-first turns it off) records whose texts are equal once
                     ASCII white space is collapsed and A-Z lowered are grouped by XXH3-128 before
                     sketching: only the first is sketched, the others are its duplicates at
                     similarity 1 (distance 0)
  --keep RULE        which record of a cluster is kept: first (default), longest (the longest text),
                     max:FIELD or min:FIELD (the largest or smallest number in the member FIELD; a
                     record without it, or with a value that is not a number, ranks last); ties go
                     to the earlier record; clusters are formed around the records kept
  --removed FILE     one JSON line per removed record: {"id", "duplicate_of": kept id, "similarity"}
  --annotate         adds "cluster" (a number, in order of the cluster's first record; null without
                     a word), "cluster_size" (its records; null without a word) and "duplicate_of"
                     (the kept record's id, null for a kept one) before each record's "}": every
                     record is written, or with --removed the kept ones (the removed go there)
  --save-index DIR   also saves each document's sketch, band keys, id and kept flag in DIR (new or
                     empty; DIR/index.json, written last, lists the files with their XXH64)
  --index DIR        (with no input) re-clusters the documents of an index saved by --save-index at
                     --threshold J (at least the index's), printing groups or --pairs as above
  --against DIR      removes the records within J of a document kept in the index DIR saved by an
                     earlier run (naming it in duplicate_of); --shingle, --sketch-size and
                     --threshold default to the index's, and other values are refused
  Filter mode (JSON lines from the FILEs or stdin, read once):
  --filter           writes each record, as its original line, unless a near-duplicate of it came
                     before (a yes/no test: one Bloom filter per LSH band, no verification: a pair
                     at similarity s is reported with the S-curve's chance 1 - (1 - s^r)^b, 16
                     bands of 16 rows at J = 0.8, so 0.37 at 0.8, 0.96 at 0.9, 0.0002 at 0.5). Memory is fixed by --items and --fp-rate; no temporary file.
                     Records without a word are written.
  --items N          texts the filter is planned for (default 1000000; the shared one: as recorded)
  --fp-rate P        false-positive rate of the whole test at N texts (default 0.0001): 62.4 bytes
                     a text at J = 0.8 (crawlsieve size --near-dup prints the plan)
  --redis URL --namespace NAME  the filter shared by every process using NAME on that Redis
                     (RedisNearDupFilter): of processes reading the same record at once, one prints it
  --cluster          with --redis: the URLs (comma-separated) are nodes of a Redis Cluster
  --durability D     with --redis: local (default) or replicated (a batch is printed once a replica
                     of every master written to has it)
  Ids are printed as they came (a numeric id such as 12345678901234567890 keeps its digits); a
  UTF-8 byte order mark before the first JSON line is skipped.`;

const DEFAULT_INCLUDE = ["*.html", "*.htm", "*.txt", "*.md"];
const BATCH_DOCS = 512;
const BATCH_CHARS = 1 << 21; // raw HTML held until its batch is sketched: a few MB
const DEFAULT_MAX_BYTES = 2 ** 28;
/** --filter without --items / --fp-rate: a million texts at 1e-4 (16 bands of 16 rows at 0.8, 62.4 MB). */
const DEFAULT_FILTER_ITEMS = 1_000_000;
const DEFAULT_FILTER_FP_RATE = 1e-4;

/** A document as read: the id (JSON and text forms), the text, and whether it is HTML. */
type Doc = RecordDoc;

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
      dedup: { type: "boolean" },
      keep: { type: "string" },
      removed: { type: "string" },
      annotate: { type: "boolean" },
      "exact-first": { type: "boolean" },
      "text-field": { type: "string" },
      "id-field": { type: "string" },
      tmp: { type: "string" },
      filter: { type: "boolean" },
      items: { type: "string" },
      "fp-rate": { type: "string" },
      redis: { type: "string" },
      cluster: { type: "boolean" },
      namespace: { type: "string" },
      durability: { type: "string" },
      threads: { type: "string" },
      "save-index": { type: "string" },
      against: { type: "string" },
      index: { type: "string" },
    },
    allowPositionals: true,
    allowNegative: true,
    strict: true,
  });
  // allowNegative is for --no-exact-first (on by default); no other switch has a "no" form.
  for (const [flag, value] of Object.entries(values))
    if (value === false && flag !== "exact-first")
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `near-dups: unknown option --no-${flag} (--${flag} is off unless given)`,
      );
  const shingle = integerOption("--shingle", values.shingle, 3, 1, 16);
  const maxBytes = integerOption("--max-bytes", values["max-bytes"], DEFAULT_MAX_BYTES, 1, DEFAULT_MAX_BYTES);
  if (values.filter) {
    if (values.threads !== undefined)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        "near-dups: --threads sketches documents for --dedup and pair search; --filter runs on one thread",
      );
    checkFilterFlags(values);
    const fields: RecordFields = {
      text: fieldOption("--text-field", values["text-field"], "text"),
      id: fieldOption("--id-field", values["id-field"], "id"),
      lenient: true,
    };
    const items =
      values.items === undefined
        ? DEFAULT_FILTER_ITEMS
        : integerOption("--items", values.items, 0, 1, Number.MAX_SAFE_INTEGER);
    const plan = {
      items,
      fpRate: probabilityOption("fp-rate", values["fp-rate"], DEFAULT_FILTER_FP_RATE),
      threshold: thresholdOption(values.threshold),
      shingle,
    };
    const sources = datasetSources(positionals, undefined, fields);
    if (values.redis !== undefined) {
      if (values.namespace === undefined)
        throw new CrawlsieveError(
          "ERR_INVALID_ARGUMENT",
          "near-dups: --redis needs --namespace NAME (the shared filter's name)",
        );
      const durability = values.durability === undefined ? undefined : durabilityOption(values.durability);
      const { commander, close, checked } = await connectRedis(
        values.redis,
        values.cluster === true,
        "during near-dups --filter",
      );
      try {
        const filter = await checked(
          RedisNearDupFilter.open(commander, { name: values.namespace, ...plan, durability }),
        );
        // The shared filter keeps no count: no warning past --items.
        await filterRecords(sources, fields, maxBytes, {
          addMany: (texts) => checked(filter.addMany(texts)),
          count: 0,
          planned: items,
        });
      } finally {
        await close();
      }
      return 0;
    }
    const filter = new NearDupFilter(plan);
    try {
      await filterRecords(sources, fields, maxBytes, {
        addMany: (texts) => filter.addMany(texts),
        get count() {
          return filter.count;
        },
        planned: items,
      });
    } finally {
      filter.dispose();
    }
    return 0;
  }
  for (const flag of ["items", "fp-rate", "redis", "cluster", "namespace", "durability"] as const) {
    if (values[flag] !== undefined)
      throw new CrawlsieveError("ERR_INVALID_ARGUMENT", `near-dups: --${flag} applies to --filter; add --filter`);
  }
  if (values["max-distance"] !== undefined && values.threshold !== undefined) {
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "near-dups: --max-distance (SimHash) and --threshold (MinHash) choose different measures; give one of them",
    );
  }
  const dedup = values.dedup === true;
  for (const flag of ["keep", "removed", "annotate", "exact-first", "save-index", "against"] as const) {
    if (!dedup && values[flag] !== undefined)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `near-dups: --${values[flag] === false ? "no-" : ""}${flag} applies to --dedup (dataset mode); add --dedup`,
      );
  }
  for (const flag of ["pairs", "json"] as const) {
    if (dedup && values[flag] !== undefined)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `near-dups: --dedup writes the records kept, --${flag} near-duplicates found; give one of them`,
      );
  }
  for (const flag of ["include", "exclude"] as const) {
    if (dedup && values[flag] !== undefined)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `near-dups: --${flag} chooses files in folders, and --dedup reads JSON-lines files only; drop --${flag}`,
      );
  }
  const keep = keepRule(values.keep);
  const fields: RecordFields = {
    text: fieldOption("--text-field", values["text-field"], "text"),
    id: fieldOption("--id-field", values["id-field"], "id"),
    lenient: dedup,
    reserved: values.annotate ? ["cluster", "cluster_size", "duplicate_of"] : undefined,
    keepField: keep.kind === "max" || keep.kind === "min" ? keep.field : undefined,
  };
  if (values["max-distance"] !== undefined && values.threads !== undefined)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "near-dups: --threads sketches MinHash documents; SimHash (--max-distance) runs on one thread",
    );
  if (values.index !== undefined) {
    for (const flag of ["dedup", "save-index", "against", "max-distance", "include", "exclude", "threads"] as const)
      if (values[flag] !== undefined)
        throw new CrawlsieveError(
          "ERR_INVALID_ARGUMENT",
          `near-dups: --index re-clusters a saved index's documents; --${flag} does not apply`,
        );
    if (positionals.length > 0)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `near-dups: --index reads no input (the index holds the sketches), got ${positionals[0]}`,
      );
  }
  for (const flag of ["save-index", "against"] as const)
    if (values["max-distance"] !== undefined && values[flag] !== undefined)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `near-dups: --${flag} keeps MinHash sketches; SimHash (--max-distance) has none to keep`,
      );
  const threads = integerOption("--threads", values.threads, availableParallelism(), 1, 256);
  if (values.removed !== undefined) await checkNotAnInput(values.removed, positionals);
  const simhash = values["max-distance"] !== undefined;
  const maxDistance = integerOption("--max-distance", values["max-distance"], 3, 0, 8);
  // --against: the saved index's parameters where the run gives none (its index.json read now).
  const against =
    values.against !== undefined
      ? new SavedIndex(values.against)
      : values.index !== undefined
        ? new SavedIndex(values.index, "--index")
        : undefined;
  // A threshold below the index's loses pairs its LSH bands were not laid out to find.
  if (
    values.index !== undefined &&
    values.threshold !== undefined &&
    thresholdOption(values.threshold) < against!.threshold
  )
    throw new CrawlsieveError(
      "ERR_INDEX_MISMATCH",
      `--index ${values.index}: the index's LSH bands were laid out for J >= ${against!.threshold}; a threshold of ${values.threshold} needs a new run with --save-index`,
    );
  const threshold = values.threshold === undefined && against ? against.threshold : thresholdOption(values.threshold);
  const sketchSize =
    values["sketch-size"] === undefined && against
      ? against.params.k
      : integerOption("--sketch-size", values["sketch-size"], DEFAULT_SPILL_SKETCH_SIZE, 8, 4096);
  const shingles = values.shingle === undefined && against ? against.params.shingle : shingle;
  // --index keeps the index's bands at any threshold it allows; --against matches them.
  const layout = (values.threshold === undefined || values.index !== undefined) && against ? against.params : undefined;
  if (against !== undefined) {
    const { bands, rows } = layout ?? lshLayout(threshold);
    checkAgainst(against, { shingle: shingles, k: sketchSize, bands, rows });
  }
  // Started once every option is checked: a bad one must not leave threads behind.
  const pool = !simhash && threads > 1 ? await SketchPool.start(threads) : undefined;
  const minhash = simhash ? undefined : minhashFinder(threshold, shingles, sketchSize, values.tmp, pool, layout);
  const finder = minhash ?? simhashFinder(maxDistance, shingle);
  let saving: IndexWriter | undefined;
  let removed: FileHandle | undefined;
  let spool: string | undefined;
  // The sketch file goes at exit, on an error, and on the signals that end a long run.
  removeTempFoldersAtExit();
  try {
    // Opened before any input is read (a --removed path that cannot be written fails now, not
    // after the whole input), and after every option is checked: a bad one must not leave it open.
    if (values.removed !== undefined) removed = await open(values.removed, "w");
    // Stdin is read twice in dataset mode: the first reading copies it here.
    if (dedup && (positionals.length === 0 || positionals.includes("-")))
      spool = makeTempFolder(values.tmp ?? tmpdir(), "crawlsieve-near-dups-");
    const sources = dedup ? datasetSources(positionals, spool, fields) : [];
    const include = (values.include ?? DEFAULT_INCLUDE).map((glob) => globMatcher("--include", glob));
    const exclude = (values.exclude ?? []).map((glob) => globMatcher("--exclude", glob));
    const docs =
      values.index !== undefined
        ? noDocuments()
        : dedup
          ? jsonLines(sources, fields, maxBytes)
          : documents(positionals, include, exclude, fields, maxBytes);
    if (values["save-index"] !== undefined && minhash !== undefined) {
      const writer = new IndexWriter(values["save-index"], minhash.params, threshold);
      saving = writer;
      minhash.onStored = (batch) => writer.add(batch);
    }
    // The saved index's kept documents come first, numbered 0, 1, ... (and saved again with --save-index).
    const priorIds = new IdList();
    const prior =
      against?.load(
        (batch) => minhash!.addSaved(batch),
        (json) => priorIds.push(json),
        values.index !== undefined,
      ) ?? 0;
    // Exact duplicates are found before sketching, so only the first of each is sketched (--dedup only).
    const exact = dedup && values["exact-first"] !== false ? new ExactGroups() : undefined;
    const read =
      values.index !== undefined
        ? {
            ids: priorIds,
            documentOf: Uint32Array.from({ length: prior }, (_, d) => d),
            values: new Float64Array(0),
            wordless: new Uint8Array(prior),
            wordlessCount: 0,
          }
        : await readAll(docs, finder, keep, exact, prior).finally(() => exact?.dispose());
    const { ids } = read;
    const n = ids.count;
    const progress = new Progress();
    // Exact duplicates are one document to the engine: its phases count documents, not records.
    const engineDocs = read.wordless.length;
    const phase =
      (what: string): OnProgress =>
      (done, verified) =>
        progress.update(
          () => `${what}: ${count(done)} of ${count(engineDocs)} documents, ${count(verified)} candidates verified`,
        );
    const field = finder.field;
    if (dedup) {
      const plan = datasetPlan(
        read,
        finder,
        keepOrder(keep, read.values),
        keep.kind === "first",
        phase("clustering"),
        prior,
      );
      progress.done();
      // A record removed as a saved document's duplicate names it: those ids follow the records'.
      for (let d = 0; d < prior; d++) ids.push(priorIds.json(d));
      await writeDataset(sources, plan, {
        annotate: values.annotate === true,
        removed,
        removedPath: values.removed,
        maxBytes,
      });
      // Written once the run has succeeded: an index exists only for a run that finished.
      saving?.finish(
        (d) => (d < prior ? priorIds.json(d) : ids.json(plan.best[d])),
        Uint8Array.from(plan.leader, (lead, d) => (read.wordless[d] === 1 ? 2 : lead === d ? 1 : 0)),
      );
      saving = undefined;
    } else {
      const out = new Output();
      const score = (s: number) => (field === "distance" ? -s : s);
      // JSON written by hand around each id's own text, so a numeric id is printed as it came.
      const key = JSON.stringify(field);
      if (values.pairs) {
        for (const batch of finder.pairBatches(phase("pairs"))) {
          for (const p of batch)
            out.push(
              Buffer.from(
                `{"a":${ids.json(p.a)},"b":${ids.json(p.b)},${key}:${JSON.stringify(score(p.similarity))}}\n`,
              ),
            );
          if (out.full) {
            progress.done();
            await out.flush();
          }
        }
        progress.done();
      } else {
        const clustering = finder.cluster(
          Uint32Array.from({ length: n }, (_, i) => i),
          phase("grouping"),
        );
        progress.done();
        for (const [g, group] of clusterGroups(clustering).entries()) {
          const members = group.members.map((m) => ({
            id: m.id,
            score: m.id === group.representative ? (field === "distance" ? 0 : 1) : score(m.similarity),
          }));
          if (values.json) {
            const list = members.map((m) => `{"id":${ids.json(m.id)},${key}:${JSON.stringify(m.score)}}`).join(",");
            out.push(
              Buffer.from(
                `{"group":${g + 1},"representative":${ids.json(group.representative)},"members":[${list}]}\n`,
              ),
            );
          } else {
            const shown = (v: number) => (field === "distance" ? String(v) : v.toFixed(3));
            out.push(
              Buffer.from(
                `group ${g + 1} (${members.length} documents)\n${members.map((m) => `  ${shown(m.score)}\t${ids.text(m.id)}`).join("\n")}\n`,
              ),
            );
          }
          if (out.full) await out.flush();
        }
      }
      await out.end();
      if (read.wordlessCount > 0)
        process.stderr.write(`crawlsieve: ${count(read.wordlessCount)} document(s) without a word were left out\n`);
    }
  } finally {
    saving?.abandon();
    finder.dispose();
    await pool?.close();
    await removed?.close();
    if (spool !== undefined) removeTempFolder(spool);
  }
  return 0;
}

/** The documents of a run that reads none (--index). */
async function* noDocuments(): AsyncGenerator<Doc> {}

/** Refuses a --removed file that is one of the inputs: opening it for writing would empty it before it is read. */
async function checkNotAnInput(removed: string, inputs: readonly string[]): Promise<void> {
  const target = await stat(removed).catch(() => undefined);
  if (target === undefined) return;
  for (const input of inputs) {
    const source = input === "-" ? undefined : await stat(input).catch(() => undefined);
    if (source !== undefined && source.dev === target.dev && source.ino === target.ino) {
      throw new InvalidArgumentError(
        "--removed",
        removed,
        `a file other than the input ${input} (writing it would empty the input before it is read)`,
      );
    }
  }
}

/**
 * Reads every record in batches and sketches each document once: with `exact`, a record whose
 * normalized text came before is not sketched but joins the document of the first. Keeps only the
 * ids, each record's document, the --keep rule's value of each record and which documents have no word.
 */
async function readAll(
  docs: AsyncIterable<Doc>,
  finder: Finder,
  keep: KeepRule,
  exact: ExactGroups | undefined,
  prior: number,
) {
  const progress = new Progress();
  const ids = new IdList();
  const values = new Column(Float64Array);
  const noWord = new Column(Uint8Array);
  // The documents of a saved index (--against) hold numbers 0 to prior - 1; they have words.
  let sketched = prior;
  for (let d = 0; d < prior; d++) noWord.push(0);
  let wordlessCount = 0;
  let batch: Doc[] = [];
  let chars = 0;
  let toText: ((html: string) => string) | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (batch.length === 0) return;
    if (batch.some((doc) => doc.html)) toText ??= (await import("../../html/html-to-text.js")).htmlToText;
    let texts = batch.map((doc) => (doc.html ? toText!(doc.text) : doc.text));
    for (const doc of batch) ids.push(doc.idJson);
    if (keep.kind === "longest") for (const text of texts) values.push(text.length);
    else if (keep.kind !== "first") for (const doc of batch) values.push(doc.keepValue!);
    if (exact !== undefined) {
      const first = exact.add(texts);
      texts = texts.filter((_, i) => first[i] === 1);
    }
    const numbers = texts.map((_, i) => sketched + i);
    for (let i = 0; i < texts.length; i++) noWord.push(0);
    // On worker threads this batch is sketched while the next is read: one batch in flight.
    const added = Promise.resolve(finder.add(numbers, texts)).then((none) => {
      const flags = noWord.values;
      for (const number of none) flags[number] = 1;
      wordlessCount += none.length;
    });
    // Handled now, awaited at the next batch: a failure meanwhile is not an unhandled rejection.
    added.catch(() => undefined);
    await inFlight;
    inFlight = added;
    sketched += texts.length;
    batch = [];
    chars = 0;
    progress.update(() => `read ${count(ids.count)} documents`);
  };
  for await (const doc of docs) {
    batch.push(doc);
    chars += doc.text.length;
    if (batch.length >= BATCH_DOCS || chars >= BATCH_CHARS) await flush();
  }
  await flush();
  await inFlight;
  progress.done();
  const documentOf = exact?.documents() ?? Uint32Array.from({ length: ids.count }, (_, i) => i);
  if (prior > 0) for (let r = 0; r < documentOf.length; r++) documentOf[r] += prior;
  return { ids, documentOf, values: values.values, wordless: noWord.values, wordlessCount };
}

function integerOption(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new InvalidArgumentError(flag, value, `an integer from ${min} to ${max}`);
  return n;
}

/** A member name given to --text-field or --id-field. */
function fieldOption(flag: string, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (value === "") throw new InvalidArgumentError(flag, value, "the name of a JSON member, e.g. content");
  return value;
}
