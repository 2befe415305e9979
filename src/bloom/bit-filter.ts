// What the standard and the blocked Bloom filter share: the key API over partitioned bits,
// statistics, and the serialized form (kinds 1 and 2 have the same parameters and payload).
import { FilterTooLargeError, FormatError } from "../errors.js";
import type { KindCode } from "../format/container.js";
import { loadRegions, readStored, regionParts, writeRegions, type Recipe, type Region } from "../format/recipe.js";
import { estimateItems } from "../sizing/bloom.js";
import * as check from "../validate.js";
import { countOf, eachBatch, keyList, keySpans, type Keys } from "../wasm/batch.js";
import { designedRate, MAX_HASHES, totalBits, type PlannedLoad } from "./geometry.js";
import { PartitionedBits, partitionBytes, type BitsGeometry, type Layout, type Operation } from "./partitioned-bits.js";

const PARAM_BYTES = 40;
// The counting kind appends its counter width (u32) and a reserved u32.
const COUNTING_PARAM_BYTES = 8;
const COUNTER_BITS = [2, 4, 8];

/** A Bloom filter over partitioned bits; the public classes fix the layout. */
export abstract class BitFilter {
  /** @internal */
  readonly store: PartitionedBits;
  /** The load the filter was sized for ({ items: 0, fpRate: 0 } when built from explicit bits). */
  readonly planned: PlannedLoad;
  /** Adds that reported a new key, less successful removes. */
  protected inserted: number;

  protected constructor(geometry: BitsGeometry, planned: PlannedLoad, inserted = 0) {
    this.store = new PartitionedBits(geometry);
    this.planned = planned;
    this.inserted = inserted;
  }

  /** Adds a key; true when it was new (false: it was present, or a false positive). */
  add(key: string | Uint8Array): boolean {
    const isNew = this.store.addOne(check.key("key", key));
    if (isNew) this.inserted++;
    return isNew;
  }

  /** True when the key may have been added (it might be a false positive); false is definite. */
  has(key: string | Uint8Array): boolean {
    return this.store.hasOne(check.key("key", key));
  }

  /** Adds many keys in few boundary crossings; result[i] = 1 when keys[i] was new. */
  addMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    return this.run(keyList(keys), "set");
  }

  /** Tests many keys; result[i] = 1 when keys[i] may be present. */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    return this.run(keyList(keys), "test");
  }

  /** Adds keys given as spans of one buffer (key i = data[spans[2i] .. spans[2i+1]), ascending); result[i] = 1 when new. */
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.run(keySpans(data, spans), "set");
  }

  /** Tests keys given as spans of one buffer; result[i] = 1 when key i may be present. */
  hasSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.run(keySpans(data, spans), "test");
  }

  /** Bits in the filter (m), over all partitions. */
  get bits(): number {
    return totalBits(this.store.geometry);
  }

  /** Hash functions (k). */
  get hashes(): number {
    return this.store.geometry.hashes;
  }

  /** Partitions (separate WebAssembly memories) holding the bits. */
  get partitions(): number {
    return this.store.geometry.partitions;
  }

  /** Bytes of bit storage. */
  get byteLength(): number {
    return this.store.bytesPerPartition * this.store.geometry.partitions;
  }

  /** How many add calls reported a new key (an exact count of accepted keys). */
  get count(): number {
    return this.inserted;
  }

  /** Fraction of bits set. */
  fillRatio(): number {
    return this.store.popcount() / this.bits;
  }

  /** Estimated distinct keys added, from the bits set (Swamidass and Baldi). */
  estimatedCount(): number {
    return estimateItems({ bits: this.bits, hashes: this.hashes, setBits: this.store.popcount() });
  }

  /** Estimated FP rate now: the fill ratio to the power k. */
  estimatedFpRate(): number {
    return Math.pow(this.fillRatio(), this.hashes);
  }

  /** The FP rate the filter is designed for: theory at its planned load with its own m and k (NaN when built from explicit bits, with no planned load). */
  designedFpRate(): number {
    return designedRate(this.planned, this.store.geometry.layout, this.bits, this.hashes);
  }

  /** The filter in serialization format v1. */
  serialize(): Uint8Array {
    return writeRegions(
      this.kind,
      this.params(),
      this.regions(),
      (bytes) =>
        new FilterTooLargeError(bytes, "one Uint8Array cannot hold it; write serializeParts() to a stream instead"),
    );
  }

  /** The serialized filter as consecutive pieces (header, one per partition, checksum): for filters above 4 GiB. */
  serializeParts(): Generator<Uint8Array> {
    return regionParts(this.kind, this.params(), this.regions());
  }

  /** The parameter block of format v1: geometry, planned load, insert count (and counter width). */
  private params(): Uint8Array {
    const { slots, partitions, hashes } = this.store.geometry;
    const counting = this.store.geometry.layout === "counting";
    const params = new Uint8Array(PARAM_BYTES + (counting ? COUNTING_PARAM_BYTES : 0));
    const view = new DataView(params.buffer);
    if (counting) view.setUint32(PARAM_BYTES, this.store.geometry.counterBits ?? 4, true);
    view.setBigUint64(0, BigInt(slots), true);
    view.setUint32(8, partitions, true);
    view.setUint32(12, hashes, true);
    view.setBigUint64(16, BigInt(this.planned.items), true);
    view.setFloat64(24, this.planned.fpRate, true);
    view.setBigUint64(32, BigInt(this.inserted), true);
    return params;
  }

  /** The payload regions: each partition's bits, in order. */
  private regions(): Region[] {
    return this.store.partitions.map((part) => part.region());
  }

  /**
   * @internal Applies the n hash pairs staged in `source` (this filter or another that hashed the
   * batch) to this filter: a test, or a set of the pairs whose skip flag is 0. Returns the count new.
   */
  applyStaged(
    source: BitFilter,
    n: number,
    add: boolean,
    skip: Uint8Array | undefined,
    out: Uint8Array,
    at: number,
  ): number {
    this.store.adoptHashes(source.store, n);
    if (!add) {
      this.store.test(n, out, at);
      return 0;
    }
    const added = this.store.set(n, skip, out, at);
    this.inserted += added;
    return added;
  }

  /**
   * @internal ORs into present[0 .. n) whether each of the n pairs staged in `source` is in any of
   * `filters`; `flags` is scratch of at least n bytes.
   */
  static orPresent(
    source: BitFilter,
    n: number,
    filters: Iterable<BitFilter>,
    present: Uint8Array,
    flags: Uint8Array,
  ): void {
    for (const filter of filters) {
      filter.applyStaged(source, n, false, undefined, flags, 0);
      for (let j = 0; j < n; j++) present[j] |= flags[j];
    }
  }

  /** Empties the filter (every bit or counter to zero), keeping its size and memory. */
  clear(): void {
    for (const part of this.store.partitions) part.clear();
    this.inserted = 0;
  }

  /** Releases the filter's memory; any later call throws DisposedError. */
  dispose(): void {
    this.store.dispose();
  }

  /** The kind code this class serializes as. */
  protected abstract get kind(): KindCode;

  /** Parses and verifies serialized bytes of `kind`, then builds the filter through `make`. */
  protected static load<T extends BitFilter>(
    bytes: Uint8Array,
    kind: KindCode,
    layout: Layout,
    make: (geometry: BitsGeometry, planned: PlannedLoad, inserted: number) => T,
  ): T {
    const stored = readStored(bytes, bitFilterRecipe(kind, layout));
    const { geometry, planned, inserted } = stored.params;
    const filter = make(geometry, planned, inserted);
    try {
      loadRegions(stored, filter.regions());
    } catch (error) {
      filter.dispose();
      throw error;
    }
    return filter;
  }

  /** Stages, hashes and applies `op` to the keys batch by batch; one result byte a key. */
  protected run(keys: Keys, op: Operation): Uint8Array {
    const out = new Uint8Array(countOf(keys));
    const store = this.store;
    eachBatch(store.front.staging, keys, (n, at) => {
      store.hashStaged(n);
      if (op === "set") this.inserted += store.set(n, undefined, out, at);
      else if (op === "remove") this.inserted -= store.remove(n, out, at);
      else if (op === "min") store.min(n, out, at);
      else store.test(n, out, at);
    });
    return out;
  }
}

