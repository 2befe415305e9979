// An exact set of keys kept as 128-bit XXH3 fingerprints in a bucketed table (a look-up reads one
// 64-byte cache line), the in-memory seen-set behind openSeenSet. Unlike Deduplicator it keeps no
// reference counts and no counting filter: 16 bytes a key at the table's load, which grows by 1.5x
// in place, so it stays under 32 bytes a key at every size, peaks included. Keys can be removed.
// The kernels are in assembly/fingerprint-set.ts and assembly/fingerprint-buckets.ts.
//
// One WebAssembly memory holds a table of at most 4 GiB: its last growth that fits stops at about
// 160 M keys (161 M measured). Past that the set is several shards
// (fingerprint-shard.ts), each in its own memory, found by the fingerprint's high-word bits just
// below the partition bits (so a shard's keys still spread over all its partitions and buckets):
// extendible hashing, a directory of 2^depth entries, a full shard split in two by one more bit.
// Below one memory there is one shard and no routing: the path is the one-table path it was.
// A set starts as that one shard, `items` sizing it up to one memory's table; the others are made
// as shards fill, so a large plan reserves one memory, not all it may come to need.
import { DisposedError, FilterTooLargeError, FormatError, InvalidArgumentError } from "../errors.js";
import { Kind, writeContainer } from "../format/container.js";
import { payloadOf, readStored, type Recipe } from "../format/recipe.js";
import * as check from "../validate.js";
import type { Arena } from "../wasm/arena.js";
import { LOG_PARTS } from "../wasm/bucket-layout.js";
import { countOf, eachDigestBatch, keySpans, packedDigests, type Keys } from "../wasm/batch.js";
import { sharedEngine } from "../wasm/engine.js";
import { BATCH } from "../wasm/staging.js";
import { checkPlannedKeys, ROUTING_BITS } from "./fingerprint-bounds.js";
import { FingerprintShard } from "./fingerprint-shard.js";

/** Options of FingerprintSet. */
export interface FingerprintSetOptions {
  /**
   * Keys planned: the first table holds them without growing, up to one WebAssembly memory's
   * (default 4,096; it grows past any number). A plan past the machine's memory, or past what
   * 2^26 memories hold, is refused at once (FilterTooLargeError naming it).
   */
  readonly items?: number;
}

const PARAM_BYTES = 16;
/** Keys each half of a split shard is made for, as a share of the full shard's: room to grow before its first growth. */
const SPLIT_ROOM = 0.625;

/** What a batch does to the set. */
type Op = "add" | "has" | "remove";
/** Fingerprint scheme in the serialized parameters: 1 = XXH3-128 of the key's bytes. */
const SCHEME_XXH3_128 = 1;

/** Format v1, kind 11: fingerprint scheme and set size; the payload is the 16-byte fingerprints. */
const RECIPE: Recipe<number> = {
  kind: Kind.FingerprintSet,
  what: "a fingerprint set",
  paramBytes: PARAM_BYTES,
  read(params, payloadBytes) {
    const scheme = params.getUint32(0, true);
    if (scheme !== SCHEME_XXH3_128)
      throw new FormatError(`fingerprint scheme ${scheme} is not known (1 = XXH3-128)`, "ERR_BAD_PARAMS");
    const size = params.getFloat64(8, true);
    if (!Number.isSafeInteger(size) || size < 0 || 16 * size !== payloadBytes) {
      throw new FormatError(
        `a set of ${size} fingerprints does not fit a payload of ${payloadBytes} bytes`,
        "ERR_BAD_PARAMS",
      );
    }
    return size;
  },
};

/** An exact set of string or byte keys by 128-bit fingerprint. */
export class FingerprintSet {
  /** The directory: entry i holds the keys whose `depth` routing bits are i (a shard may fill several entries). */
  private shards: FingerprintShard[];
  private depth: number;
  private disposed = false;

  constructor(options: FingerprintSetOptions = {}) {
    const opts = check.options<FingerprintSetOptions>("options", options);
    const items = check.positiveInteger("items", opts.items ?? 4096);
    checkPlannedKeys(items);
    // One shard, at most one memory's table: the others are made as it fills (split), never all up front.
    this.depth = 0;
    this.shards = [new FingerprintShard(items, 0)];
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
    return this.each({ list: keys }, "add");
  }

