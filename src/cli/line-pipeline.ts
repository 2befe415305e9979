// The CLI side of the byte pipeline: files and pipes are read straight into WebAssembly memory
// (a file in large chunks, a pipe in what it holds), the next read under way while the current
// chunk is worked, and the kept lines go out as one write per chunk, made (to a file or a pipe)
// while the next chunk is worked. Reads and writes run on Node's thread pool, so they take the
// second core while the main thread runs the kernel; only a terminal goes through Node's streams
// (their chunks are fresh memory, which costs page faults a chunk). A line past
// LONG_LINE_BYTES is not held: a new one is printed from where it waits (long-line-stores.ts), a
// block at a time, in its place in the output.
import { closeSync, fstatSync, openSync, read, readSync, statSync, write, writev } from "node:fs";
import { isatty } from "node:tty";
import { OutputError } from "../errors.js";
import type { LineDeduplicator } from "../lines/line-deduplicator.js";
import type { LineKeys } from "../lines/keys/line-keys.js";
import type { ChunkGate } from "../lines/chunk-gate.js";
import { RunFolder } from "../lines/run-file.js";
import { checkInputFile } from "./lines.js";
import { copiedLineStore, fileOffset, longLineStore, type LongLineCopy } from "./long-line-stores.js";
import { codingOf, decodedChunks, MAGIC_BYTES } from "../files/decoded-input.js";
import { Output } from "./output.js";
import { stdout } from "./stdout.js";

/**
 * Where kept bytes go. Anything but a terminal (a file, a pipe, a socket, /dev/null): write(2) from
 * the thread pool, one write in flight while the next chunk is worked, so writing overlaps the
 * kernel on the other core; the write is made straight from the deduplicator's output region,
 * which it leaves alone until that write is done (LineDeduplicator.step). A terminal: the stdout
 * stream, with backpressure, from a copy.
 */
class ByteSink {
  private readonly direct: boolean;
  /** A terminal: the stdout stream, through the commands' shared writer (made only then: see stdout.ts). */
  private readonly stream: Output | undefined;
  private pending: (Buffer | LongLineCopy)[] = [];
  private inFlight: Promise<void> = Promise.resolve();

  /**
   * With `confirm`, a flush to a stream waits until its bytes reached the OS: a store commits no
   * chunk while the print before it may still fail. `ledger` (a store's) hears, once a flush's
   * bytes are written, the mark it gave when the flush was asked for.
   */
  constructor(
    confirm = false,
    private readonly ledger?: Pick<ChunkGate, "mark" | "printed">,
  ) {
    this.direct = !isatty(1);
    this.stream = this.direct ? undefined : new Output(stdout(), 1 << 16, confirm);
  }

  /** Takes bytes that are valid only during this call. */
  readonly take = (bytes: Uint8Array): void => {
    this.pending.push(this.own(bytes) ? asBuffer(bytes) : Buffer.from(bytes));
  };

  /**
   * Takes a step's kept bytes, which step() leaves intact until the next flush has waited for
   * their write: a file gets them without a copy.
   */
  readonly lend = (bytes: Uint8Array): void => {
    this.pending.push(this.direct || this.own(bytes) ? asBuffer(bytes) : Buffer.from(bytes));
  };

  /** Takes a long line to print after what was taken before: read back a block at a time when its turn comes. */
  readonly copy = (line: LongLineCopy): void => {
    this.pending.push(line);
  };

  /** Waits for the write under way: memory may grow (and move) only with none. */
  readonly settle = async (): Promise<void> => {
    await this.inFlight;
  };

  /** A buffer of its own (a piece of a long line, never reused) is kept as it is, so a 200 MB line is not copied again. */
  private own(bytes: Uint8Array): boolean {
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  }

