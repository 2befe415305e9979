// The one batch loop. Keys (an array of strings or byte arrays, or spans of one buffer) are staged
// a batch at a time (one native encode for the whole batch, see staging.ts), and each batch is
// handed to the structure, which calls its kernel once for it and reads its flags or values back.
// Structures write no loop of their own: this is where a batch is cut (at most BATCH keys, fewer
// where a structure has room for fewer) and where its result bytes are copied out. Items that come
// one at a time (candidate pairs of a query, fingerprints of a scan) gather in an Accumulator.
import * as check from "../validate.js";
import { BATCH, type Digest, type Staging } from "./staging.js";

/** Keys as a batch takes them: a checked list, or checked spans of one buffer. */
export type Keys =
  | { readonly list: readonly (string | Uint8Array)[] }
  | { readonly data: Uint8Array; readonly spans: ArrayLike<number> };

/** A key list, checked (named `name` in errors). */
export function keyList(keys: unknown, name = "keys"): Keys {
  return { list: check.keyList(name, keys) };
}

/** Keys given as spans of one buffer (key i = data[spans[2i] .. spans[2i+1]), ascending), checked. */
export function keySpans(data: Uint8Array, spans: ArrayLike<number>): Keys {
  check.spans(data, spans);
  return { data, spans };
}

/** How many keys. */
export function countOf(keys: Keys): number {
  return "list" in keys ? keys.list.length : keys.spans.length >>> 1;
}

/**
 * Stages `keys` batch by batch and calls `visit(n, at)` for each batch of n keys starting at key
 * `at`. `staging` is read before every batch (a structure may add the region it stages into);
 * `room(at)`, when given, caps the next batch.
 */
export function eachBatch(
  staging: Staging | (() => Staging),
  keys: Keys,
  visit: (n: number, at: number) => void,
  room?: (at: number) => number,
): void {
  const count = countOf(keys);
  for (let at = 0; at < count; ) {
    const limit = room === undefined ? BATCH : room(at);
    const s = typeof staging === "function" ? staging() : staging;
    const n = "list" in keys ? s.encodeBatch(keys.list, at, limit) : s.stageSpans(keys.data, keys.spans, at, limit);
    visit(n, at);
    at += n;
  }
}

/**
 * Stages `keys` batch by batch, hashes each batch into 16-byte `digest`s at the staging's hash
 * region, and calls `visit(digests, n, at)`: the n digests are a view of the staging's memory,
 * valid until that memory grows, so a visit that may grow it copies them first.
 */
export function eachDigestBatch(
  staging: Staging | (() => Staging),
  keys: Keys,
  digest: Digest,
  visit: (digests: Uint8Array, n: number, at: number) => void,
): void {
  eachBatch(staging, keys, (n, at) =>
    visit((typeof staging === "function" ? staging() : staging).digestStaged(n, digest), n, at),
  );
}

/** The keys' 16-byte `digest`s packed in key order, in a new array (made batch by batch in `staging`). */
export function packedDigests(staging: Staging | (() => Staging), keys: Keys, digest: Digest): Uint8Array {
  const packed = new Uint8Array(16 * countOf(keys));
  eachDigestBatch(staging, keys, digest, (digests, n, at) => packed.set(digests.subarray(0, 16 * n), 16 * at));
  return packed;
}

/** Cuts `count` stored records (a serialized payload being loaded) into batches of at most BATCH and calls `visit(n, at)` for each. */
export function eachStoredBatch(count: number, visit: (n: number, at: number) => void): void {
  eachRun(count, BATCH, (n, at) => {
    visit(n, at);
    return n;
  });
}

/**
 * Cuts `count` items that are already numbers (fingerprints, sketches, records) into runs of at
 * most `size` and calls `visit(n, at)` for each; visit returns how many it took (fewer when its
 * kernel stopped early, 0 when it must make room first) and the next run starts there.
 */
export function eachRun(count: number, size: number, visit: (n: number, at: number) => number): void {
  for (let at = 0; at < count; ) at += visit(Math.min(size, count - at), at);
}

/**
 * The common case: per batch, `kernel(n)` writes one flag byte per key at the staging's out
 * region and returns a count; the flags are gathered into one array and the counts summed.
 */
export function batchFlags(
  staging: Staging,
  keys: Keys,
  kernel: (n: number) => number,
): { flags: Uint8Array; total: number } {
  const flags = new Uint8Array(countOf(keys));
  let total = 0;
  eachBatch(staging, keys, (n, at) => {
    total += kernel(n);
    staging.readOut(flags, at, n);
  });
  return { flags, total };
}

/**
 * Items that come one at a time, gathered into the caller's typed arrays and handed on a full
 * batch at a time: the caller writes item `at`, calls added(), and calls flush() at the end for the
 * last, partial batch. `visit(n)` gets the n items at indexes 0 .. n - 1.
 */
export class Accumulator {
  private n = 0;

  constructor(
    /** Items a batch holds. */
    readonly size: number,
    private readonly visit: (n: number) => void,
  ) {
    if (!(Number.isSafeInteger(size) && size > 0)) throw new RangeError(`a batch holds at least one item, not ${size}`);
  }

  /** Where the next item is to be written. */
  get at(): number {
    return this.n;
  }

  /** Counts the item written at `at`; hands the batch on when it is full. */
  added(): void {
    if (++this.n === this.size) this.flush();
  }

  /** Hands on the items gathered, if any. */
  flush(): void {
    const n = this.n;
    if (n === 0) return;
    this.n = 0;
    this.visit(n);
  }
}

/** The packed fingerprints whose flag is 1, in order. */
export function selectFlagged(packed: Uint8Array, flags: Uint8Array): Uint8Array {
  let count = 0;
  for (let i = 0; i < flags.length; i++) count += flags[i];
  const out = new Uint8Array(16 * count);
  if (packed.byteOffset % 4 === 0) {
    // Four words a fingerprint: no subarray made for each.
    const from = new Uint32Array(packed.buffer, packed.byteOffset, 4 * flags.length);
    const to = new Uint32Array(out.buffer);
    for (let i = 0, at = 0; i < flags.length; i++) {
      if (flags[i] === 0) continue;
      to[at] = from[4 * i];
      to[at + 1] = from[4 * i + 1];
      to[at + 2] = from[4 * i + 2];
      to[at + 3] = from[4 * i + 3];
      at += 4;
    }
    return out;
  }
  for (let i = 0, at = 0; i < flags.length; i++) {
    if (flags[i] === 1) {
      out.set(packed.subarray(16 * i, 16 * i + 16), at);
      at += 16;
    }
  }
  return out;
}
