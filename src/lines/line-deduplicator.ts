// Line dedup over byte chunks, for Node streams, browsers and workers alike: push chunks of
// newline-separated bytes, get the first occurrence of every line back, byte for byte.
// Lines are worked inside WebAssembly a chunk at a time (see line-engine.ts). A line's beginning
// left at the end of a chunk is carried into the head room before the next chunk's data; a line
// longer than the head room is gathered aside, each byte copied once, and fingerprinted in one
// piece when it ends, so time and memory stay linear in the longest line. Given a LongLineStore
// (the command line), a line past its threshold is fingerprinted as it streams by and its bytes go
// to the store instead, so memory stays bounded whatever the line's length.
import type { Arena } from "../wasm/arena.js";
import { CrawlsieveError, InvalidArgumentError, DisposedError } from "../errors.js";
import * as check from "../validate.js";
import { LineEngine, type LineHash } from "./line-engine.js";
import { joinPieces } from "./join-pieces.js";
import type { LineSpillFactory } from "./line-spill.js";
import type { LongLineStore } from "./long-line-store.js";
import { LineKeys } from "./keys/line-keys.js";

/** Options of LineDeduplicator. */
export interface LineDeduplicatorOptions {
  /** "xxh128" (default) or "md5": the fingerprint of exact mode (128 bits either way). */
  readonly hash?: LineHash;
  /** Bloom filter instead of exact fingerprints: a line may be dropped as a false positive with probability fpRate. */
  readonly approx?: boolean;
  /** With approx: the false-positive rate (default 0.001). */
  readonly fpRate?: number;
  /** With approx: distinct lines planned; without it the filter grows by stages. */
  readonly items?: number;
  /** With approx and no items: bytes of input expected (a file's size), so the first filter is sized for the lines still to come instead of growing by many stages. */
  readonly inputBytes?: number;
  /** Bytes worked per WebAssembly call (default 1 MiB). */
  readonly chunkBytes?: number;
  /** Lines up to this length are carried between chunks in place; longer ones are gathered aside (default 64 KiB). */
  readonly carryBytes?: number;
  /** Scalar newline scan instead of SIMD (for tests). */
  readonly scalar?: boolean;
  /** @internal approx without items: distinct lines held exactly before the first filter stage (default 2^16). */
  readonly stageItems?: number;
  /**
   * Exact mode: bytes of memory the seen-set may take (its WebAssembly memories and the spill's
   * buffers), at least 16 MiB. The table spreads over as many 4 GiB memories as that allows; past
   * it lines not found are spilled (see `spill`). Default: no limit but the platform's.
   */
  readonly memory?: number;
  /** Exact mode: where lines go past `memory` (Node: `fileSpill(dir)`); without it reaching the budget throws FilterTooLargeError. */
  readonly spill?: LineSpillFactory;
  /** @internal most bytes of one WebAssembly memory (tests spread over several memories with small ones). */
  readonly perMemory?: number;
  /** @internal Exact mode: keep the new lines' fingerprints for a store (see freshDigests). */
  readonly fresh?: boolean;
  /** @internal Exact mode: keys the first table is sized for (a store's). */
  readonly tableItems?: number;
  /** @internal Exact mode: every line found new waits in the spill for resolved(), where a store too large for the budget decides it (see StoreGate). */
  readonly deferNew?: boolean;
  /** @internal Compare lines by these keys (a field, a JSON value, a canonical URL: the CLI's --field, --json-key, --canonicalize); a line is printed as it came. */
  readonly keys?: LineKeys;
}

/** Every option LineDeduplicator knows: any other is a mistake (a misspelling), not a default. */
const KNOWN_OPTIONS = new Set([
  "hash",
  "approx",
  "fpRate",
  "items",
  "inputBytes",
  "chunkBytes",
  "carryBytes",
  "scalar",
  "stageItems",
  "memory",
  "spill",
  "perMemory",
  "fresh",
  "tableItems",
  "deferNew",
  "keys",
]);
/** Options for crawlsieve's own callers, left out of the list an unknown option's error gives. */
const INTERNAL_OPTIONS = new Set(["perMemory", "stageItems", "fresh", "tableItems", "deferNew", "keys"]);

