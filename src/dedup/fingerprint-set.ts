// An exact set of keys kept as 128-bit XXH3 fingerprints in a bucketed table (a look-up reads one
// 64-byte cache line), the in-memory seen-set behind openSeenSet. Unlike Deduplicator it keeps no
// reference counts and no counting filter: 16 bytes a key at the table's load, which grows by 1.5x
// in place, so it stays under 32 bytes a key at every size, peaks included. Keys can be removed.
// The kernels are in assembly/fingerprint-set.ts and assembly/fingerprint-buckets.ts.
import { DisposedError, FilterTooLargeError, FormatError, InvalidArgumentError } from "../errors.js";
import { Kind, writeContainer } from "../format/container.js";
import { payloadOf, readStored, type Recipe } from "../format/recipe.js";
import * as check from "../validate.js";
import { Arena } from "../wasm/arena.js";
import { array, ArrayRegion } from "../wasm/array-region.js";
import { bucketsFor, LOG_PARTS, PARTS, partitionLimit, WIDE } from "../wasm/bucket-layout.js";
import { countOf, eachDigestBatch, eachRun, eachStoredBatch, keySpans, packedDigests, type Keys } from "../wasm/batch.js";
import { sharedEngine } from "../wasm/engine.js";
import { BATCH } from "../wasm/staging.js";

/** Options of FingerprintSet. */
export interface FingerprintSetOptions {
  /** Keys planned: the first table holds them without growing (default 4,096; it grows past any number). */
  readonly items?: number;
}

const GROWTH = 1.5;
const MIN_BUCKETS = 4;
/** Largest table: one wasm32 memory (4 GiB) less room for the batch regions. */
const MAX_TABLE_BYTES = 2 ** 32 - 2 ** 24;
const PARAM_BYTES = 16;
/** Fingerprint scheme in the serialized parameters: 1 = XXH3-128 of the key's bytes. */
const SCHEME_XXH3_128 = 1;

/** Format v1, kind 11: fingerprint scheme and set size; the payload is the 16-byte fingerprints. */
const RECIPE: Recipe<number> = {
  kind: Kind.FingerprintSet,
  what: "a fingerprint set",
  paramBytes: PARAM_BYTES,
  read(params, payloadBytes) {
    const scheme = params.getUint32(0, true);
    if (scheme !== SCHEME_XXH3_128) throw new FormatError(`fingerprint scheme ${scheme} is not known (1 = XXH3-128)`, "ERR_BAD_PARAMS");
    const size = params.getFloat64(8, true);
    if (!Number.isSafeInteger(size) || size < 0 || 16 * size !== payloadBytes) {
      throw new FormatError(`a set of ${size} fingerprints does not fit a payload of ${payloadBytes} bytes`, "ERR_BAD_PARAMS");
    }
    return size;
  },
};

/** An exact set of string or byte keys by 128-bit fingerprint. */
export class FingerprintSet {
  private arena: Arena | undefined;
  /** Keys per partition (u32 each; the kernels keep them). */
  private readonly counts: ArrayRegion;
  /** A batch's fingerprints, 16 bytes a key. */
  private readonly digests: ArrayRegion;
  /** A batch's result flags. */
  private readonly out: ArrayRegion;
  private readonly tablePtr: number;
  private buckets: number;

  constructor(options: FingerprintSetOptions = {}) {
    const opts = check.options<FingerprintSetOptions>("options", options);
    const items = check.positiveInteger("items", opts.items ?? 4096);
    this.buckets = Math.max(MIN_BUCKETS, bucketsFor(items, WIDE));
    if (PARTS * this.buckets * 64 > MAX_TABLE_BYTES) throw new FilterTooLargeError(PARTS * this.buckets * 64, "a fingerprint set is one WebAssembly memory");
    const arena = new Arena();
    // The table lies last: it grows in place.
    const regions = arena.place({ counts: array(4, PARTS), digests: array(16, BATCH), out: array(1, BATCH), table: this.tableBytes }, arena.base, "the fingerprint set");
    this.counts = regions.counts;
    this.digests = regions.digests;
    this.out = regions.out;
    this.tablePtr = regions.table;
    this.arena = arena;
  }

  /** Adds one key; true when it was new. */
  add(key: string | Uint8Array): boolean {
    return this.addMany([check.key("key", key)])[0] === 1;
  }

