// A column of numbers, one row per document of a collection whose size is not known in advance:
// a typed array that grows by half again when full, so a million rows cost a few copies, and
// a row is `width` values (a document's band keys) or one.

/** A typed array of the kinds a column holds. */
type Typed = Uint8Array | Uint32Array | Float64Array;

/** Rows of `width` values appended at the end, read by row number. */
export class Column<A extends Typed> {
  private data: A;
  /** Rows appended. */
  rows = 0;

  constructor(
    private readonly make: new (length: number) => A,
    /** Values per row. */
    readonly width = 1,
  ) {
    this.data = new make(1024 * width);
  }

  /** Appends one row of a one-value column. */
  push(value: number): void {
    if (this.rows * this.width === this.data.length) this.makeRoom(1);
    this.data[this.rows++] = value;
  }

  /** Appends `rows` rows, the first `rows * width` values of `from`. */
  append(from: A, rows: number): void {
    this.makeRoom(rows);
    this.data.set(from.subarray(0, rows * this.width) as never, this.rows * this.width);
    this.rows += rows;
  }

  /** The values of every row, in row order (row r at r * width); valid until the next append. */
  get values(): A {
    return this.data.subarray(0, this.rows * this.width) as A;
  }

  private makeRoom(rows: number): void {
    const need = (this.rows + rows) * this.width;
    if (need <= this.data.length) return;
    const data = new this.make(Math.max(need, Math.ceil(this.data.length * 1.5)));
    data.set(this.values as never);
    this.data = data;
  }
}