  /** Adds keys given as spans of one buffer (key i is data[spans[2i] .. spans[2i + 1]), spans ascending); out[i] = 1 when new. */
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.each(keySpans(data, spans), "add");
  }

  /** out[i] = 1 when keys[i] is in the set. */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    return this.each({ list: keys }, "has");
  }

  /** Removes keys; out[i] = 1 when keys[i] was there (a repeat inside the batch finds it gone). */
  removeMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    return this.each({ list: keys }, "remove");
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
    return this.packedOp(packed, "add");
  }

  /** out[i] = 1 when the i-th packed 16-byte fingerprint is in the set. */
  hasFingerprints(packed: Uint8Array): Uint8Array {
    return this.packedOp(packed, "has");
  }

  /** Removes packed 16-byte fingerprints in order; out[i] = 1 when fingerprint i was there (a repeat finds it gone). */
  removeFingerprints(packed: Uint8Array): Uint8Array {
    return this.packedOp(packed, "remove");
  }

  /** Keys in the set. */
  get size(): number {
    return this.parts().reduce((total, shard) => total + shard.size, 0);
  }

  /** Bytes of WebAssembly memory held (the tables, the batch regions and any slack of the last growth), over every memory. */
  get byteLength(): number {
    return this.parts().reduce((total, shard) => total + shard.byteLength, 0);
  }

  /** WebAssembly memories the set spans. */
  get memories(): number {
    return this.parts().length;
  }

  /** Removes every key (the tables keep their size). */
  clear(): void {
    for (const shard of this.parts()) shard.clear();
  }

  /** The set in format v1: its fingerprints, 16 bytes each, in table order (shard after shard). */
  serialize(): Uint8Array {
    const parts = this.parts();
    const size = this.size;
    const params = new Uint8Array(PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setUint32(0, SCHEME_XXH3_128, true);
    view.setFloat64(8, size, true);
    const tooLarge = (bytes: number) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it");
    if (16 * size > 2 ** 32) throw tooLarge(16 * size);
    const payload = new Uint8Array(16 * size);
    let at = 0;
    for (const shard of parts) {
      shard.eachPacked((packed) => {
        payload.set(packed, at);
        at += packed.length;
      });
    }
    return writeContainer(Kind.FingerprintSet, params, payload, tooLarge);
  }

  /** Loads a set written by serialize(); a FormatError subclass on bad bytes. */
  static deserialize(bytes: Uint8Array): FingerprintSet {
    const stored = readStored(bytes, RECIPE);
    const size = stored.params;
    const payload = payloadOf(stored);
    const set = new FingerprintSet({ items: Math.max(1, size) });
    try {
      const flags = set.addFingerprints(payload.subarray(0, 16 * size));
      let added = 0;
      for (let i = 0; i < size; i++) added += flags[i];
      if (added !== size)
        throw new FormatError(`${size - added} of ${size} stored fingerprints are repeated`, "ERR_BAD_PARAMS");
    } catch (error) {
      set.dispose();
      throw error;
    }
    return set;
  }

  /** Releases the memory; later calls throw DisposedError. */
  dispose(): void {
    for (const shard of this.disposed ? [] : this.parts()) shard.dispose();
    this.disposed = true;
  }

  /** @internal Visits the fingerprints held, packed 16 bytes each, a partition of a shard at a time (none copied whole). */
  eachPacked(visit: (packed: Uint8Array) => void): void {
    for (const shard of this.parts()) shard.eachPacked(visit);
  }

  /** @internal Disposes the set and hands the instance of its largest memory, touched already, to another use (a disk store's compaction at close). */
  releaseArena(): Arena | undefined {
    if (this.disposed) return undefined;
    const largest = this.parts().reduce((a, b) => (b.byteLength > a.byteLength ? b : a));
    const arena = largest.releaseArena();
    this.dispose();
    return arena;
  }

  /** The distinct shards. */
  private parts(): FingerprintShard[] {
    if (this.disposed) throw new DisposedError("FingerprintSet");
    return this.depth === 0 ? this.shards : [...new Set(this.shards)];
  }

  /** Fingerprints keys batch by batch in the shared engine and runs `op` on each batch. */
  private each(keys: Keys, op: Op): Uint8Array {
    this.parts();
    const out = new Uint8Array(countOf(keys));
    eachDigestBatch(sharedEngine().staging, keys, "xxh128", (digests, n, at) =>
      this.run(op, digests.subarray(0, 16 * n), null, out, at),
    );
    return out;
  }

  /** Runs `op` on packed fingerprints given by a caller. */
  private packedOp(packed: Uint8Array, op: Op): Uint8Array {
    const out = new Uint8Array(fingerprintCount(packed));
    this.parts();
    this.run(op, packed, null, out, 0);
    return out;
  }

  /**
   * Runs `op` on packed fingerprints in order, the flag of the i-th written to out[at + i] (or to
   * out[positions[i]]): each shard gets its keys in their order, so a repeat inside a batch meets
   * its first occurrence in the same shard.
   */
  private run(op: Op, packed: Uint8Array, positions: Int32Array | null, out: Uint8Array, at: number): void {
    if (this.depth === 0) {
      this.runOn(this.shards[0], op, packed, positions, out, at);
      return;
    }
    const n = packed.length / 16;
    const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
    const shift = 32 - this.depth;
    const groups = new Map<FingerprintShard, number[]>();
    for (let i = 0; i < n; i++) {
      const shard = this.shards[(view.getUint32(16 * i + 12, true) << LOG_PARTS) >>> shift];
      const group = groups.get(shard);
      if (group === undefined) groups.set(shard, [i]);
      else group.push(i);
    }
    for (const [shard, group] of groups) {
      const sub = new Uint8Array(16 * group.length);
      const where = new Int32Array(group.length);
      group.forEach((i, j) => {
        sub.set(packed.subarray(16 * i, 16 * i + 16), 16 * j);
        where[j] = positions === null ? at + i : positions[i];
      });
      this.runOn(shard, op, sub, where, out, 0);
    }
  }

  /** Runs `op` on packed fingerprints all of one shard, a batch at a time; a shard that outgrows its memory is split, and the rest routed again. */
  private runOn(
    shard: FingerprintShard,
    op: Op,
    packed: Uint8Array,
    positions: Int32Array | null,
    out: Uint8Array,
    at: number,
  ): void {
    const n = packed.length / 16;
    for (let done = 0; done < n; ) {
      const m = Math.min(BATCH, n - done);
      shard.stage(packed.subarray(16 * done, 16 * (done + m)));
      let took = m;
      if (op === "add") took = shard.addStaged(m);
      else if (op === "has") shard.has(0, m);
      else shard.remove(m);
      const flags = shard.flags(took);
      if (positions === null) out.set(flags, at + done);
      else for (let j = 0; j < took; j++) out[positions[done + j]] = flags[j];
      done += took;
      if (took < m) {
        this.split(shard);
        const rest =
          positions === null
            ? Int32Array.from({ length: n - done }, (_, j) => at + done + j)
            : positions.subarray(done);
        this.run(op, packed.subarray(16 * done), rest, out, 0);
        return;
      }
    }
  }

  /** Splits a shard that is as large as one memory allows into two by its next routing bit (the directory doubles when the shard used all its bits). */
  private split(full: FingerprintShard): void {
    const d = full.depth;
    if (d === this.depth) {
      if (d >= ROUTING_BITS)
        throw new FilterTooLargeError(
          2 ** 32 * 2 ** d,
          "the fingerprint set has more shards than its routing bits tell apart",
        );
      this.shards = this.shards.flatMap((s) => [s, s]);
      this.depth += 1;
    }
    const items = Math.ceil(full.size * SPLIT_ROOM);
    const halves = [new FingerprintShard(items, d + 1), new FingerprintShard(items, d + 1)];
    for (let i = 0; i < this.shards.length; i++)
      if (this.shards[i] === full) this.shards[i] = halves[(i >>> (this.depth - d - 1)) & 1];
    full.eachPacked((packed) => this.run("add", packed, null, new Uint8Array(packed.length / 16), 0));
    full.dispose();
  }
}

/** How many 16-byte fingerprints `packed` holds; it must be a Uint8Array of a multiple of 16 bytes. */
function fingerprintCount(packed: Uint8Array): number {
  if (!(packed instanceof Uint8Array) || packed.length % 16 !== 0) {
    throw new InvalidArgumentError("fingerprints", packed, "a Uint8Array of packed 16-byte fingerprints");
  }
  return packed.length / 16;
}
