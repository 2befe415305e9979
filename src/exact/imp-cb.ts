// Exact dedup (IMP-CB): a key's MD5 fingerprint is checked against a counting filter first, and
// only a "maybe" reads the exact fingerprint table, so new keys cost no table look-up and nothing
// unique is ever dropped. Counting filter and table share one WASM instance; the table grows by
// rehash. The kernels are in assembly/fingerprint-table.ts.
import { FilterTooLargeError, FormatError, InvalidArgumentError, DisposedError } from "../errors.js";
import { Kind, MAX_BYTE_ARRAY, writeContainer } from "../format/container.js";
import { fromStoredParams, payloadOf, readStored, type Recipe } from "../format/recipe.js";
import { optimalBloom } from "../sizing/bloom.js";
import * as check from "../validate.js";
import { Arena } from "../wasm/arena.js";
import { array, ArrayRegion } from "../wasm/array-region.js";
import { sharedEngine } from "../wasm/engine.js";
import { KernelRecord, u64 } from "../wasm/record.js";
import { countOf, eachDigestBatch, eachRun, eachStoredBatch, type Keys, packedDigests } from "../wasm/batch.js";
import { BATCH } from "../wasm/staging.js";

/** Options of Deduplicator. */
export interface DeduplicatorOptions {
  /** Distinct keys planned; sizes the counting filter and the first table. More may come. */
  readonly items: number;
  /** Rate of "maybe" answers for new keys, i.e. of table look-ups (default 0.01); never of errors. */
  readonly fpRate?: number;
  /** Bits per counter: 2, 4 (default) or 8. */
  readonly counterBits?: number;
  /** Explicit counters (m) and hashes (k) instead of sizing from fpRate, e.g. m/n = 20, k = 8. */
  readonly counters?: number;
  readonly hashes?: number;
  /**
   * md5 (default): MD5 of the key, comparable with other MD5-keyed stores. xxh64x2: XXH64 with
   * two seeds, 128 bits, several times faster, for callers who need no MD5 compatibility.
   */
  readonly fingerprint?: "md5" | "xxh64x2";
}

/** Counts kept by a Deduplicator. */
export interface DedupStats {
  /** Keys checked. */
  readonly seen: number;
  /** Keys that were new. */
  readonly new: number;
  /** Keys that were duplicates. */
  readonly duplicates: number;
  /** Table look-ups made (the counting filter said "maybe"). */
  readonly lookups: number;
  /** Table look-ups avoided (a zero counter proved the key new). */
  readonly lookupsAvoided: number;
  /** Look-ups that found nothing: new keys the counting filter could not rule out. */
  readonly lookupsForNew: number;
}

/** Bytes of one serialized entry (format v1): the 16-byte fingerprint and its u32 reference count. */
const ENTRY_BYTES = 20;
/** Where an entry's reference count lies: after the fingerprint. */
const COUNT_AT = 16;
const DEDUP_PARAM_BYTES = 32;
/** Fingerprint schemes in the serialized parameters. */
const SCHEME_MD5 = 1;
const SCHEME_XXH64X2 = 2;

/**
 * Format v1, kind 12: fingerprint scheme, counting-filter shape, entry count; the payload is the entries.
 * The counting filter is rebuilt from the entries, not stored, so the payload cannot confirm its
 * `counters` (a dedup planned for 1e9 keys and saved with three is 124 bytes too, and so is a
 * forgery). A load therefore rebuilds a filter of at most what the payload justifies: the stored
 * counters, or fewer where they would take more than REBUILT_FILTER_PER_PAYLOAD bytes a payload
 * byte (at least REBUILT_FILTER_FLOOR bytes); the hashes are kept. The filter only spares table
 * look-ups, so a smaller one changes no answer; 124 bytes reserve a few MiB, not 2 GiB.
 */
