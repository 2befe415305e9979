// Where `near-dups` reads its documents: files and walked folders (one document a file), and JSON
// lines from .jsonl/.ndjson files, "-" and stdin. For --dedup every input is JSON lines and is
// read twice, so stdin is copied to a spool file during the first reading.
import { createReadStream } from "node:fs";
import { decodedInput } from "../../files/decoded-input.js";
import { isParquetFile, parquetLines } from "../../files/parquet-input.js";
import { open, readdir, readFile, stat, type FileHandle } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import { diskReason } from "../../lines/file-spill.js";
import { checkInputFile } from "../lines.js";
import {
  inputLines,
  isBlank,
  lineName,
  parseRecord,
  tooLarge,
  type RecordDoc,
  type RecordFields,
} from "../json-records.js";

/** An input that can be read more than once: its name in messages and a way to open its bytes. */
export interface Source {
  readonly name: string;
  open(): AsyncIterable<Uint8Array>;
  /** What --dedup writes of a kept record, when not the record read (a Parquet row: its id alone). */
  openKept?(): AsyncIterable<Uint8Array>;
}

type Doc = RecordDoc;

/**
 * Files named on the command line (read whatever their name), then the files under named folders
 * that match an include glob and no exclude glob (an excluded folder is not entered), sorted.
 * One file is read at a time.
 */
async function* filesIn(
  paths: readonly string[],
  include: ((path: string) => boolean)[],
  exclude: ((path: string) => boolean)[],
  maxBytes: number,
): AsyncGenerator<Doc> {
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
    if (looksLikeJsonLines(file, text))
      process.stderr.write(
        `crawlsieve: near-dups: ${file} is read as one document, but its lines look like JSON records; name it .jsonl (or give it on stdin) to read a record a line\n`,
      );
    yield {
      idJson: JSON.stringify(file),
      idText: file,
      text,
      html: /\.x?html?$/i.test(file) || /^\s*<(!doctype html|html[\s>])/i.test(text),
    };
  }
}

/** A .json file whose first two lines are each a JSON object: JSON lines given the name of one JSON document. */
function looksLikeJsonLines(file: string, text: string): boolean {
  if (!/\.json$/i.test(file)) return false;
  const [first, second] = text.split("\n", 2);
  const record = (line: string | undefined) => {
    if (line === undefined || !line.trimStart().startsWith("{")) return false;
    try {
      return typeof JSON.parse(line) === "object";
    } catch {
      return false;
    }
  };
  return record(first) && record(second);
}

async function walk(
  root: string,
  dir: string,
  include: ((path: string) => boolean)[],
  exclude: ((path: string) => boolean)[],
  out: string[],
): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path).split(sep).join("/");
    if (exclude.some((match) => match(rel))) continue;
    if (entry.isDirectory()) await walk(root, path, include, exclude, out);
    else if (entry.isFile() && include.some((match) => match(rel))) out.push(path);
  }
}

/** True for a path read as JSON lines outside --dedup: "-" and .jsonl or .ndjson files. */
function isJsonLines(path: string): boolean {
  // A compressed JSON-lines file keeps its name before the compression's suffix (a.jsonl.gz, a.jsonl.zst).
  return path === "-" || /\.(jsonl|ndjson)(\.(gz|zst))?$/i.test(path);
}

/**
 * The documents of `near-dups` without --dedup: JSON lines from stdin when no path is given;
 * else each path in turn, "-" and .jsonl/.ndjson files as JSON lines, the others as documents.
 */
export async function* documents(
  paths: readonly string[],
  include: ((path: string) => boolean)[],
  exclude: ((path: string) => boolean)[],
  fields: RecordFields,
  maxBytes: number,
): AsyncGenerator<Doc> {
  if (paths.length === 0) {
    yield* jsonLines([stdinSource(undefined)], fields, maxBytes);
    return;
  }
  const plain = paths.filter((path) => !isJsonLines(path));
  yield* filesIn(plain, include, exclude, maxBytes);
  const lines = paths.filter(isJsonLines);
  yield* jsonLines(
    lines.map((path) => (path === "-" ? stdinSource(undefined) : fileSource(path))),
    fields,
    maxBytes,
  );
}

