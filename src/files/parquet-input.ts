// Parquet input for the dataset commands (near-dups --dedup and --filter): a file whose first
// bytes are "PAR1" is read a row group at a time through hyparquet (an optional dependency,
// loaded only here: a reader with no dependencies of its own, in JavaScript, that reads Snappy
// and uncompressed pages itself), and each row becomes one JSON line of its id and text columns,
// so the JSON-lines pipeline reads it as it reads a .jsonl file. A row group is the memory bound.
import { closeSync, openSync, readSync } from "node:fs";
import { CrawlsieveError } from "../errors.js";

/** The first bytes of every Parquet file. */
const MAGIC = [0x50, 0x41, 0x52, 0x31];

/** True when the file at `path` begins as a Parquet file does. */
export function isParquetFile(path: string): boolean {
  const head = new Uint8Array(4);
  const fd = openSync(path, "r");
  try {
    return readSync(fd, head, 0, 4, 0) === 4 && MAGIC.every((b, i) => head[i] === b);
  } finally {
    closeSync(fd);
  }
}

/** A Parquet file that cannot be read: names the file and what failed. */
export class ParquetInputError extends CrawlsieveError {
  constructor(path: string, why: string) {
    super("ERR_INPUT_DAMAGED", `${path}: ${why}`);
  }
}

interface Hyparquet {
  asyncBufferFromFile(path: string): Promise<unknown>;
  parquetMetadataAsync(file: unknown): Promise<{
    schema: { name: string }[];
    row_groups: { num_rows: bigint | number }[];
  }>;
  parquetReadObjects(options: object): Promise<Record<string, unknown>[]>;
}

/** Which columns to read: the text's, and the id's (when the file has it, else a record is named by file and row). */
export interface ParquetColumns {
  readonly text: string;
  readonly id: string;
  /** A numeric column a keep rule ranks by (--keep max:FIELD), read with the text when the file has it. */
  readonly keepField?: string;
}

/**
 * The rows of the Parquet file at `path` as JSON lines, `{"<id>": id, "<text>": text}` (with
 * `withText` false, the id alone: what the kept rows' output holds), a row group at a time.
 */
export async function* parquetLines(
  path: string,
  columns: ParquetColumns,
  withText: boolean,
): AsyncGenerator<Uint8Array> {
  const hyparquet = await load(path);
  let file: unknown;
  let metadata: Awaited<ReturnType<Hyparquet["parquetMetadataAsync"]>>;
  try {
    file = await hyparquet.asyncBufferFromFile(path);
    metadata = await hyparquet.parquetMetadataAsync(file);
  } catch (error) {
    throw new ParquetInputError(path, `not a readable Parquet file (${(error as Error).message})`);
  }
  // The first schema element is the root; top-level columns follow (nested ones are not texts).
  const names = new Set(metadata.schema.slice(1).map((element) => element.name));
  if (!names.has(columns.text))
    throw new ParquetInputError(
      path,
      `the Parquet file has no column ${JSON.stringify(columns.text)} (--text-field; its columns: ${[...names].slice(0, 20).join(", ")})`,
    );
  const hasId = names.has(columns.id);
  const rank =
    withText && columns.keepField !== undefined && names.has(columns.keepField) ? columns.keepField : undefined;
  const wanted = [
    ...new Set([
      ...(withText ? [columns.text] : []),
      ...(hasId ? [columns.id] : []),
      ...(rank === undefined ? [] : [rank]),
    ]),
  ];
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    let rows: Record<string, unknown>[];
    if (wanted.length === 0) rows = Array.from({ length: rowEnd - rowStart }, () => ({}));
    else {
      try {
        rows = await hyparquet.parquetReadObjects({ file, metadata, columns: wanted, rowStart, rowEnd });
      } catch (error) {
        const why = (error as Error).message;
        throw new ParquetInputError(
          path,
          /compression codec/i.test(why)
            ? `its pages use a compression codec this reader does not decode (${why}): Snappy and uncompressed pages are read; rewrite the file with one of those`
            : `the Parquet data is damaged or cannot be read (${why}), in the rows from ${rowStart + 1}`,
        );
      }
    }
    const lines = rows.map((row) => {
      const members: string[] = [];
      if (hasId) members.push(`${JSON.stringify(columns.id)}:${jsonValue(row[columns.id])}`);
      if (withText) {
        const text = row[columns.text];
        members.push(`${JSON.stringify(columns.text)}:${JSON.stringify(typeof text === "string" ? text : "")}`);
      }
      if (rank !== undefined && rank !== columns.id) members.push(`${JSON.stringify(rank)}:${jsonValue(row[rank])}`);
      return `{${members.join(",")}}\n`;
    });
    yield Buffer.from(lines.join(""), "utf8");
    rowStart = rowEnd;
  }
}

/** A Parquet value as JSON: a 64-bit integer as its digits (never through a double), null when absent. */
function jsonValue(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (value === undefined) return "null";
  return JSON.stringify(value) ?? "null";
}

async function load(path: string): Promise<Hyparquet> {
  try {
    // A module name in a variable: TypeScript does not look for the optional package's types.
    const name = "hyparquet";
    return (await import(name)) as Hyparquet;
  } catch (error) {
    throw new CrawlsieveError(
      "ERR_NO_PARQUET",
      `${path} is a Parquet file; reading it needs the hyparquet package (npm install hyparquet): ${(error as Error).message}`,
    );
  }
}
