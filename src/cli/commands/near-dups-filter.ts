// `near-dups --filter`: one pass over JSON-lines records, each printed as it came unless a
// near-duplicate of it was printed or read before (NearDupFilter, or RedisNearDupFilter for a
// fleet). Memory is the filter's, fixed by --items and --fp-rate, plus one batch of records: no
// sketch, no index, no temporary file. A batch is decided, then printed, then the next is read.
import { CrawlsieveError } from "../../errors.js";
import type { RecordFields } from "../json-records.js";
import { Output } from "../output.js";
import { count, Progress } from "../progress.js";
import { jsonRecords, type Source } from "./near-dups-inputs.js";

/** What the pass needs of a filter: answers per text, 1 for a near-duplicate of one added before, each text recorded. */
export interface TextFilter {
  addMany(texts: readonly string[]): Uint8Array | Promise<Uint8Array>;
  /** Texts recorded, and what it was planned for (a warning past it). */
  readonly count: number;
  readonly planned: number;
}

/** Records a batch holds at most, and characters of text. */
const BATCH_RECORDS = 512;
const BATCH_CHARS = 1 << 21;

/** Prints the records of `sources` with no near-duplicate before them; returns how many were read and left out. */
export async function filterRecords(
  sources: readonly Source[],
  fields: RecordFields,
  maxBytes: number,
  filter: TextFilter,
): Promise<{ read: number; left: number }> {
  const out = new Output();
  const progress = new Progress();
  let texts: string[] = [];
  let lines: Buffer[] = [];
  let chars = 0;
  let read = 0;
  let left = 0;
  let toText: ((html: string) => string) | undefined;
  const flush = async () => {
    if (lines.length === 0) return;
    const answers = await filter.addMany(texts);
    lines.forEach((line, i) => {
      if (answers[i] === 1) left++;
      else out.push(line);
    });
    read += lines.length;
    texts = [];
    lines = [];
    chars = 0;
    progress.update(() => `read ${count(read)} records, ${count(left)} near-duplicates left out`);
    await out.flush();
  };
  const newline = Buffer.from("\n");
  for await (const { doc, bytes } of jsonRecords(sources, fields, maxBytes)) {
    if (doc.html) toText ??= (await import("../../html/html-to-text.js")).htmlToText;
    texts.push(doc.html ? toText!(doc.text) : doc.text);
    lines.push(Buffer.concat([bytes, newline]));
    chars += doc.text.length;
    if (lines.length >= BATCH_RECORDS || chars >= BATCH_CHARS) await flush();
  }
  await flush();
  progress.done();
  await out.end();
  if (filter.count > filter.planned) {
    process.stderr.write(
      `crawlsieve: the filter was planned for ${count(filter.planned)} texts and holds ${count(filter.count)}: its false-positive rate is past --fp-rate; give --items of at least the records of a run\n`,
    );
  }
  return { read, left };
}

/** The flags --filter refuses, each with why. */
export function checkFilterFlags(values: Record<string, unknown>): void {
  const others: [string, string][] = [
    ["dedup", "--dedup clusters and verifies every pair (two passes); --filter answers yes/no in one"],
    ["pairs", "--filter prints records, not pairs"],
    ["json", "--filter prints records as they came"],
    ["keep", "--filter keeps the first record of each near-duplicate, as it reads them"],
    ["removed", "--filter keeps no ids of what it left out"],
    ["annotate", "--filter keeps no clusters"],
    ["exact-first", "--filter groups nothing: it answers each record as it comes"],
    ["include", "--filter reads JSON lines only"],
    ["exclude", "--filter reads JSON lines only"],
    ["max-distance", "--filter is MinHash (Jaccard --threshold)"],
    ["sketch-size", "--filter keeps no sketch"],
    ["tmp", "--filter writes no temporary file"],
  ];
  for (const [flag, why] of others) {
    if (values[flag] !== undefined)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `near-dups: --${values[flag] === false ? "no-" : ""}${flag} does not apply to --filter (${why}); drop it`,
      );
  }
}
