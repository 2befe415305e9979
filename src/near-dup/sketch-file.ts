// The bottom-k sketches of a collection, in a temporary file rather than in memory: a document's
// sketch is 4 (count + 1) bytes, its count of values then the values, so a 150-word page takes
// about 600 bytes of disk and none of memory. They are read back one at a time, straight into
// WebAssembly memory, only for the documents that are candidates of one another. The file is
// removed by close(), or by removeTempFolders() at exit and on Ctrl-C.
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { CrawlsieveError } from "../errors.js";
import { diskReason } from "../lines/file-spill.js";
import { readAt, writeAt } from "../files/file-range.js";
import { makeTempFolder, removeTempFolder } from "../files/temp-folders.js";
import { Column } from "./column.js";

/** Words buffered before a write: 1 MiB. */
const BUFFER_WORDS = 1 << 18;

/** Sketches appended in document order, read back by document number. */
export class SketchFile {
  private readonly folder: string;
  private readonly fd: number;
  /** Byte offset of each document's sketch in the file. */
  private readonly offsets = new Column(Float64Array);
  private readonly buffer = new Uint32Array(BUFFER_WORDS);
  private buffered = 0;
  /** Bytes written to the file. */
  private written = 0;

  constructor(
    private readonly dir: string,
    /** Values per full sketch. */
    readonly k: number,
  ) {
    try {
      this.folder = makeTempFolder(dir, "crawlsieve-sketches-");
      this.fd = openSync(join(this.folder, "sketches"), "w+");
    } catch (error) {
      throw this.failed(error);
    }
  }

  /** Sketches stored. */
  get count(): number {
    return this.offsets.rows;
  }

  /** Bytes the sketches take on disk. */
  get byteLength(): number {
    return this.written + 4 * this.buffered;
  }

  /** Appends `count` sketches laid out as sketchMany makes them (k + 1 words each: count, then values). */
  append(values: Uint32Array, count: number): void {
    const stride = this.k + 1;
    for (let i = 0; i < count; i++) {
      const words = values[i * stride] + 1;
      if (this.buffered + words > BUFFER_WORDS) this.flush();
      this.offsets.push(this.written + 4 * this.buffered);
      this.buffer.set(values.subarray(i * stride, i * stride + words), this.buffered);
      this.buffered += words;
    }
  }

  /** Reads sketch `doc` into `into`, whose first 4 (k + 1) bytes it may fill (the values past its count are left as they were). */
  read(doc: number, into: Uint8Array): void {
    if (this.buffered > 0) this.flush();
    const offsets = this.offsets.values;
    const at = offsets[doc];
    const bytes = (doc + 1 < offsets.length ? offsets[doc + 1] : this.written) - at;
    try {
      const got = readAt(this.fd, into.subarray(0, bytes), at);
      if (got < bytes) throw new Error(`the sketch file ended at byte ${at + got}`);
    } catch (error) {
      throw this.failed(error);
    }
  }

  /** Removes the file; idempotent. */
  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    removeTempFolder(this.folder);
  }

  private flush(): void {
    const bytes = new Uint8Array(this.buffer.buffer, 0, 4 * this.buffered);
    try {
      writeAt(this.fd, bytes, this.written);
    } catch (error) {
      throw this.failed(error);
    }
    this.written += bytes.length;
    this.buffered = 0;
  }

  private failed(error: unknown): CrawlsieveError {
    return new CrawlsieveError(
      "ERR_SPILL",
      `cannot keep the documents' sketches on disk in ${this.dir} (${diskReason(error)}); give a writable --tmp with room (about 4 bytes per distinct shingle, at most ${4 * (this.k + 1)} bytes a document)`,
    );
  }
}