  /**
   * Hands what was taken on: waits for the write before it (file) or for "drain" (stream). The
   * bytes are written only once `after` resolves (a store's flush of their fingerprints); a file
   * meanwhile lets the next chunk be worked.
   */
  async flush(after?: Promise<void>): Promise<void> {
    if (this.pending.length === 0) return;
    const pieces = this.pending;
    this.pending = [];
    // Taken now: what was recorded up to here is in this flush or an earlier one.
    const mark = this.ledger?.mark();
    const written = () => {
      if (mark !== undefined) this.ledger!.printed(mark);
    };
    if (this.direct) {
      await this.inFlight;
      this.inFlight = (after === undefined ? writeAll(1, pieces) : after.then(() => writeAll(1, pieces))).then(written);
      // Awaited by the next flush or end; marked handled now so a failure while a read is awaited is not unhandled.
      this.inFlight.catch(() => undefined);
      return;
    }
    await after;
    const stream = this.stream!;
    for (const piece of pieces) {
      if (piece instanceof Uint8Array) {
        stream.push(piece);
        continue;
      }
      // A long line: a block at a time, each awaited, so no more than a block waits in memory.
      await stream.flush();
      for (const chunk of piece.chunks()) {
        stream.push(chunk);
        await stream.flush();
      }
      piece.done();
    }
    await stream.flush();
    written();
  }

  /** Waits until everything is handed to the OS; then all the ledger was told is printed. */
  async end(): Promise<void> {
    await this.flush();
    if (this.direct) await this.inFlight;
    else await this.stream!.end();
    this.ledger?.printed(Infinity);
  }
}

/** The same bytes as a Buffer, no copy. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * All of `pieces` to fd, in order (a write to a file may be short); consecutive byte pieces in one
 * writev, so a chunk's kept lines are one system call however many pieces they came in; a long
 * line a block at a time.
 */
async function writeAll(fd: number, pieces: readonly (Buffer | LongLineCopy)[]): Promise<void> {
  for (let i = 0; i < pieces.length; ) {
    const piece = pieces[i];
    if (!(piece instanceof Uint8Array)) {
      for (const chunk of piece.chunks()) await writeBytes(fd, chunk);
      piece.done();
      i++;
      continue;
    }
    let j = i + 1;
    while (j < pieces.length && pieces[j] instanceof Uint8Array) j++;
    if (j === i + 1) await writeBytes(fd, piece);
    else await writeRun(fd, pieces.slice(i, j) as Buffer[]);
    i = j;
  }
}

/** Byte pieces to fd with writev, the rest of a short write after it piece by piece. */
async function writeRun(fd: number, run: Buffer[]): Promise<void> {
  let done = await whenReady(
    () =>
      new Promise<number>((resolve, reject) =>
        writev(fd, run, null, (error, n) => (error ? reject(error) : resolve(n))),
      ),
    OutputError,
  );
  for (const piece of run) {
    if (done >= piece.length) {
      done -= piece.length;
      continue;
    }
    await writeBytes(fd, piece.subarray(done));
    done = 0;
  }
}

async function writeBytes(fd: number, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    at += await whenReady(
      () =>
        new Promise<number>((resolve, reject) =>
          write(fd, bytes, at, bytes.length - at, null, (error, n) => (error ? reject(error) : resolve(n))),
        ),
      OutputError,
    );
  }
}

/**
 * Runs a read or write of a pipe that another process may have made non-blocking (the mode
 * belongs to the pipe, shared with whoever holds it): on EAGAIN it waits a moment, up to 10 ms,
 * and tries again. Any other error comes out as `wrap` makes it.
 */