const RECIPE: Recipe<{ options: DeduplicatorOptions; entries: number }> = {
  kind: Kind.Deduplicator,
  what: "a deduplicator",
  paramBytes: DEDUP_PARAM_BYTES,
  read(params, payloadBytes) {
    const scheme = params.getUint32(0, true);
    if (scheme !== SCHEME_MD5 && scheme !== SCHEME_XXH64X2)
      throw new FormatError(`fingerprint scheme ${scheme} is not known (1 = MD5, 2 = XXH64x2)`, "ERR_BAD_PARAMS");
    const entries = params.getFloat64(24, true);
    if (!Number.isSafeInteger(entries) || entries < 0 || ENTRY_BYTES * entries !== payloadBytes) {
      throw new FormatError(`${entries} entries do not fit a payload of ${payloadBytes} bytes`, "ERR_BAD_PARAMS");
    }
    const counterBits = params.getUint32(4, true);
    const counters = params.getFloat64(16, true);
    if (!Number.isSafeInteger(counters) || counters < 1 || counters > 2 ** 32)
      throw new FormatError(`counters must be an integer from 1 to 2^32, got ${counters}`, "ERR_BAD_PARAMS");
    const options: DeduplicatorOptions = {
      items: Math.max(1, entries),
      counters: Math.min(counters, rebuiltCounters(payloadBytes, counterBits)),
      hashes: params.getUint32(8, true),
      counterBits,
      fingerprint: scheme === SCHEME_MD5 ? "md5" : "xxh64x2",
    };
    return { options, entries };
  },
};
/** Most bytes a loaded counting filter takes per payload byte: a plan 40x past the entries' fill at 1e-6 still loads whole. */
const REBUILT_FILTER_PER_PAYLOAD = 64;
/** Bytes a loaded counting filter may take whatever the payload: about 870,000 keys at 1%, 4-bit. */
const REBUILT_FILTER_FLOOR = 4 * 2 ** 20;

/** Most counters of `bits` bits a load rebuilds for a payload of `payloadBytes` (a counter count at least 1). */
function rebuiltCounters(payloadBytes: number, bits: number): number {
  const bytes = Math.max(REBUILT_FILTER_FLOOR, REBUILT_FILTER_PER_PAYLOAD * payloadBytes);
  return Math.max(1, Math.floor((bytes * 8) / Math.max(1, bits)));
}

const MAX_LOAD = 0.8;
/** The counts of the kernels' stats block (DEDUP_* offsets). */
type StatField = "lookups" | "avoided" | "entries" | "lookupsNew";

/** Exact deduplication of keys by 128-bit fingerprint (MD5 by default), fronted by a counting Bloom filter. */
export class Deduplicator {
  private arena: Arena | undefined;
  private readonly m: number;
  private readonly k: number;
  private readonly bits: number;
  private readonly countersPtr: number;
  /** A batch's fingerprints, 16 bytes a key. */
  private readonly digests: ArrayRegion;
  /** A batch's flags (1: new, or removed). */
  private readonly out: ArrayRegion;
  /** A batch's reference counts, u32 a key. */
  private readonly refs: ArrayRegion;
  /** The kernels' u64 counts of look-ups and entries. */
  private readonly statsBlock: KernelRecord<StatField>;
  private tablePtr: number;
  private capacity: number;
  private seen = 0;
  private fresh = 0;
  private readonly xxh: boolean;

