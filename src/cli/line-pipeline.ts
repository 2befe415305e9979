// The CLI side of the byte pipeline: files are read in large chunks straight into WebAssembly
// memory, the next read under way while the current chunk is worked, and the kept lines go out
// as one write per chunk, straight from WebAssembly memory when stdout is a file. A pipe on stdin
// comes in the stream's own chunks, copied in.
import { closeSync, fstatSync, openSync, read, writeSync } from "node:fs";
import type { LineDeduplicator } from "../lines/line-deduplicator.js";
import { checkInputFile } from "./lines.js";

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

function readInto(fd: number, target: Uint8Array): Promise<number> {
  const done = new Promise<number>((resolve, reject) => read(fd, target, 0, target.length, null, (error, n) => (error ? reject(error) : resolve(n))));
  // Awaited later; marked handled now so an error while output waits for "drain" is not unhandled.
  done.catch(() => undefined);
  return done;
}

/**
 * Reads fd to its end straight into the deduplicator's two WebAssembly input slots: while one
 * slot is worked the next read fills the other. Growing the seen-set may grow (and so move)
 * WebAssembly memory, so it waits until the read under way has finished.
 */
async function pumpFd(fd: number, dedup: LineDeduplicator, sink: ByteSink, tick: (bytes: number) => void): Promise<void> {
  let slot: 0 | 1 = 0;
  let next = readInto(fd, dedup.slotView(slot));
  for (;;) {
    const n = await next;
    if (n === 0) return;
    dedup.begin(slot, n);
    const other: 0 | 1 = slot === 0 ? 1 : 0;
    next = readInto(fd, dedup.slotView(other));
    while (!dedup.step(sink.take)) {
      await next.then(() => undefined, () => undefined);
      dedup.grow();
    }
    await sink.flush();
    tick(n);
    slot = other;
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
  const pump = (fd: number) => pumpFd(fd, dedup, sink, tick);
  const sources = files.length === 0 ? [undefined] : files;
  for (const file of sources) {
    if (file === undefined && !isFile(0)) {
      for await (const chunk of process.stdin) await visit(chunk as Buffer);
    } else if (file === undefined) {
      await pump(0);
    } else {
      checkInputFile(file);
      const fd = openSync(file, "r");
      try {
        await pump(fd);
      } finally {
        closeSync(fd);
      }
    }
    dedup.finish(sink.take);
    await sink.flush();
  }
  await sink.end();
}