/** Smallest memory budget: the engine's own buffers (about 4 MiB at the default chunk) and a small table. */
export const MIN_MEMORY = 16 << 20;

const NEWLINE = Uint8Array.of(0x0a);

/** A chunk in slot `slot` being worked: bytes [from, n) of its data, `done` of them (with the carry) consumed. */
interface Job {
  readonly slot: 0 | 1;
  readonly next: 0 | 1;
  readonly n: number;
  readonly from: number;
  phase: "long" | "kernel" | "done";
  done: number;
}
const NL = 0x0a;

/**
 * Exact (or approximate) line dedup over Uint8Array chunks: `push` returns the kept lines that
 * the chunk completed, `end` the last line if the input did not end with "\n". A line is its
 * bytes without "\n" or "\r\n"; output bytes are the input's (a last line gets its "\n").
 */
export class LineDeduplicator {
  private engine: LineEngine | undefined;
  private readonly chunk: number;
  private readonly head: number;
  /** Bytes of a partial line sitting just before the data of slot carrySlot. */
  private carry = 0;
  private carrySlot: 0 | 1 = 0;
  /** The chunk being worked (see begin/step). */
  private job: Job | undefined;
  /** Set by work(): the last kernel call stopped because the seen-set must grow. */
  private stopped = false;
  /** A partial line longer than the head room, gathered aside (empty once it streams to the store). */
  private long: Uint8Array[] | undefined;
  /** Bytes of the partial long line so far, and where in the current input it began. */
  private longBytes = 0;
  private longStart = 0;
  /** Where long lines past the store's threshold go (see useLongLines); the current one streams there when `streaming`. */
  private store: LongLineStore | undefined;
  private streaming = false;
  /** The streamed line's fingerprint, kept while the seen-set grows before it is tested. */
  private longDigest: Uint8Array | undefined;
  /** Where in the current input the chunk begun last starts, and the next one will. */
  private chunkAt = 0;
  private nextAt = 0;
  /** Bytes of lines worked so far, and the total expected (inputBytes), for sizing filter stages. */
  private bytesDone = 0;
  private readonly inputBytes: number | undefined;
  /** Set by end(): the input is over, and a further push would continue a finished stream. */
  private ended = false;

  constructor(options: LineDeduplicatorOptions = {}) {
    const opts = check.options<LineDeduplicatorOptions>("options", options);
    const unknown = Object.keys(opts).filter(
      (key) => !KNOWN_OPTIONS.has(key) && (opts as Record<string, unknown>)[key] !== undefined,
    );
    if (unknown.length > 0)
      throw new InvalidArgumentError(
        unknown[0],
        (opts as Record<string, unknown>)[unknown[0]],
        `no such option: LineDeduplicator takes ${[...KNOWN_OPTIONS].filter((k) => !INTERNAL_OPTIONS.has(k)).join(", ")}`,
      );
    for (const flag of ["approx", "scalar", "fresh"] as const)
      if (opts[flag] !== undefined && typeof opts[flag] !== "boolean")
        throw new InvalidArgumentError(flag, opts[flag], "true or false");
    const hash = opts.hash ?? "xxh128";
    if (hash !== "xxh128" && hash !== "md5") throw new InvalidArgumentError("hash", opts.hash, '"xxh128" or "md5"');
    const approx = opts.approx === true;
    const fpRate = check.probability("fpRate", opts.fpRate ?? 0.001);
    const items = opts.items === undefined ? undefined : check.positiveInteger("items", opts.items);
    this.chunk = check.integerInRange("chunkBytes", opts.chunkBytes ?? 1 << 20, 16, 1 << 28);
    this.head = check.integerInRange("carryBytes", opts.carryBytes ?? 1 << 16, 1, 1 << 28);
    this.inputBytes =
      opts.inputBytes === undefined
        ? undefined
        : check.integerInRange("inputBytes", opts.inputBytes, 0, Number.MAX_SAFE_INTEGER);
    const memory =
      opts.memory === undefined
        ? undefined
        : check.integerInRange("memory", opts.memory, MIN_MEMORY, Number.MAX_SAFE_INTEGER);
    const perMemory =
      opts.perMemory === undefined ? undefined : check.integerInRange("perMemory", opts.perMemory, 1 << 20, 2 ** 32);
    if (opts.spill !== undefined && typeof opts.spill !== "function")
      throw new InvalidArgumentError("spill", opts.spill, "a spill factory such as fileSpill(dir)");
    if (opts.keys !== undefined && !(opts.keys instanceof LineKeys))
      throw new InvalidArgumentError("keys", opts.keys, "a LineKeys");
    this.engine = new LineEngine({
      mode: approx ? "approx" : "exact",
      hash,
      fpRate,
      items,
      chunkBytes: this.chunk,
      headBytes: this.head,
      scalar: opts.scalar === true,
      stageItems: opts.stageItems === undefined ? undefined : check.positiveInteger("stageItems", opts.stageItems),
      memory,
      perMemory,
      spill: opts.spill,
      fresh: opts.fresh === true,
      tableItems:
        opts.tableItems === undefined
          ? undefined
          : check.integerInRange("tableItems", opts.tableItems, 0, Number.MAX_SAFE_INTEGER),
      deferNew: opts.deferNew === true,
      keys: opts.keys,
    });
  }