/** What the parameters of kinds 1, 2 and 4 hold. */
export interface StoredBits {
  readonly geometry: BitsGeometry;
  readonly planned: PlannedLoad;
  readonly inserted: number;
}

/**
 * @internal The recipe of the bit filters (kinds 1, 2 and 4 share it): geometry, planned load and
 * insert count in the parameters, each partition's bits as one payload segment. Composite kinds
 * read their parts through it too, so every part is checked before any is built.
 */
export function bitFilterRecipe(kind: KindCode, layout: Layout): Recipe<StoredBits> {
  const counting = layout === "counting";
  return {
    kind,
    what: "a filter",
    paramBytes: PARAM_BYTES + (counting ? COUNTING_PARAM_BYTES : 0),
    read(params, payloadBytes) {
      const counterBits = counting ? params.getUint32(PARAM_BYTES, true) : undefined;
      if (counterBits !== undefined && !COUNTER_BITS.includes(counterBits)) {
        throw new FormatError(`counter width ${counterBits} must be 2, 4 or 8`, "ERR_BAD_PARAMS");
      }
      const slots = safeNumber(params.getBigUint64(0, true), "slots");
      const partitions = params.getUint32(8, true);
      const hashes = params.getUint32(12, true);
      const items = safeNumber(params.getBigUint64(16, true), "planned items");
      const fpRate = params.getFloat64(24, true);
      const inserted = safeNumber(params.getBigUint64(32, true), "insert count");
      if (slots < 1) throw new FormatError(`slots ${slots} must be at least 1`, "ERR_BAD_PARAMS");
      if (partitions < 1) throw new FormatError(`partitions ${partitions} must be at least 1`, "ERR_BAD_PARAMS");
      if (hashes < 1 || hashes > MAX_HASHES)
        throw new FormatError(`hashes ${hashes} must be 1..${MAX_HASHES}`, "ERR_BAD_PARAMS");
      if (!(fpRate === 0 || (fpRate > 0 && fpRate < 1)))
        throw new FormatError(`planned fpRate ${fpRate} is not a probability`, "ERR_BAD_PARAMS");
      const geometry: BitsGeometry =
        counterBits === undefined
          ? { layout, slots, partitions, hashes }
          : { layout, slots, partitions, hashes, counterBits };
      const perPartition = partitionBytes(geometry);
      if (payloadBytes !== perPartition * partitions) {
        throw new FormatError(
          `payload of ${payloadBytes} bytes where ${partitions} x ${perPartition} were declared`,
          "ERR_BAD_PARAMS",
        );
      }
      return { geometry, planned: { items, fpRate }, inserted };
    },
  };
}

function safeNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER))
    throw new FormatError(`${what} ${value} is impossible`, "ERR_BAD_PARAMS");
  return Number(value);
}