  /** True when the key is in the set. */
  has(key: string | Uint8Array): boolean {
    return this.hasMany([check.key("key", key)])[0] === 1;
  }

  /** Removes one key; true when it was there. */
  remove(key: string | Uint8Array): boolean {
    return this.removeMany([check.key("key", key)])[0] === 1;
  }

  /** Adds keys in order; out[i] = 1 when keys[i] was new (a repeat inside the batch is not). */
  addMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    return this.each({ list: keys }, (_arena, n, out, at) => out.set(this.addStaged(n), at));
  }

  /** Adds keys given as spans of one buffer (key i is data[spans[2i] .. spans[2i + 1]), spans ascending); out[i] = 1 when new. */
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.each(keySpans(data, spans), (_arena, n, out, at) => out.set(this.addStaged(n), at));
  }

  /** Adds the n fingerprints in the digest region, growing the table whenever the kernel stops at its load limit; the flags (1: new) stay valid until the next call. */
  private addStaged(n: number): Uint8Array {
    eachRun(n, n, (left, done) => {
      const limit = partitionLimit(this.buckets, WIDE);
      const took = this.live().k.setAddMany(this.tablePtr, LOG_PARTS, this.buckets, this.counts.ptr, limit, this.digests.at(done), left, this.out.at(done), WIDE.bytes);
      if (took < left) this.grow();
      return took;
    });
    return this.out.bytes(this.live().u8, 0, n);
  }

  /** out[i] = 1 when keys[i] is in the set. */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    return this.each({ list: keys }, (arena, n, out, at) => {
      arena.k.setHasMany(this.tablePtr, LOG_PARTS, this.buckets, this.digests.ptr, n, this.out.ptr, WIDE.bytes);
      this.out.copyOut(arena.u8, out, at, n);
    });
  }

  /** Removes keys; out[i] = 1 when keys[i] was there (a repeat inside the batch finds it gone). */
  removeMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    return this.each({ list: keys }, (arena, n, out, at) => {
      arena.k.setRemoveMany(this.tablePtr, LOG_PARTS, this.buckets, this.counts.ptr, this.digests.ptr, n, this.out.ptr, WIDE.bytes);
      this.out.copyOut(arena.u8, out, at, n);
    });
  }

  /**
   * The packed 16-byte fingerprints (XXH3-128 of each key's bytes) this set keeps for keys: what
   * addFingerprints takes, so a caller can hash in one place and store in another (a Durable Object).
   */
  static fingerprintMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    return packedDigests(sharedEngine().staging, { list: keys }, "xxh128");
  }


  /** Adds packed 16-byte fingerprints in order; out[i] = 1 when fingerprint i was new. */
  addFingerprints(packed: Uint8Array): Uint8Array {
    const count = fingerprintCount(packed);
    const out = new Uint8Array(count);
    eachStoredBatch(count, (n, at) => {
      this.digests.copyIn(this.live().u8, packed.subarray(16 * at, 16 * (at + n)));
      out.set(this.addStaged(n), at);
    });
    return out;
  }

  /** out[i] = 1 when the i-th packed 16-byte fingerprint is in the set. */
  hasFingerprints(packed: Uint8Array): Uint8Array {
    return this.eachPacked(packed, (k, n) => k.setHasMany(this.tablePtr, LOG_PARTS, this.buckets, this.digests.ptr, n, this.out.ptr, WIDE.bytes));
  }

  /** Removes packed 16-byte fingerprints in order; out[i] = 1 when fingerprint i was there (a repeat finds it gone). */
  removeFingerprints(packed: Uint8Array): Uint8Array {
    return this.eachPacked(packed, (k, n) => k.setRemoveMany(this.tablePtr, LOG_PARTS, this.buckets, this.counts.ptr, this.digests.ptr, n, this.out.ptr, WIDE.bytes));
  }

  /** Copies packed fingerprints into the digest region a batch at a time, runs `kernel` on each, and gathers its flags. */
  private eachPacked(packed: Uint8Array, kernel: (k: Arena["k"], n: number) => void): Uint8Array {
    const count = fingerprintCount(packed);
    const out = new Uint8Array(count);
    eachStoredBatch(count, (n, at) => {
      const arena = this.live();
      this.digests.copyIn(arena.u8, packed.subarray(16 * at, 16 * (at + n)));
      kernel(arena.k, n);
      this.out.copyOut(arena.u8, out, at, n);
    });
    return out;
  }

  /** Keys in the set. */
  get size(): number {
    return this.counts.view(this.live().u8, Uint32Array).reduce((total, count) => total + count, 0);
  }

  /** Bytes of WebAssembly memory held (the table, the batch regions and any slack of the last growth). */
  get byteLength(): number {
    return this.live().k.memory.buffer.byteLength;
  }

  /** Removes every key (the table keeps its size). */
  clear(): void {
    const arena = this.live();
    this.counts.fill(arena.u8);
    this.table().fill(arena.u8);
  }

  /** The set in format v1: its fingerprints, 16 bytes each, in table order. */
  serialize(): Uint8Array {
    const arena = this.live();
    const size = this.size;
    const params = new Uint8Array(PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setUint32(0, SCHEME_XXH3_128, true);
    view.setFloat64(8, size, true);
    // The buckets' 16-byte slots, an all-zero slot empty.
    const slots = new ArrayRegion(this.tablePtr, 16, this.tableBytes / 16);
    const payload = slots.packed(arena.u8, size);
    return writeContainer(Kind.FingerprintSet, params, payload, (bytes) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it"));
  }

  /** Loads a set written by serialize(); a FormatError subclass on bad bytes. */
  static deserialize(bytes: Uint8Array): FingerprintSet {
    const stored = readStored(bytes, RECIPE);
    const size = stored.params;
    const payload = payloadOf(stored);
    const set = new FingerprintSet({ items: Math.max(1, size) });
    try {
      let added = 0;
      eachStoredBatch(size, (n, at) => {
        set.digests.copyIn(set.live().u8, payload.subarray(16 * at, 16 * (at + n)));
        const flags = set.addStaged(n);
        for (let j = 0; j < n; j++) added += flags[j];
      });
      if (added !== size) throw new FormatError(`${size - added} of ${size} stored fingerprints are repeated`, "ERR_BAD_PARAMS");
    } catch (error) {
      set.dispose();
      throw error;
    }
    return set;
  }

  /** Releases the memory; later calls throw DisposedError. */
  dispose(): void {
    this.arena = undefined;
  }

  /** @internal Disposes the set and hands its instance, memory touched already, to another use (a disk store's compaction at close). */
  releaseArena(): Arena | undefined {
    const arena = this.arena;
    this.dispose();
    return arena;
  }

  private get tableBytes(): number {
    return PARTS * this.buckets * 64;
  }

  /** The table as it is now: PARTS x buckets cache-line buckets (it grows, so it is re-made each time). */
  private table(): ArrayRegion {
    return new ArrayRegion(this.tablePtr, 64, PARTS * this.buckets);
  }

  private live(): Arena {
    if (this.arena === undefined) throw new DisposedError("FingerprintSet");
    return this.arena;
  }

  /** Fingerprints keys batch by batch in the shared engine, copies the digests here, and visits each batch. */
  private each(keys: Keys, visit: (arena: Arena, n: number, out: Uint8Array, at: number) => void): Uint8Array {
    this.live();
    const out = new Uint8Array(countOf(keys));
    eachDigestBatch(sharedEngine().staging, keys, "xxh128", (digests, n, at) => {
      const arena = this.live();
      this.digests.copyIn(arena.u8, digests);
      visit(arena, n, out, at);
    });
    return out;
  }

  /** Grows every partition by 1.5x in place; the scratch of one old partition lies after the new table. */
  private grow(): void {
    const arena = this.live();
    const old = this.buckets;
    const next = Math.ceil(old * GROWTH);
    const newBytes = PARTS * next * 64;
    if (newBytes > MAX_TABLE_BYTES) throw new FilterTooLargeError(newBytes, "the fingerprint set has outgrown one WebAssembly memory");
    const { scratch } = arena.place({ table: newBytes, scratch: old * 64 }, this.tablePtr, "the fingerprint set");
    arena.k.bucketsGrow(this.tablePtr, LOG_PARTS, old, next, scratch, WIDE.bytes);
    this.buckets = next;
  }
}

/** How many 16-byte fingerprints `packed` holds; it must be a Uint8Array of a multiple of 16 bytes. */
function fingerprintCount(packed: Uint8Array): number {
  if (!(packed instanceof Uint8Array) || packed.length % 16 !== 0) {
    throw new InvalidArgumentError("fingerprints", packed, "a Uint8Array of packed 16-byte fingerprints");
  }
  return packed.length / 16;
}