  /** @internal Bytes worked per WebAssembly call (a slot's size). */
  get chunkBytes(): number {
    return this.chunk;
  }

  /** Works a chunk; returns the kept lines it completed (a copy, so it stays valid). */
  push(chunk: Uint8Array): Uint8Array {
    const input = bytesArgument(chunk);
    this.live();
    this.open("push");
    const pieces: Uint8Array[] = [];
    this.write(input, (bytes) => pieces.push(bytes.slice()));
    return joinPieces(pieces);
  }

  /**
   * Ends the input: returns the last line (with "\n" added) when it had no "\n" and is new, and
   * every line that waited in the spill (past the memory budget), in input order.
   */
  end(): Uint8Array {
    this.live();
    this.open("end");
    this.ended = true;
    const pieces: Uint8Array[] = [];
    this.finish((bytes) => pieces.push(bytes.slice()));
    for (const bytes of this.resolved()) pieces.push(bytes.slice());
    return joinPieces(pieces);
  }

  /**
   * @internal After the last finish(): the spilled lines' first occurrences in input order, in
   * chunks valid until the next (none when nothing was spilled). Removes the spill's files after.
   */
  *resolved(): Generator<Uint8Array> {
    const engine = this.live();
    try {
      yield* engine.resolved();
    } finally {
      engine.close();
    }
  }

  /** Lines seen and lines kept so far. */
  get stats(): { lines: number; unique: number; duplicates: number } {
    const { lines, unique } = this.live().counts;
    return { lines, unique, duplicates: lines - unique };
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.live().byteLength;
  }

  /** The seen-set's geometry, for reports. */
  describe(): Record<string, unknown> {
    return this.live().describe();
  }

  /** Throws when the input already ended: lines after end() would be deduplicated against a finished stream. */
  private open(call: string): void {
    if (this.ended)
      throw new CrawlsieveError(
        "ERR_ENDED",
        `LineDeduplicator.${call}() after end(): the input is over; make a new LineDeduplicator for another input`,
      );
  }

  /** Releases the memory and removes the spill's files; later calls throw DisposedError. */
  dispose(): void {
    this.engine?.release();
    this.engine = undefined;
  }

  /** @internal Disposes, handing the engine's instance (its table's memory) to another use: `dedup --store`'s compaction at close. */
  releaseArena(): Arena | undefined {
    const arena = this.engine?.releaseArena();
    this.engine = undefined;
    return arena;
  }