  constructor(options: DeduplicatorOptions) {
    const opts = check.options<DeduplicatorOptions>("options", options);
    const fingerprint = opts.fingerprint ?? "md5";
    if (fingerprint !== "md5" && fingerprint !== "xxh64x2")
      throw new InvalidArgumentError("fingerprint", opts.fingerprint, '"md5" or "xxh64x2"');
    this.xxh = fingerprint === "xxh64x2";
    const items = check.positiveInteger("items", opts.items);
    this.bits = opts.counterBits ?? 4;
    if (![2, 4, 8].includes(this.bits)) throw new InvalidArgumentError("counterBits", opts.counterBits, "2, 4 or 8");
    if (opts.counters !== undefined || opts.hashes !== undefined) {
      this.m = check.positiveInteger("counters", opts.counters, 2 ** 32);
      this.k = check.integerInRange("hashes", opts.hashes, 1, 64);
    } else {
      const size = optimalBloom({ items, fpRate: check.probability("fpRate", opts.fpRate ?? 0.01) });
      this.m = size.bits;
      this.k = size.hashes;
    }
    this.capacity = Math.max(1024, Math.ceil(items / MAX_LOAD));
    const arena = new Arena();
    // The table lies last: it is the region that grows.
    const regions = arena.place(
      {
        counters: Math.ceil((this.m * this.bits) / 8),
        digests: array(16, BATCH),
        out: array(1, BATCH),
        refs: array(4, BATCH),
        stats: arena.k.DEDUP_STATS_BYTES.value,
        table: this.capacity * arena.k.TABLE_SLOT_BYTES.value,
      },
      arena.base,
      "the deduplicator",
    );
    this.countersPtr = regions.counters;
    this.digests = regions.digests;
    this.out = regions.out;
    this.refs = regions.refs;
    this.statsBlock = new KernelRecord(regions.stats, {
      lookups: u64(arena.k.DEDUP_LOOKUPS),
      avoided: u64(arena.k.DEDUP_AVOIDED),
      entries: u64(arena.k.DEDUP_ENTRIES),
      lookupsNew: u64(arena.k.DEDUP_LOOKUPS_NEW),
    });
    this.tablePtr = regions.table;
    this.arena = arena;
  }

  /** Checks one key: new (stored with one reference) or a duplicate (one more reference). */
  check(key: string | Uint8Array): { isNew: boolean; count: number } {
    const { isNew, counts } = this.checkMany([check.key("key", key)]);
    return { isNew: isNew[0] === 1, count: counts[0] };
  }

  /** Checks many keys in order (a repeat inside the batch is a duplicate); isNew[i] = 1 when new. */
  checkMany(keys: readonly (string | Uint8Array)[]): { isNew: Uint8Array; counts: Uint32Array } {
    check.keyList("keys", keys);
    return this.run({ list: keys }, false);
  }

  /** Checks keys given as spans of one buffer (see BloomFilter.addSpans). */
  checkSpans(data: Uint8Array, spans: ArrayLike<number>): { isNew: Uint8Array; counts: Uint32Array } {
    check.spans(data, spans);
    return this.run({ data, spans }, false);
  }