async function whenReady<T>(op: () => Promise<T>, wrap?: new (error: Error) => Error): Promise<T> {
  for (let wait = 1; ; wait = Math.min(10, 2 * wait)) {
    try {
      return await op();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN")
        throw wrap === undefined ? error : new wrap(error as Error);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** No gate: the work runs at once. */
const UNGATED: ChunkGate = {
  decide: async (work) => work(),
  decideAll: async (work) => work(),
  durable: () => Promise.resolve(),
  mark: () => 0,
  printed: () => undefined,
};

/** Total bytes of the inputs when every one is a regular file (stdin when none), else undefined: sizes the approximate filter. */
export function regularInputBytes(files: readonly string[]): number | undefined {
  try {
    let total = 0;
    for (const stats of files.length === 0
      ? [fstatSync(0)]
      : files.map((file) => (file === "-" ? fstatSync(0) : statSync(file)))) {
      if (!stats.isFile()) return undefined;
      total += stats.size;
    }
    return total;
  } catch {
    // A missing file is reported by the pipeline when it comes to it.
    return undefined;
  }
}

/** The bytes of fd from where it stands to its end, a megabyte at a time (fd stays open). */
async function* chunksOf(fd: number): AsyncGenerator<Uint8Array> {
  for (;;) {
    const chunk = new Uint8Array(1 << 20);
    const n = await readInto(fd, chunk);
    if (n === 0) return;
    yield chunk.subarray(0, n);
  }
}

/**
 * The first bytes of input fd, enough to tell its coding: read where they lie without moving the
 * offset from a regular file, taken from a pipe (then the caller works them first).
 */
async function peek(fd: number): Promise<{ bytes: Uint8Array; taken: boolean }> {
  const bytes = new Uint8Array(MAGIC_BYTES);
  const at = fileOffset(fd);
  if (at !== undefined) return { bytes: bytes.subarray(0, readSync(fd, bytes, 0, MAGIC_BYTES, at)), taken: false };
  let n = 0;
  while (n < MAGIC_BYTES) {
    const got = await whenReady(
      () =>
        new Promise<number>((resolve, reject) =>
          read(fd, bytes, n, MAGIC_BYTES - n, null, (error, k) => (error ? reject(error) : resolve(k))),
        ),
    );
    if (got === 0) break;
    n += got;
  }
  return { bytes: bytes.subarray(0, n), taken: true };
}

function readInto(fd: number, target: Uint8Array): Promise<number> {
  const done = whenReady(
    () =>
      new Promise<number>((resolve, reject) =>
        read(fd, target, 0, target.length, null, (error, n) => (error ? reject(error) : resolve(n))),
      ),
  );
  // Awaited later; marked handled now so an error while output waits for "drain" is not unhandled.
  done.catch(() => undefined);
  return done;
}

/**
 * Reads fd to its end straight into the deduplicator's two WebAssembly input slots: while one
 * slot is worked the next read fills the other. Growing the seen-set may grow (and so move)
 * WebAssembly memory, so it waits until the read and the write under way have finished.
 */
async function pumpFd(
  fd: number,
  dedup: LineDeduplicator,
  sink: ByteSink,
  tick: (bytes: number) => void,
  gate: ChunkGate,
  prefix: Uint8Array,
): Promise<void> {
  let slot: 0 | 1 = 0;
  // Bytes already taken from fd (its first, to tell its coding) start the first slot, so they
  // are worked with what follows them as one chunk.
  const first = dedup.slotView(slot);
  first.set(prefix);
  let next = readInto(fd, first.subarray(prefix.length)).then((n) => n + prefix.length);
  try {
    for (;;) {
      const n = await next;
      if (n === 0) return;
      const other: 0 | 1 = slot === 0 ? 1 : 0;
      // The gate may grow memory before the work: the next read starts inside it, after that.
      await gate.decide(async () => {
        dedup.begin(slot, n);
        next = readInto(fd, dedup.slotView(other));
        while (!dedup.step(sink.lend)) {
          await next.then(
            () => undefined,
            () => undefined,
          );
          await sink.settle();
          dedup.grow();
        }
      }, sink.settle);
      await sink.flush(gate.durable());
      tick(n);
      slot = other;
    }
  } catch (error) {
    // The read under way goes into WebAssembly memory: it ends before that memory may be let go.
    await next.catch(() => undefined);
    throw error;
  }
}

/**
 * Feeds each file (stdin when none) through `dedup`, each file's last line ending with it, and
 * writes the kept lines to stdout. `tick` runs after every chunk (progress). Lines past
 * LONG_LINE_BYTES from a pipe wait in files under `tmp`. With a gate, every chunk is decided
 * through it, and its kept lines are written only once it has resolved. `keys`, the keyed
 * dedup's (the deduplicator's own), is told which input it reads, for its errors.
 */
export async function runLinePipeline(
  files: readonly string[],
  dedup: LineDeduplicator,
  tick: (bytes: number) => void,
  tmp: string,
  gate: ChunkGate = UNGATED,
  keys?: LineKeys,
): Promise<void> {
  const sink = new ByteSink(gate !== UNGATED, gate === UNGATED ? undefined : gate);
  try {
    await feed(files, dedup, tick, tmp, gate, sink, keys);
  } catch (error) {
    // A write under way may be made from WebAssembly memory (lent kept lines, a store's chunk
    // waiting for its flush): it ends before the caller disposes of that memory. What it writes was
    // decided, and with a store made durable, before the error; what was not is never written.
    await sink.settle().catch(() => undefined);
    throw error;
  }
}

/** runLinePipeline's body: every input through the deduplicator (and the gate), then what waited on disk. */
async function feed(
  files: readonly string[],
  dedup: LineDeduplicator,
  tick: (bytes: number) => void,
  tmp: string,
  gate: ChunkGate,
  sink: ByteSink,
  keys: LineKeys | undefined,
): Promise<void> {
  const visit = async (bytes: Uint8Array) => {
    // A chunk at most a decision: the engine keeps room for one chunk's new fingerprints.
    for (let at = 0; at < bytes.length; at += dedup.chunkBytes) {
      const piece = bytes.subarray(at, at + dedup.chunkBytes);
      await gate.decide(() => dedup.write(piece, sink.take), sink.settle);
      await sink.flush(gate.durable());
    }
    tick(bytes.length);
  };
  const pump = (fd: number, prefix: Uint8Array) => pumpFd(fd, dedup, sink, tick, gate, prefix);
  const folder = new RunFolder(tmp);
  const sources = files.length === 0 ? [undefined] : files.map((file) => (file === "-" ? undefined : file));
  try {
    for (const file of sources) {
      if (file !== undefined) checkInputFile(file);
      if (keys !== undefined) keys.source = file ?? "stdin";
      const fd = file === undefined ? 0 : openSync(file, "r");
      const name = file ?? "stdin";
      const tty = file === undefined && isatty(0);
      // Gzip and Zstandard input is told by its first bytes and read decompressed.
      const head = tty ? { bytes: new Uint8Array(0), taken: false } : await peek(fd);
      const coding = codingOf(head.bytes);
      const store =
        coding === "plain" ? longLineStore(fd, name, folder, sink.copy) : copiedLineStore(folder, sink.copy);
      dedup.useLongLines(store);
      try {
        if (tty) {
          for await (const chunk of process.stdin) await visit(chunk as Buffer);
        } else if (coding !== "plain") {
          for await (const chunk of decodedChunks(
            head.taken ? head.bytes : new Uint8Array(0),
            chunksOf(fd),
            coding,
            name,
          ))
            await visit(chunk);
        } else {
          await pump(fd, head.taken ? head.bytes : new Uint8Array(0));
        }
        // finish() may grow memory: no write from WebAssembly memory may be under way then.
        await sink.settle();
        await gate.decide(() => dedup.finish(sink.take), sink.settle);
        await sink.flush(gate.durable());
        // A long line is printed from the input: the input stays open until it is.
        await sink.settle();
      } finally {
        dedup.useLongLines(undefined);
        store.close();
        if (file !== undefined) closeSync(fd);
      }
    }
  } finally {
    folder.remove();
  }
  // Lines that waited on disk past the memory budget, in input order, after all the others: the
  // first step resolves them all (through the gate, against every key of a store), and a store
  // makes each window of them durable before it is given back.
  const resolved = dedup.resolved();
  try {
    await gate.decideAll(async () => {
      for (let next = resolved.next(); !next.done; next = resolved.next()) {
        sink.take(next.value);
        await sink.flush();
      }
    }, sink.settle);
  } finally {
    resolved.return(undefined);
  }
  await sink.end();
}