  /**
   * @internal Works a chunk, handing kept bytes to `sink` in order. The bytes may be a view into
   * WebAssembly memory (see step); copy them to keep them.
   */
  write(chunk: Uint8Array, sink: (bytes: Uint8Array) => void): void {
    for (let at = 0; at < chunk.length; ) {
      const n = Math.min(this.chunk, chunk.length - at);
      const engine = this.live();
      engine.inputs[0].copyIn(engine.arena.u8, chunk.subarray(at, at + n), this.head);
      this.begin(0, n, false);
      while (!this.step(sink)) this.grow();
      at += n;
    }
  }

  /** @internal Ends the input, handing the last line to `sink` (see write). No read into a slot may be under way. */
  finish(sink: (bytes: Uint8Array) => void): void {
    const engine = this.live();
    // The next input counts its bytes from 0, and a keyed dedup its lines once this one's last is done.
    this.chunkAt = this.nextAt = 0;
    if (this.long !== undefined) {
      while (!this.endLong(false, sink)) this.grow();
    } else if (this.carry > 0) {
      const start = this.head - this.carry;
      for (let done = 0; ; ) {
        done += this.work(this.carrySlot, start + done, this.carry - done, true);
        if (!this.stopped) break;
        this.grow();
      }
      this.carry = 0;
      this.emit(sink);
    }
    engine.endInput();
  }

  /**
   * @internal Where lines longer than the store's threshold go from now on (the command line sets
   * one for each input: see src/cli/long-line-stores.ts); undefined gathers them in memory.
   * Set between inputs (after finish()), never inside a line.
   */
  useLongLines(store: LongLineStore | undefined): void {
    this.store = store;
  }

  /** @internal A view of input slot i (0 or 1), to read up to chunkBytes straight into; take it anew before each read. */
  slotView(slot: 0 | 1): Uint8Array {
    const engine = this.live();
    return engine.inputs[slot].bytes(engine.arena.u8, this.head, this.chunk);
  }

  /**
   * @internal Starts working `n` bytes that sit in slot i. With `alternate`, the next chunk comes
   * in the other slot (which may be being read into meanwhile), so a partial line is carried there.
   */
  begin(slot: 0 | 1, n: number, alternate = true): void {
    const engine = this.live();
    const next: 0 | 1 = alternate ? ((slot ^ 1) as 0 | 1) : slot;
    let from = 0;
    let phase: Job["phase"] = "kernel";
    this.chunkAt = this.nextAt;
    this.nextAt += n;
    if (this.long !== undefined) {
      const data = engine.inputs[slot].bytes(engine.arena.u8, this.head, n);
      const nl = data.indexOf(NL);
      this.addLong(data.subarray(0, nl < 0 ? n : nl + 1));
      phase = nl < 0 ? "done" : "long";
      from = nl + 1;
    }
    this.job = { slot, next, n, from, phase, done: 0 };
    if (phase === "done") this.job = undefined;
  }

  /**
   * @internal Works the chunk begun last, handing its kept lines to `sink` once it is done.
   * Returns false when it stopped because the seen-set must grow first: call grow() (with no read
   * into a slot and no write from an output region under way, since growing memory moves them)
   * and step() again. Kept lines come as a view of one of two output regions, taken in turn: it
   * stays intact through the next step, and is refilled only by the step after the next one that
   * hands bytes over, so a writer may hold it until then without a copy.
   */
  step(sink: (bytes: Uint8Array) => void): boolean {
    const engine = this.live();
    const job = this.job;
    if (job === undefined) return true;
    if (job.phase === "long") {
      if (!this.endLong(true, sink)) return false;
      job.phase = "kernel";
    }
    // Bytes of the slot: the carry sits just before its data (put there when the chunk before ended).
    const start = this.head + job.from - this.carry;
    const len = this.carry + job.n - job.from;
    job.done += this.work(job.slot, start + job.done, len - job.done, false);
    if (this.stopped) return false;
    this.emit(sink);
    const left = len - job.done;
    const u8 = engine.arena.u8;
    const rest = engine.inputs[job.slot].bytes(u8, start + job.done, left);
    if (left <= this.head) {
      // Carry the partial line into the head room of the slot the next chunk comes in.
      engine.inputs[job.next].copyIn(u8, rest, this.head - left);
      this.carry = left;
    } else {
      // Slot byte i is byte chunkAt + i - head of the input (a carry's bytes lie before head).
      this.long = [];
      this.longBytes = 0;
      this.longStart = this.chunkAt + start + job.done - this.head;
      this.addLong(rest);
      this.carry = 0;
    }
    this.carrySlot = job.next;
    this.job = undefined;
    return true;
  }

