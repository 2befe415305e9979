// The keys of a batch of scanned lines in a keyed dedup (--field, --csv, --json-key,
// --canonicalize): cut in JavaScript (keys/), fingerprinted in one kernel call (assembly/line-keys.ts)
// into the batch's digest region, where the engine's seen-set decides them as it decides lines. A
// line without its key gets no fingerprint and a flag that lineEmit acts on: printed as it is
// (--missing keep) or left out (drop).
import { LineTooLongError } from "../errors.js";
import type { Arena } from "../wasm/arena.js";
import type { ArrayRegion } from "../wasm/array-region.js";
import type { LineKeys } from "./keys/line-keys.js";
import type { LongLineHasher } from "./long-line.js";

/** Regions of the engine's memory a keyed batch is worked in. */
export interface KeyedRegions {
  /** Scanned lines' records (SPLIT_LINE_BYTES each: start, key end, line end, open). */
  readonly records: ArrayRegion;
  readonly digests: ArrayRegion;
  readonly flags: ArrayRegion;
  /** A span (u32 start, end) a line. */
  readonly keySpans: ArrayRegion;
  /** Keys that are not bytes of the line (decoded, canonical), copied in to be fingerprinted. */
  readonly keyBytes: ArrayRegion;
}

/** What a line without its key comes to: a flag for lineEmit, or for a long line the same as words. */
export type MissingFate = "keep" | "drop";

/** Cuts and fingerprints the keys of scanned lines. */
export class KeyedBatch {
  /** Lines of the current input decided so far: the next line is line + 1, in errors. */
  line = 0;

  constructor(
    private readonly arena: Arena,
    private readonly ctx: number,
    readonly keys: LineKeys,
    private readonly r: KeyedRegions,
    private readonly hasher: () => LongLineHasher,
  ) {}

  /**
   * Cuts the keys of the n lines in the records region and writes their fingerprints to the digest
   * region, and to the flag region 1 for a line with its key, lineEmit's pass flag for one kept
   * without (--missing keep), 0 for one dropped. Returns the lines' `has` (1: has its key) when
   * some lack one, undefined when every line has its key.
   */
  prepare(n: number): Uint8Array | undefined {
    const { arena, r } = this;
    const k = arena.k;
    const u8 = arena.u8;
    const records = r.records.view(u8, Uint32Array, 0, n);
    const cut = this.keys.cut(u8, records, 4, n, this.line + 1);
    const flags = r.flags.bytes(u8, 0, n);
    const pass = k.EMIT_PASS.value as number;
    let all = true;
    for (let i = 0; i < n; i++) {
      if (cut.has[i] === 1) flags[i] = 1;
      else {
        all = false;
        flags[i] = this.keys.missing === "keep" ? pass : 0;
      }
    }
    if (cut.data === u8) {
      // Keys are bytes of the lines: their spans are addresses already.
      const spans = new Uint32Array(2 * n);
      for (let i = 0, j = 0; i < n; i++) {
        if (cut.has[i] !== 1) continue;
        spans[2 * i] = cut.spans[2 * j];
        spans[2 * i + 1] = cut.spans[2 * j + 1];
        j++;
      }
      r.keySpans.copyIn(u8, spans);
      k.keyDigests(this.ctx, r.keySpans.ptr, n, r.digests.ptr);
    } else {
      this.digestCopied(cut.data, cut.spans, cut.has, n);
    }
    return all ? undefined : cut.has;
  }

  /** prepare() for keys in a buffer of their own: copied into the key region as many as fit, each fill fingerprinted in one call. */
  private digestCopied(data: Uint8Array, keySpans: Uint32Array, has: Uint8Array, n: number): void {
    const { arena, r } = this;
    const k = arena.k;
    const room = r.keyBytes.length;
    let from = 0;
    let fill = 0;
    // Each line's span (0, 0: no key, or fingerprinted apart), copied in a fill at a time.
    const spans = new Uint32Array(2 * n);
    const flush = (to: number) => {
      if (to > from) {
        r.keySpans.copyIn(arena.u8, spans.subarray(2 * from, 2 * to), from);
        k.keyDigests(this.ctx, r.keySpans.at(from), to - from, r.digests.at(from));
      }
      from = to;
      fill = 0;
    };
    for (let i = 0, j = 0; i < n; i++) {
      if (has[i] !== 1) continue;
      const key = data.subarray(keySpans[2 * j], keySpans[2 * j + 1]);
      j++;
      if (key.length > room) {
        // Longer than the whole region: fingerprinted on its own, as a long line is.
        flush(i);
        r.digests.copyIn(arena.u8, this.hasher().key(key), i);
        from = i + 1;
        continue;
      }
      if (fill + key.length > room) flush(i);
      const at = r.keyBytes.at(fill);
      r.keyBytes.copyIn(arena.u8, key, fill);
      spans[2 * i] = at;
      spans[2 * i + 1] = at + key.length;
      fill += key.length;
    }
    flush(n);
  }

  /**
   * The fingerprint of the key of a line too long for a chunk, given in pieces (its "\n" included
   * when terminated), or what becomes of it without one. A line past the key's limit is an error.
   */
  long(pieces: readonly Uint8Array[], terminated: boolean): Uint8Array | MissingFate {
    let total = 0;
    for (const piece of pieces) total += piece.length;
    const line = new Uint8Array(total);
    let at = 0;
    for (const piece of pieces) line.set(piece, (at += piece.length) - piece.length);
    let end = total;
    if (terminated && end > 0 && line[end - 1] === 0x0a) end--;
    if (end > 0 && line[end - 1] === 0x0d) end--;
    if (end > this.keys.spec.maxLineBytes) throw this.tooLong();
    const cut = this.keys.cut(line, [0, end], 2, 1, this.line + 1);
    if (cut.has[0] !== 1) return this.keys.missing === "keep" ? "keep" : "drop";
    return this.hasher().key(cut.data.subarray(cut.spans[0], cut.spans[1]));
  }

  /** The error of the line being gathered, past the limit of a line read whole for its key. */
  tooLong(): LineTooLongError {
    return new LineTooLongError(
      `${this.keys.source}:${this.line + 1}`,
      this.keys.spec.maxLineBytes,
      this.keys.spec.limitOf,
    );
  }
}
