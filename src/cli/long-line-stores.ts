// Where `dedup` keeps a line too long to hold (past LONG_LINE_BYTES) until its end says whether it
// is new. From a regular file nothing is kept but where the line lies, and a new line is copied
// from the file when it is printed; from a pipe (or a device, which may not give the same bytes
// twice) the line is copied to a file of its own under --tmp (run-file.ts) and read back from there.
import { readFileSync, fstatSync } from "node:fs";
import { CrawlsieveError } from "../errors.js";
import { LONG_LINE_BYTES, type LongLineStore } from "../lines/long-line-store.js";
import { readAt } from "../files/file-range.js";
import { BLOCK, type RunFile, type RunFolder } from "../lines/run-file.js";

/** A long line to print in its place in the output: its bytes read back in chunks of their own, then let go. */
export interface LongLineCopy {
  chunks(): Iterable<Uint8Array>;
  done(): void;
}

/** A LongLineStore for one input, closed when the input has been read and its lines printed. */
export interface InputStore extends LongLineStore {
  /** Lets go of what the store still holds (a line cut short by an error). */
  close(): void;
}

/**
 * The store for input `fd` (named `name` in errors): a re-read of the file when fd is a regular
 * file whose offset is known, else copies in `folder`. `print` takes each new long line.
 */
export function longLineStore(
  fd: number,
  name: string,
  folder: RunFolder,
  print: (copy: LongLineCopy) => void,
): InputStore {
  const base = fileOffset(fd);
  return base === undefined ? new CopiedLines(folder, print) : new FileLines(fd, base, name, print);
}

/** The store for an input that is decoded as it is read (gzip, Zstandard): its lines lie in no file, so long ones are copied in `folder`. */
export function copiedLineStore(folder: RunFolder, print: (copy: LongLineCopy) => void): InputStore {
  return new CopiedLines(folder, print);
}

/** Where reads of fd start: 0 for a regular file opened here, the inherited offset for stdin (Linux says it in /proc); undefined when fd is no regular file or the offset is unknown. */
export function fileOffset(fd: number): number | undefined {
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    if (fd !== 0) return 0;
    // `(head -c 100; crawlsieve dedup) < file` reads stdin from byte 100 on.
    const pos = /^pos:\s+(\d+)$/m.exec(readFileSync("/proc/self/fdinfo/0", "latin1"))?.[1];
    return pos === undefined ? undefined : Number(pos);
  } catch {
    return undefined;
  }
}

/** Long lines of a regular file: only where they lie is kept. */
class FileLines implements InputStore {
  readonly threshold = LONG_LINE_BYTES;
  private from = 0;
  private length = 0;

  constructor(
    private readonly fd: number,
    private readonly base: number,
    private readonly name: string,
    private readonly print: (copy: LongLineCopy) => void,
  ) {}

  start(offset: number): void {
    this.from = this.base + offset;
    this.length = 0;
  }

  append(bytes: Uint8Array): void {
    this.length += bytes.length;
  }

  read(): Iterable<Uint8Array> {
    return readRange(this.fd, this.from, this.length, this.name);
  }

  end(print: boolean): void {
    if (!print) return;
    const { fd, from, length, name } = this;
    this.print({ chunks: () => readRange(fd, from, length, name), done: () => undefined });
  }

  close(): void {}
}

/** Bytes [from, from + length) of fd, in chunks of their own of up to a block. */
function* readRange(fd: number, from: number, length: number, name: string): Generator<Uint8Array> {
  for (let at = 0; at < length; ) {
    const chunk = Buffer.allocUnsafe(Math.min(BLOCK, length - at));
    if (readAt(fd, chunk, from + at) < chunk.length)
      throw new CrawlsieveError(
        "ERR_INPUT_CHANGED",
        `${name} changed while it was read: a line of ${length} bytes at byte ${from} is printed from the file, which now ends before it`,
      );
    at += chunk.length;
    yield chunk;
  }
}

/** Long lines of a pipe or a device: copied to a file each, removed once printed or let go. */
class CopiedLines implements InputStore {
  readonly threshold = LONG_LINE_BYTES;
  private file: RunFile | undefined;

  constructor(
    private readonly folder: RunFolder,
    private readonly print: (copy: LongLineCopy) => void,
  ) {}

  start(): void {
    this.file = this.folder.file();
  }

  append(bytes: Uint8Array): void {
    this.file!.append(bytes);
  }

  read(): Iterable<Uint8Array> {
    return this.file!.read();
  }

  end(print: boolean): void {
    const file = this.file!;
    this.file = undefined;
    if (!print) return file.remove();
    file.seal();
    this.print({ chunks: () => file.read(), done: () => file.remove() });
  }

  close(): void {
    this.file?.remove();
    this.file = undefined;
  }
}
