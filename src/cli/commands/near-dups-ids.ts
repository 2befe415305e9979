// The ids of `near-dups`' documents, as their JSON text, held as bytes in one growing array with
// an offset each, not as a string each: a JavaScript string and its slot in an array cost some 40
// bytes even for a short number, more than the rest of a document's memory in the index.
import { Column } from "../../near-dup/column.js";

/** Document ids (their JSON) by document number. */
export class IdList {
  private readonly bytes = new Column(Uint8Array);
  private readonly ends = new Column(Float64Array);

  /** Ids held. */
  get count(): number {
    return this.ends.rows;
  }

  /** Appends the id of the next document, as JSON (a quoted string, or a number as it came). */
  push(json: string): void {
    const encoded = Buffer.from(json, "utf8");
    this.bytes.append(encoded, encoded.length);
    this.ends.push(this.bytes.rows);
  }

  /** Document `i`'s id as JSON. */
  json(i: number): string {
    const ends = this.ends.values;
    const values = this.bytes.values;
    return Buffer.from(
      values.buffer,
      values.byteOffset + (i === 0 ? 0 : ends[i - 1]),
      ends[i] - (i === 0 ? 0 : ends[i - 1]),
    ).toString("utf8");
  }

  /** Document `i`'s id as text: a string unquoted (a file path), a number as it came. */
  text(i: number): string {
    const json = this.json(i);
    return json.startsWith('"') ? (JSON.parse(json) as string) : json;
  }
}