  /**
   * @internal With `fresh`: the packed fingerprints of the lines found new since clearFresh(), as
   * a view valid until the next step or memory growth.
   */
  freshDigests(): Uint8Array {
    return this.live().freshDigests();
  }

  /** @internal Forgets the fingerprints freshDigests() gave. */
  clearFresh(): void {
    this.live().clearFresh();
  }

  /**
   * @internal Inserts packed fingerprints (a store's keys) as seen until the tables freeze at the
   * memory budget (then returns false); may grow memory, so no read or write into it may be under way.
   */
  addFingerprints(packed: Uint8Array): boolean {
    return this.live().addFingerprints(packed);
  }

  /** @internal Lines spilled past the memory budget so far. */
  get spilledLines(): number {
    return this.live().spilledLines;
  }

  /** @internal Whether every new line waits for resolved() (the deferNew option). */
  get defersNew(): boolean {
    return this.live().defersNew;
  }

  /**
   * @internal Before a store's keys are set aside: a filter of the spilled lines' fingerprints, in
   * memory the tables no longer need, so that only keys that may equal one are; false when there
   * is no room for it.
   */
  sieveStoreKeys(): boolean {
    return this.live().sieveStoreKeys();
  }

  /** @internal Shows the spilled lines' records (`size` bytes each, the fingerprint first) to `visit`, at most a batch at a time: a store looks up the records of its sorted part they need. */
  eachSpilled(visit: (records: Uint8Array, size: number) => void): void {
    this.live().eachSpilled(visit);
  }

  /** @internal Sets a store's keys (or keys it forgot) aside for the spilled lines to be resolved against. */
  spillStoreKeys(packed: Uint8Array, forget: boolean): void {
    this.live().spillStoreKeys(packed, forget);
  }

  /** @internal Told the fingerprints of the spilled lines resolved() keeps, a window of output at a time (in pieces), before any line of the window is given back. */
  set onKept(hook: ((fingerprints: readonly Uint8Array[]) => void) | undefined) {
    this.live().onKept = hook;
  }

  /** @internal Removes packed fingerprints (keys a store forgot). */
  removeFingerprints(packed: Uint8Array): void {
    this.live().removeFingerprints(packed);
  }

  /** @internal Empties the seen-set (a store was cleared). */
  clearSeen(): void {
    this.live().clearSeen();
  }

  /** @internal Grows the seen-set after step() returned false; may grow WebAssembly memory. */
  grow(): void {
    this.live().grow(this.remainingLines());
  }

  /** Lines still to come, from inputBytes and the mean line length so far; undefined when inputBytes was not given. */
  private remainingLines(): number | undefined {
    if (this.inputBytes === undefined) return undefined;
    const { lines } = this.live().counts;
    if (lines === 0 || this.bytesDone === 0) return undefined;
    // 5% over the mean line length so far: a tail of slightly shorter lines still fits.
    return (1.05 * Math.max(0, this.inputBytes - this.bytesDone)) / (this.bytesDone / lines);
  }

  private live(): LineEngine {
    if (this.engine === undefined) throw new DisposedError("LineDeduplicator");
    return this.engine;
  }

  /** One kernel call over bytes [from, from + len) of input slot `slot`, its kept lines appended to the output region; sets `stopped`; returns bytes consumed. */
  private work(slot: 0 | 1, from: number, len: number, final: boolean): number {
    const engine = this.live();
    const { consumed, mustGrow } = engine.work(engine.inputs[slot].at(from), len, final);
    this.bytesDone += consumed;
    this.stopped = mustGrow;
    return consumed;
  }

