// JSON lines as `near-dups` reads them: a byte stream split into lines (each kept as its bytes, so
// a kept record can be written back verbatim), and each line parsed into the id and text of a
// document. A line longer than the limit is refused by number before it is joined: readline would
// build it whole and crash on a 600 MB line.
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";

/** A line of input: its bytes without the "\n" (a "\r" before it stays) and its 1-based number. */
export interface InputLine {
  readonly bytes: Buffer;
  readonly number: number;
}

/** Where each record's id and text are. */
export interface RecordFields {
  /** Member holding the text (default "text"); an "html" member is used when it is absent. */
  readonly text: string;
  /** Member holding the id (default "id"). */
  readonly id: string;
  /**
   * Dataset mode: a record without an id gets "FILE:LINE" ("stdin:LINE"), a string, so it never
   * equals a numeric id; one without text has no word. Otherwise both are required.
   */
  readonly lenient: boolean;
  /** Members a record must not have (--annotate adds them). */
  readonly reserved?: readonly string[];
  /** The member whose number --keep max:FIELD / min:FIELD reads, if any. */
  readonly keepField?: string;
}

/** A record's document: its id as printed in JSON and in text, and its text (HTML when `html`). */
export interface RecordDoc {
  readonly idJson: string;
  readonly idText: string;
  readonly text: string;
  readonly html: boolean;
  /** The number in the `keepField` member; NaN when it is missing or not a number (absent without `keepField`). */
  readonly keepValue?: number;
}

/** A document over the --max-bytes limit, named. */
export function tooLarge(where: string, bytes: number | undefined, maxBytes: number): CrawlsieveError {
  const size = bytes === undefined ? "more than" : `${bytes.toLocaleString("en-US")} bytes, over`;
  return new CrawlsieveError(
    "ERR_DOCUMENT_TOO_LARGE",
    `${where} is ${size} the limit of ${maxBytes.toLocaleString("en-US")} bytes a document (--max-bytes)`,
  );
}

/** Where line `n` of input `name` is, as messages say it ("stdin line 3", "a.jsonl:3"). */
export function lineName(name: string, n: number): string {
  return name === "stdin" ? `stdin line ${n}` : `${name}:${n}`;
}

/**
 * The lines of a byte stream, split on the bytes, with a UTF-8 byte order mark before the first
 * line dropped; a last line without "\n" is still a line.
 */
export async function* inputLines(
  source: AsyncIterable<Uint8Array>,
  name: string,
  maxBytes: number,
): AsyncGenerator<InputLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  let first = true;
  const take = (piece: Buffer): InputLine => {
    pending.push(piece);
    let whole = pending.length === 1 ? pending[0] : Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    if (first && whole[0] === 0xef && whole[1] === 0xbb && whole[2] === 0xbf) whole = whole.subarray(3);
    first = false;
    return { bytes: whole, number };
  };
  for await (const piece of source) {
    const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      number++;
      if (pendingBytes + nl - from > maxBytes) throw tooLarge(lineName(name, number), undefined, maxBytes);
      yield take(chunk.subarray(from, nl));
      from = nl + 1;
    }
    if (from < chunk.length) {
      // A copy: the stream may reuse its chunk's memory once it is handed on.
      pending.push(Buffer.from(chunk.subarray(from)));
      pendingBytes += chunk.length - from;
      if (pendingBytes > maxBytes) throw tooLarge(lineName(name, number + 1), undefined, maxBytes);
    }
  }
  if (pendingBytes > 0) {
    number++;
    yield take(Buffer.alloc(0));
  }
}

/** True for a line of only white space: not a record. */
export function isBlank(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}

/** The document of one JSON line `text` found at `where`; throws InvalidArgumentError naming `where` for bad JSON or fields. */
export function parseRecord(text: string, where: string, fields: RecordFields, lineId: string): RecordDoc {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const shown = text.length > 80 ? `${text.slice(0, 80)}...` : text;
    throw new InvalidArgumentError(
      where,
      shown,
      `a JSON object {"${fields.id}": ..., "${fields.text}": ...} (${(error as Error).message})`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidArgumentError(where, value, `a JSON object {"${fields.id}": ..., "${fields.text}": ...}`);
  }
  const record = value as Record<string, unknown>;
  const own = (name: string) => (Object.prototype.hasOwnProperty.call(record, name) ? record[name] : undefined);
  const textValue = own(fields.text);
  const htmlValue = textValue === undefined ? own("html") : undefined;
  const body = textValue ?? htmlValue;
  const id = own(fields.id);
  for (const name of fields.reserved ?? []) {
    if (own(name) !== undefined)
      throw new InvalidArgumentError(
        `${where} "${name}"`,
        own(name),
        "absent: --annotate adds it (drop it first, or use --removed)",
      );
  }
  const wanted = `an object with an "${fields.id}" (string or number) and a "${fields.text}"${fields.text === "html" ? "" : ' or "html"'} string`;
  if (fields.lenient) {
    if (body !== undefined && body !== null && typeof body !== "string")
      throw new InvalidArgumentError(
        `${where} "${textValue === undefined ? "html" : fields.text}"`,
        body,
        "a string (or null, or no such member, for a record without text)",
      );
    if (id !== undefined && id !== null && typeof id !== "string" && typeof id !== "number")
      throw new InvalidArgumentError(
        `${where} "${fields.id}"`,
        id,
        'a string or a number (or no such member: "FILE:LINE" is its id)',
      );
  } else if (typeof body !== "string" || (typeof id !== "string" && typeof id !== "number")) {
    throw new InvalidArgumentError(where, value, wanted);
  }
  // HTML is reduced to text: an "html" member, whether it stands in for an absent text member or is the one named.
  const html = typeof body === "string" && (textValue === undefined || fields.text === "html");
  // A string "0.9", null or an object is no number: such a record ranks after every numbered one.
  const ranked = fields.keepField === undefined ? undefined : own(fields.keepField);
  const keepValue = fields.keepField === undefined ? undefined : typeof ranked === "number" ? ranked : Number.NaN;
  if (id === undefined || id === null)
    return {
      idJson: lineId,
      idText: lineId.startsWith('"') ? JSON.parse(lineId) : lineId,
      text: typeof body === "string" ? body : "",
      html,
      keepValue,
    };
  // A number keeps its source text: JSON.parse makes 1e400 Infinity and rounds past 2^53.
  const idJson = typeof id === "string" ? JSON.stringify(id) : (numberSource(text, fields.id) ?? String(id));
  return {
    idJson,
    idText: typeof id === "string" ? id : idJson,
    text: typeof body === "string" ? body : "",
    html,
    keepValue,
  };
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The source text of the number that is member `name` of the JSON object `json` (the last, as JSON.parse keeps), or undefined. */
export function numberSource(json: string, name: string): string | undefined {
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
