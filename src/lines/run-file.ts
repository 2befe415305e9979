// A long line's bytes on disk while it waits for its end (Node only): the line read from a pipe
// cannot be read again, so it is copied to a file of its own under the temporary folder, and read
// back once if it is to be printed. Bytes go in blocks of 1 MiB, and a block equal to the one
// before is not written again but counted (a run): a line of zeros or of padding, such as
// /dev/zero, takes one block of disk whatever its length, where a plain copy would fill the disk
// at the speed of the pipe. Memory is two blocks and a count for each block written.
import { closeSync, openSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { diskReason } from "./file-spill.js";
import { readAt, writeAt } from "../files/file-range.js";
import { makeTempFolder, removeTempFolder } from "../files/temp-folders.js";
import { CrawlsieveError } from "../errors.js";
import { LONG_LINE_BYTES } from "./long-line-store.js";

/** Bytes of a block: what is compared with the block before, written, and read back at once. */
export const BLOCK = 1 << 20;

/** A folder for run files, made under `dir` when the first file is; removed by remove(). */
export class RunFolder {
  private folder: string | undefined;
  private files = 0;

  constructor(readonly dir: string) {}

  /** A new empty run file in the folder. */
  file(): RunFile {
    if (this.folder === undefined) {
      try {
        this.folder = makeTempFolder(this.dir, "crawlsieve-long-");
      } catch (error) {
        failOn(this.dir, error);
      }
    }
    return new RunFile(join(this.folder, `line${this.files++}`), this.dir);
  }

  /** Removes the folder and what is left in it; idempotent. */
  remove(): void {
    if (this.folder === undefined) return;
    removeTempFolder(this.folder);
    this.folder = undefined;
  }
}

/** One line's bytes, appended, then read back any number of times, then removed. */
export class RunFile {
  private fd: number;
  /** The block being filled, and the last block written (what the next full block is compared with). */
  private block: Buffer | undefined = Buffer.allocUnsafe(BLOCK);
  private previous: Buffer | undefined = Buffer.allocUnsafe(BLOCK);
  private used = 0;
  /** How many times each written block repeats in the line. */
  private readonly runs: number[] = [];
  /** Bytes of the last written block (a line's final block may be short). */
  private lastBytes = BLOCK;

  constructor(
    private readonly path: string,
    private readonly dir: string,
  ) {
    try {
      this.fd = openSync(path, "w+");
    } catch (error) {
      failOn(dir, error);
    }
  }

  /** The line's next bytes. */
  append(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; ) {
      const n = Math.min(BLOCK - this.used, bytes.length - at);
      // this.block, not a copy of it: put() swaps the two buffers.
      this.block!.set(bytes.subarray(at, at + n), this.used);
      this.used += n;
      at += n;
      if (this.used === BLOCK) this.put();
    }
  }

  /** No more bytes: the last block goes to disk and the buffers are let go. */
  seal(): void {
    if (this.block === undefined) return;
    if (this.used > 0) this.put();
    this.block = this.previous = undefined;
  }

  /** The bytes so far, in chunks of their own (a repeated block is the same chunk again). */
  *read(): Generator<Uint8Array> {
    const written = this.runs.length;
    for (let i = 0; i < written; i++) {
      const size = i === written - 1 ? this.lastBytes : BLOCK;
      const chunk = Buffer.allocUnsafe(size);
      let n = 0;
      try {
        n = readAt(this.fd, chunk, i * BLOCK);
      } catch (error) {
        failOn(this.dir, error);
      }
      if (n < size)
        throw new CrawlsieveError(
          "ERR_SPILL",
          `the copy of a long line in ${this.dir} is shorter than written (${this.path}): was it removed or truncated?`,
        );
      for (let r = 0; r < this.runs[i]; r++) yield chunk;
    }
    if (this.block !== undefined && this.used > 0) yield Buffer.from(this.block.subarray(0, this.used));
  }

  /** Removes the file; idempotent. */
  remove(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
    this.block = this.previous = undefined;
    try {
      unlinkSync(this.path);
    } catch {
      // Gone with its folder already (removeTempFolders at a signal).
    }
  }

  /** Writes the current block, or counts it when it equals the block written before. */
  private put(): void {
    const block = this.block!;
    const size = this.used;
    this.used = 0;
    const written = this.runs.length;
    if (written > 0 && size === BLOCK && this.lastBytes === BLOCK && block.equals(this.previous!)) {
      this.runs[written - 1]++;
      return;
    }
    try {
      writeAt(this.fd, block.subarray(0, size), written * BLOCK);
    } catch (error) {
      failOn(this.dir, error);
    }
    this.runs.push(1);
    this.lastBytes = size;
    // The block just written is the one the next is compared with; the old one is refilled.
    this.block = this.previous;
    this.previous = block;
  }
}

/** A disk error as one line for the command line: where, why, and what to do. */
function failOn(dir: string, error: unknown): never {
  throw new CrawlsieveError(
    "ERR_SPILL",
    `cannot keep a long line on disk in ${dir} (${diskReason(error)}); a line past ${LONG_LINE_BYTES >> 20} MiB read from a pipe waits there until it ends: give a writable --tmp with room, or read the input from a file`,
  );
}