  /** Hands the output region's kept lines to sink, when there are any, and turns to the other region. */
  private emit(sink: (bytes: Uint8Array) => void): void {
    const engine = this.live();
    const out = engine.output();
    if (out.length === 0) return;
    sink(out);
    engine.swapOutput();
  }

  /**
   * Takes the next bytes of the partial long line (valid only during the call): gathered, or past
   * the store's threshold fingerprinted as they come and handed to the store.
   */
  private addLong(bytes: Uint8Array): void {
    this.longBytes += bytes.length;
    // A line read whole for its key is held whole, up to its limit ("\r\n" allowed past it).
    const keyed = this.live().keyed;
    if (keyed !== undefined && this.longBytes > keyed.keys.spec.maxLineBytes + 2) throw keyed.tooLong();
    const store = keyed === undefined ? this.store : undefined;
    if (this.streaming) {
      this.live().longHasher.update(bytes);
      store!.append(bytes);
      return;
    }
    this.long!.push(bytes.slice());
    if (store === undefined || this.longBytes <= store.threshold) return;
    // Past the threshold: what was gathered goes first, and nothing more is kept.
    const hasher = this.live().longHasher;
    hasher.begin();
    store.start(this.longStart);
    for (const piece of this.long!) {
      hasher.update(piece);
      store.append(piece);
    }
    this.long = [];
    this.streaming = true;
  }

  /** Fingerprints the long line (its "\n" included when terminated) and emits it if new; false when the seen-set must grow first. */
  private endLong(terminated: boolean, sink: (bytes: Uint8Array) => void): boolean {
    if (this.streaming) return this.endStreamed(terminated, sink);
    const pieces = this.long!;
    const fresh = this.live().dedupLong(pieces, terminated);
    if (fresh === 2) return false;
    this.long = undefined;
    // 3: spilled, printed at the end.
    if (fresh === 1) {
      for (const p of pieces) sink(p);
      if (!terminated) sink(NEWLINE);
    }
    return true;
  }

  /** endLong for a line that streamed to the store: the store prints it (in its place: the sink's bytes before are already handed over) or lets it go. */
  private endStreamed(terminated: boolean, sink: (bytes: Uint8Array) => void): boolean {
    const engine = this.live();
    const store = this.store!;
    // Taken once: a retry after the seen-set grew tests the same fingerprint.
    this.longDigest ??= engine.longHasher.end(terminated).slice();
    const fresh = engine.dedupDigest(this.longDigest, () => (terminated ? store.read() : withNewline(store.read())));
    if (fresh === 2) return false;
    this.long = undefined;
    this.streaming = false;
    this.longDigest = undefined;
    store.end(fresh === 1);
    if (fresh === 1 && !terminated) sink(NEWLINE);
    return true;
  }
}

/** The chunks, then a "\n". */
function* withNewline(chunks: Iterable<Uint8Array>): Generator<Uint8Array> {
  yield* chunks;
  yield NEWLINE;
}

function bytesArgument(value: unknown, name = "chunk"): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new InvalidArgumentError(name, value, "a Uint8Array");
  return value;
}

/** Dedups newline-separated bytes in one call: the first occurrence of every line, in order. */
export function dedupLines(bytes: Uint8Array, options?: LineDeduplicatorOptions): Uint8Array {
  bytesArgument(bytes, "bytes");
  // Slots sized to the input: a short text needs no megabyte of buffers to be zeroed and reused.
  const chunkBytes = Math.min(1 << 20, Math.max(4096, 2 ** Math.ceil(Math.log2(bytes.length + 1))));
  const dedup = new LineDeduplicator({ chunkBytes, carryBytes: Math.min(1 << 16, chunkBytes), ...options });
  try {
    const head = dedup.push(bytes);
    const tail = dedup.end();
    return tail.length === 0 ? head : joinPieces([head, tail]);
  } finally {
    dedup.dispose();
  }
}