  /** Read-only: out[i] = 1 when keys[i] is stored (it has a reference); counts nothing. */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    const out = new Uint8Array(keys.length);
    this.eachFingerprinted({ list: keys }, (n, i) => {
      const arena = this.live();
      arena.k.dedupCounts(this.tablePtr, this.capacity, this.digests.ptr, n, this.refs.ptr, 0);
      const refs = this.refs.view(arena.u8, Uint32Array, 0, n);
      for (let j = 0; j < n; j++) out[i + j] = refs[j] > 0 ? 1 : 0;
    });
    return out;
  }

  /**
   * The deduplicator in format v1: its parameters, then each stored fingerprint with its
   * reference count (20 bytes a key). The counting filter is not stored: it is rebuilt from the
   * fingerprints on load, so no stored counter can hide a key.
   */
  serialize(): Uint8Array {
    const arena = this.live();
    const entries = this.size;
    const params = new Uint8Array(DEDUP_PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setUint32(0, this.xxh ? SCHEME_XXH64X2 : SCHEME_MD5, true);
    view.setUint32(4, this.bits, true);
    view.setUint32(8, this.k, true);
    view.setFloat64(16, this.m, true);
    view.setFloat64(24, entries, true);
    const tooLarge = (bytes: number) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it");
    if (ENTRY_BYTES * entries > MAX_BYTE_ARRAY) throw tooLarge(ENTRY_BYTES * entries);
    // A table slot (TABLE_SLOT_BYTES, as the module says) is the entry: fingerprint, then its count (0: empty).
    const slots = new ArrayRegion(this.tablePtr, arena.k.TABLE_SLOT_BYTES.value, this.capacity);
    if (slots.size !== ENTRY_BYTES)
      throw new Error(`a table slot of ${slots.size} bytes is not a format v1 entry of ${ENTRY_BYTES}`);
    return writeContainer(Kind.Deduplicator, params, slots.packed(arena.u8, entries, COUNT_AT), tooLarge);
  }

  /** Loads a deduplicator written by serialize(); a FormatError subclass on bad bytes. */
  static deserialize(bytes: Uint8Array): Deduplicator {
    const stored = readStored(bytes, RECIPE);
    const { options, entries } = stored.params;
    const payload = payloadOf(stored);
    const dedup = fromStoredParams(RECIPE.what, () => new Deduplicator(options));
    try {
      const counts = new Uint32Array(BATCH);
      const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
      eachStoredBatch(entries, (n, i) => {
        let u8 = dedup.live().u8;
        for (let j = 0; j < n; j++) {
          const at = ENTRY_BYTES * (i + j);
          dedup.digests.copyIn(u8, payload.subarray(at, at + 16), j);
          counts[j] = view.getUint32(at + 16, true);
          if (counts[j] === 0) throw new FormatError(`entry ${i + j} has no reference`, "ERR_BAD_PARAMS");
        }
        // Inserted as new keys (the kernel raises their counters), then given their stored counts.
        dedup.checkDigests(n);
        u8 = dedup.live().u8;
        const added = dedup.out.bytes(u8, 0, n);
        for (let j = 0; j < n; j++)
          if (added[j] !== 1) throw new FormatError(`entry ${i + j} repeats an earlier fingerprint`, "ERR_BAD_PARAMS");
        dedup.refs.copyIn(u8, counts.subarray(0, n));
        dedup.live().k.dedupCounts(dedup.tablePtr, dedup.capacity, dedup.digests.ptr, n, dedup.refs.ptr, 1);
      });
    } catch (error) {
      dedup.dispose();
      throw error;
    }
    // Loading is not use: the counts of keys seen and look-ups start again from zero.
    dedup.seen = 0;
    dedup.fresh = 0;
    for (const count of ["lookups", "avoided", "lookupsNew"] as const) dedup.statsBlock.set(dedup.live().u8, count, 0);
    return dedup;
  }

  /** Drops one reference of a key; at the last, the key is forgotten. removed is false for an unknown key. */
  remove(key: string | Uint8Array): { removed: boolean; count: number } {
    const { isNew, counts } = this.run({ list: [check.key("key", key)] }, true);
    return { removed: isNew[0] === 1, count: counts[0] };
  }

  /** Drops one reference of each key; removed[i] = 1 when keys[i] was known, counts[i] = references left. */
  removeMany(keys: readonly (string | Uint8Array)[]): { removed: Uint8Array; counts: Uint32Array } {
    check.keyList("keys", keys);
    const { isNew, counts } = this.run({ list: keys }, true);
    return { removed: isNew, counts };
  }

  /** Distinct keys stored. */
  get size(): number {
    return this.stat("entries");
  }

  /** Counts of keys seen, new and duplicate, and of table look-ups made and avoided. */
  get stats(): DedupStats {
    return {
      seen: this.seen,
      new: this.fresh,
      duplicates: this.seen - this.fresh,
      lookups: this.stat("lookups"),
      lookupsAvoided: this.stat("avoided"),
      lookupsForNew: this.stat("lookupsNew"),
    };
  }

  /** Counters (m), hashes (k) and bits per counter of the front filter. */
  get filter(): { counters: number; hashes: number; counterBits: number } {
    return { counters: this.m, hashes: this.k, counterBits: this.bits };
  }

  /** Bytes of WebAssembly memory held (filter, table and any slack left by growth). */
  get byteLength(): number {
    return this.live().k.memory.buffer.byteLength;
  }

  /** Releases the memory; later calls throw DisposedError. */
  dispose(): void {
    this.arena = undefined;
  }

  private live(): Arena {
    if (this.arena === undefined) throw new DisposedError("Deduplicator");
    return this.arena;
  }

  /** Fingerprints keys in the shared engine batch by batch, copies each batch's digests into the digest region, and visits it. */
  private eachFingerprinted(keys: Keys, visit: (n: number, at: number) => void): void {
    eachDigestBatch(
      () => sharedEngine().staging,
      keys,
      this.xxh ? "xxh64x2" : "md5",
      (digests, n, at) => {
        this.digests.copyIn(this.live().u8, digests);
        visit(n, at);
      },
    );
  }

  /** One count of the kernels' stats block. */
  private stat(count: StatField): number {
    return this.statsBlock.get(this.live().u8, count);
  }

  /** Fingerprints the (already checked) keys in the shared engine batch by batch, then checks or removes them here. */
  private run(keys: Keys, removing: boolean): { isNew: Uint8Array; counts: Uint32Array } {
    const flags = new Uint8Array(countOf(keys));
    const counts = new Uint32Array(flags.length);
    this.eachFingerprinted(keys, (n, i) => this.decideStaged(n, i, removing, true, flags, counts));
    return { isNew: flags, counts };
  }

  /** The packed fingerprints of keys as this deduplicator makes them. @internal */
  fingerprintsOf(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    return packedDigests(() => sharedEngine().staging, { list: keys }, this.xxh ? "xxh64x2" : "md5");
  }

  /**
   * Checks (or drops one reference of) keys given by their packed fingerprints (fingerprintsOf),
   * counted in `stats` when `tally` (not for a store's records taken back in). @internal
   */
  applyFingerprints(packed: Uint8Array, removing: boolean, tally: boolean): { isNew: Uint8Array; counts: Uint32Array } {
    const flags = new Uint8Array(packed.length / 16);
    const counts = new Uint32Array(flags.length);
    for (let i = 0; i < flags.length; i += BATCH) {
      const n = Math.min(BATCH, flags.length - i);
      this.digests.copyIn(this.live().u8, packed.subarray(16 * i, 16 * (i + n)));
      this.decideStaged(n, i, removing, tally, flags, counts);
    }
    return { isNew: flags, counts };
  }

  /** Checks or removes the n staged fingerprints, their answers going to flags and counts from `i`. */
  private decideStaged(
    n: number,
    i: number,
    removing: boolean,
    tally: boolean,
    flags: Uint8Array,
    counts: Uint32Array,
  ): void {
    if (removing) {
      this.live().k.dedupRemove(
        this.countersPtr,
        this.m,
        this.k,
        this.bits,
        this.tablePtr,
        this.capacity,
        this.digests.ptr,
        n,
        this.out.ptr,
        this.refs.ptr,
        this.statsBlock.ptr,
      );
    } else {
      this.checkDigests(n);
    }
    const u8 = this.live().u8;
    this.out.copyOut(u8, flags, i, n);
    this.refs.copyOut(u8, counts, i, n);
    if (!removing && tally) {
      this.seen += n;
      for (let j = 0; j < n; j++) this.fresh += flags[i + j];
    }
  }

  /** dedupCheck of the n digests in the digest region, growing the table whenever it must. */
  private checkDigests(n: number): void {
    eachRun(n, n, (left, done) => {
      const limit = Math.floor(this.capacity * MAX_LOAD);
      const took = this.live().k.dedupCheck(
        this.countersPtr,
        this.m,
        this.k,
        this.bits,
        this.tablePtr,
        this.capacity,
        limit,
        this.digests.at(done),
        left,
        this.out.at(done),
        this.refs.at(done),
        this.statsBlock.ptr,
      );
      if (took < left) this.grow();
      return took;
    });
  }

  /** Doubles the table: rehash into fresh memory after it, then move it back to its place. */
  private grow(): void {
    const arena = this.live();
    const capacity = this.capacity * 2;
    const slotBytes: number = arena.k.TABLE_SLOT_BYTES.value;
    const { fresh, end } = arena.place(
      { table: this.capacity * slotBytes, fresh: capacity * slotBytes },
      this.tablePtr,
      "the fingerprint table",
    );
    arena.k.tableRehash(this.tablePtr, this.capacity, fresh, capacity);
    arena.u8.copyWithin(this.tablePtr, fresh, end);
    this.capacity = capacity;
  }
}