/**
 * The inputs of --dedup and --filter: each FILE, "-" (or none) for stdin, which is spooled under
 * `spool` to be read twice (--dedup) or read once without one. A Parquet file (told by its first
 * bytes) is read as JSON lines of its `fields` columns.
 */
export function datasetSources(paths: readonly string[], spool: string | undefined, fields: RecordFields): Source[] {
  const list = paths.length === 0 ? ["-"] : paths;
  if (list.filter((path) => path === "-").length > 1)
    throw new InvalidArgumentError("FILE", "-", "given once: stdin can be read only once");
  return list.map((path) =>
    path === "-"
      ? stdinSource(spool === undefined ? undefined : join(spool, "stdin.jsonl"))
      : (checkInputFile(path), isParquetFile(path) ? parquetSource(path, fields) : fileSource(path)),
  );
}

function parquetSource(path: string, fields: RecordFields): Source {
  return {
    name: path,
    open: () => parquetLines(path, fields, true),
    openKept: () => parquetLines(path, fields, false),
  };
}

function fileSource(path: string): Source {
  // Gzip and Zstandard files are read decompressed, whatever their names.
  return { name: path, open: () => decodedInput(createReadStream(path, { highWaterMark: 1 << 20 }), path) };
}

/** Stdin; with `spool`, the first reading copies it there and later ones read the copy. */
function stdinSource(spool: string | undefined): Source {
  let copied = false;
  return {
    name: "stdin",
    open() {
      if (copied) return decodedInput(createReadStream(spool!, { highWaterMark: 1 << 20 }), "stdin");
      copied = true;
      return decodedInput(
        spool === undefined ? (process.stdin as AsyncIterable<Uint8Array>) : tee(process.stdin, spool),
        "stdin",
      );
    },
  };
}

/**
 * The chunks of `source`, each written to the file `path` before it is passed on. A failed write
 * (a full --tmp) is a typed line naming the --tmp folder, the spool folder's parent.
 */
async function* tee(source: AsyncIterable<Uint8Array>, path: string): AsyncGenerator<Uint8Array> {
  const failed = (error: unknown) =>
    new CrawlsieveError(
      "ERR_SPILL",
      `cannot keep the copy of stdin that --dedup reads twice in ${dirname(dirname(path))} (${diskReason(error)}); give a writable --tmp with room for the whole input`,
    );
  const handle: FileHandle = await open(path, "w").catch((error: unknown) => {
    throw failed(error);
  });
  try {
    for await (const chunk of source) {
      await handle.write(chunk).catch((error: unknown) => {
        throw failed(error);
      });
      yield chunk;
    }
  } finally {
    await handle.close();
  }
}

/** The record of each non-blank JSON line of the sources, in order. */
export async function* jsonLines(
  sources: readonly Source[],
  fields: RecordFields,
  maxBytes: number,
): AsyncGenerator<Doc> {
  for await (const { doc } of jsonRecords(sources, fields, maxBytes)) yield doc;
}

/** Each non-blank JSON line of the sources with its record, in order (for commands that print lines as they came). */
export async function* jsonRecords(
  sources: readonly Source[],
  fields: RecordFields,
  maxBytes: number,
): AsyncGenerator<{ readonly doc: Doc; readonly bytes: Buffer }> {
  for (const source of sources) {
    for await (const line of inputLines(source.open(), source.name, maxBytes)) {
      if (isBlank(line.bytes)) continue;
      const where = lineName(source.name, line.number);
      // A record without an id is named by its file and line, a string: never a number a real id may be.
      const lineId = JSON.stringify(`${source.name}:${line.number}`);
      yield { doc: parseRecord(line.bytes.toString("utf8"), where, fields, lineId), bytes: line.bytes };
    }
  }
}
