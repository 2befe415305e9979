// The CLI side of the byte pipeline: files are read in large chunks with the next read already
// under way while the current chunk is worked in WebAssembly, and the kept lines go out as one
// write per chunk, straight from WebAssembly memory when stdout is a file.
import { closeSync, fstatSync, openSync, read, writeSync } from "node:fs";
import type { LineDeduplicator } from "../lines/line-deduplicator.js";
import { checkInputFile } from "./lines.js";

/** Bytes read per call. */
export const READ_BYTES = 1 << 20;

/** Where kept bytes go: write(2) on a file, the stdout stream (with backpressure) otherwise. */
class ByteSink {
  private readonly direct: boolean;
  private pending: Buffer[] = [];

  constructor() {
    this.direct = isFile(1);
  }

  /** Takes bytes that are valid only during this call. */
  readonly take = (bytes: Uint8Array): void => {
    if (!this.direct) {
      this.pending.push(Buffer.from(bytes));
      return;
    }
    for (let at = 0; at < bytes.length; ) at += writeSync(1, bytes, at, bytes.length - at);
  };

  /** Hands what was taken to the stream, waiting when it asks for it. */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    this.pending = [];
    if (!process.stdout.write(chunk)) await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      process.stdout.once("error", onError);
      process.stdout.once("drain", () => {
        process.stdout.off("error", onError);
        resolve();
      });
    });
  }

  /** Waits until the stream has handed everything to the OS. */
  async end(): Promise<void> {
    await this.flush();
    if (!this.direct) await new Promise<void>((resolve, reject) => process.stdout.write("", (error) => (error ? reject(error) : resolve())));
  }
}

function isFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

function readInto(fd: number, buffer: Buffer): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, 0, buffer.length, null, (error, n) => (error ? reject(error) : resolve(n))));
}

/** Reads fd to its end, two buffers in turn so a read is under way while a chunk is worked. */
async function pumpFd(fd: number, visit: (bytes: Buffer) => Promise<void>): Promise<void> {
  const buffers = [Buffer.allocUnsafe(READ_BYTES), Buffer.allocUnsafe(READ_BYTES)];
  let turn = 0;
  let next = readInto(fd, buffers[turn]);
  for (;;) {
    const n = await next;
    if (n === 0) return;
    const current = buffers[turn];
    turn ^= 1;
    next = readInto(fd, buffers[turn]);
    await visit(current.subarray(0, n));
  }
}

/**
 * Feeds each file (stdin when none) through `dedup`, each file's last line ending with it, and
 * writes the kept lines to stdout. `tick` runs after every chunk (progress).
 */
export async function runLinePipeline(files: readonly string[], dedup: LineDeduplicator, tick: (bytes: number) => void): Promise<void> {
  const sink = new ByteSink();
  const visit = async (bytes: Uint8Array) => {
    dedup.write(bytes, sink.take);
    await sink.flush();
    tick(bytes.length);
  };
  const sources = files.length === 0 ? [undefined] : files;
  for (const file of sources) {
    if (file === undefined && !isFile(0)) {
      for await (const chunk of process.stdin) await visit(chunk as Buffer);
    } else if (file === undefined) {
      await pumpFd(0, visit);
    } else {
      checkInputFile(file);
      const fd = openSync(file, "r");
      try {
        await pumpFd(fd, visit);
      } finally {
        closeSync(fd);
      }
    }
    dedup.finish(sink.take);
    await sink.flush();
  }
  await sink.end();
}
