// The second pass of `near-dups --dedup`: the JSON lines are read again (stdin from the copy the
// first pass spooled) and each record goes to exactly one place: kept records to stdout as their
// original bytes, removed ones as {"id", "duplicate_of", "similarity"} to the --removed file. With
// --annotate the records written to stdout get "cluster", "cluster_size" and "duplicate_of": every
// record, or with --removed too the kept ones only (the removed go to that file as ever). Re-reading
// keeps memory to the ids and sketches whatever the records weigh. A failed write to either is
// never silent: the --removed file's is exit 2 naming it; stdout's reader going away (`| head`)
// stops the run, after the removed records of every record read so far reach --removed.
import type { FileHandle } from "node:fs/promises";
import { CrawlsieveError, OutputError } from "../../errors.js";
import { inputLines, isBlank } from "../json-records.js";
import { Output } from "../output.js";
import { ownStdout } from "../stdout.js";
import { count, Progress } from "../progress.js";
import type { IdList } from "./near-dups-ids.js";
import type { Source } from "./near-dups-inputs.js";

/** What becomes of each record, by record number (0-based, blank lines not counted). */
export interface DatasetPlan {
  /** The kept record each one is a duplicate of; itself when it is kept (past the records: a saved index's document, its id at that place in ids). */
  readonly representative: Uint32Array;
  /** Each record's score against its representative. */
  readonly score: Float64Array;
  /** Each record's cluster (1-based, numbered by first appearance); 0 for a record without a word. */
  readonly cluster: Uint32Array;
  /** Records in each cluster, by cluster number (entry 0 unused). */
  readonly clusterSize: Uint32Array;
  /** Each record's id as JSON. */
  readonly ids: IdList;
  /** "similarity" (MinHash) or "distance" (SimHash), the removed file's third member. */
  readonly field: "similarity" | "distance";
  /** Each document's leading document (itself when it leads), for --save-index. */
  readonly leader: Uint32Array;
  /** The record each document stands for (0xffffffff for a saved index's documents). */
  readonly best: Uint32Array;
}

/** How the records are written. */
export interface DatasetOutput {
  readonly annotate: boolean;
  /** The open --removed file, if any, and its path (named when a write to it fails). */
  readonly removed: FileHandle | undefined;
  readonly removedPath?: string;
  readonly maxBytes: number;
}

const NEWLINE = Buffer.from("\n");

/**
 * Writes every record to stdout or the removed file; returns how many went to each. Every write
 * is confirmed, so a failure is known at the flush it came from. Stdout failing (EPIPE: its
 * reader went away) ends the reading; the removed records of the records read until then are
 * still written and ended, then stdout's OutputError is thrown. The --removed stream is destroyed
 * at the end, failed or not, so its FileHandle can close.
 */
export async function writeDataset(
  sources: readonly Source[],
  plan: DatasetPlan,
  output: DatasetOutput,
): Promise<{ kept: number; removed: number }> {
  // Errors are heard through each confirmed write; the listeners only keep them from being uncaught.
  const out = new Output(
    ownStdout(() => undefined),
    1 << 16,
    true,
  );
  const removedStream = output.removed?.createWriteStream({ autoClose: false });
  removedStream?.on("error", () => undefined);
  const removedOut =
    removedStream === undefined
      ? undefined
      : new Output(removedStream, 1 << 16, true, `--removed ${output.removedPath}`);
  const progress = new Progress();
  const total = plan.representative.length;
  const key = JSON.stringify(plan.field);
  let record = 0;
  let kept = 0;
  let stopped: unknown;
  const toStdout = (write: Promise<void>) => write.catch((error: unknown) => void (stopped = error));
  try {
    reading: for (const source of sources) {
      for await (const line of inputLines((source.openKept ?? source.open)(), source.name, output.maxBytes)) {
        if (isBlank(line.bytes)) continue;
        if (record >= total) throw changed(source.name);
        const r = record++;
        const rep = plan.representative[r];
        const c = plan.cluster[r];
        if (output.annotate && (rep === r || output.removed === undefined)) {
          const members = c === 0 ? "null" : String(plan.clusterSize[c]);
          out.push(annotated(line.bytes, c, members, c === 0 || rep === r ? "null" : plan.ids.json(rep)));
          out.push(NEWLINE);
          if (rep === r) kept++;
        } else if (rep === r) {
          // The original bytes, a "\r" before the "\n" included; every line ends with "\n".
          out.push(line.bytes);
          out.push(NEWLINE);
          kept++;
        } else {
          const score = plan.field === "distance" ? -plan.score[r] : plan.score[r];
          removedOut?.push(
            Buffer.from(
              `{"id":${plan.ids.json(r)},"duplicate_of":${plan.ids.json(rep)},${key}:${JSON.stringify(score)}}\n`,
            ),
          );
          if (removedOut?.full) await removedOut.flush();
        }
        if (out.full) await toStdout(out.flush());
        if (stopped !== undefined) break reading;
        progress.update(() => `written ${count(record)} of ${count(total)} records, ${count(kept)} kept`);
      }
    }
    progress.done();
    if (stopped === undefined && record !== total) throw changed(sources.map((s) => s.name).join(", "));
    if (stopped === undefined) await toStdout(out.end());
    if (removedOut !== undefined) {
      await removedOut.end();
      await new Promise<void>((resolve, reject) =>
        removedStream!.end((error?: Error | null) =>
          error ? reject(new OutputError(error, `--removed ${output.removedPath}`)) : resolve(),
        ),
      );
    }
  } finally {
    // Ended or failed, the stream lets go of the FileHandle (autoClose: false keeps the fd open
    // for the caller's close, which waits for the stream forever unless it is destroyed).
    removedStream?.destroy();
  }
  if (stopped !== undefined) throw stopped;
  return { kept, removed: total - kept };
}

/** The record's bytes with "cluster", "cluster_size" and "duplicate_of" added before its closing brace. */
function annotated(bytes: Buffer, cluster: number, size: string, duplicateOf: string): Buffer {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x20 || bytes[end - 1] === 0x09 || bytes[end - 1] === 0x0d)) end--;
  // The first pass parsed the line as an object, so bytes[end - 1] is its "}".
  let before = end - 2;
  while (
    before >= 0 &&
    (bytes[before] === 0x20 || bytes[before] === 0x09 || bytes[before] === 0x0d || bytes[before] === 0x0a)
  )
    before--;
  const comma = before >= 0 && bytes[before] === 0x7b ? "" : ",";
  const added = Buffer.from(
    `${comma}"cluster":${cluster === 0 ? "null" : cluster},"cluster_size":${size},"duplicate_of":${duplicateOf}`,
  );
  return Buffer.concat([bytes.subarray(0, end - 1), added, bytes.subarray(end - 1, end)]);
}

function changed(name: string): CrawlsieveError {
  return new CrawlsieveError(
    "ERR_INPUT_CHANGED",
    `${name} changed between the two readings of --dedup (a different number of records); give files that stay as they are while the command runs`,
  );
}
