// A Bloom filter in one shared WebAssembly memory, written by several threads at once. The bits
// are split into shards chosen by hash, with the same routing and positions as a BloomFilter
// split into that many partitions, so the two hold identical bits for the same keys and this
// filter serializes as a BloomFilter (kind 1). Bits are set with atomic ORs (see
// assembly/shared.ts), so no set is lost when threads race on a word.
// Each thread keeps its own private instance for encoding and hashing keys, and a slot of the
// shared memory for the hash pairs and flags of its batches; slots are claimed atomically.
import { DisposedError, FilterTooLargeError, InvalidArgumentError } from "../errors.js";
import { BloomFilter } from "../bloom/bloom-filter.js";
import { designedRate, resolveGeometry, type BloomFilterOptions, type PlannedLoad } from "../bloom/geometry.js";
import { partitionBytes, type BitsGeometry } from "../bloom/partitioned-bits.js";
import * as check from "../validate.js";
import { MAX_ARENA_BYTES } from "../wasm/arena.js";
import { countOf, eachBatch, keyList, keySpans, type Keys } from "../wasm/batch.js";
import { sharedEngine } from "../wasm/engine.js";
import type { SharedKernels } from "../wasm/kernels.js";
import { BATCH } from "../wasm/staging.js";
import { instantiateShared } from "../wasm/shared-module.js";
import { layOut, wholeLines } from "../wasm/regions.js";
import { array } from "../wasm/array-region.js";

/** Options of PartitionedBloomFilter: a planned load or explicit bits, and the shard count. */
export interface PartitionedBloomFilterOptions extends Omit<BloomFilterOptions, "maxPartitionBytes"> {
  /** Shards the bits are split into (default 8). */
  readonly shards?: number;
  /** Threads that may attach at once, this one included (default 64). */
  readonly maxThreads?: number;
}

/** What another thread needs to attach: post it to a worker (the memory is shared, not copied). */
export interface PartitionedBloomFilterHandle {
  readonly memory: WebAssembly.Memory;
  readonly geometry: BitsGeometry;
  readonly planned: PlannedLoad;
  readonly maxThreads: number;
}

// The insert count (one i64) and the claim words (one i32 a thread) each start a cache line.
/** A thread's batch slot from `start`: the batch's hash pairs, then its flags. */
const slotRegions = (start: number) => layOut(start, { hashes: array(16, BATCH), out: array(1, BATCH) });
const SLOT_BYTES = wholeLines(slotRegions(0).end);
const PAGE = 65536;
// The shared module has no static data; everything this class lays out starts here.
const BASE = 4096;

/** The sharded, thread-safe Bloom filter over shared memory. */
export class PartitionedBloomFilter {
  /** Shape of the bits: shards = partitions of the equivalent BloomFilter. */
  readonly geometry: BitsGeometry;
  readonly planned: PlannedLoad;
  private readonly memory: WebAssembly.Memory;
  private readonly k: SharedKernels;
  private readonly layout: SharedLayout;
  private readonly u8: Uint8Array;
  private readonly header: { count: BigInt64Array; slots: Int32Array };
  private slot: number;

  constructor(options: PartitionedBloomFilterOptions) {
    const opts = check.options<PartitionedBloomFilterOptions>("options", options);
    const shards = opts.shards === undefined ? 8 : check.positiveInteger("shards", opts.shards, 65536);
    const maxThreads = opts.maxThreads === undefined ? 64 : check.positiveInteger("maxThreads", opts.maxThreads, 1024);
    const { bits, hashes, items, fpRate } = opts;
    const { geometry, plan } = resolveGeometry(
      "standard",
      bits !== undefined || hashes !== undefined ? { bits, hashes } : { items, fpRate },
    );
    const slots = Math.ceil((geometry.slots * geometry.partitions) / shards);
    const sharded: BitsGeometry = { layout: "standard", slots, partitions: shards, hashes: geometry.hashes };
    const memory = PartitionedBloomFilter.allocate(sharded, maxThreads);
    this.geometry = sharded;
    this.planned = plan;
    this.memory = memory;
    this.k = instantiateShared(memory);
    this.layout = PartitionedBloomFilter.layoutOf(this.k, sharded, maxThreads);
    this.u8 = new Uint8Array(memory.buffer);
    this.header = this.headerViews();
    this.slot = this.claimSlot();
  }

  /** A filter over the bits of `handle`, for use in this thread (typically a worker). */
  static attach(handle: PartitionedBloomFilterHandle): PartitionedBloomFilter {
    if (handle === null || typeof handle !== "object" || !(handle.memory instanceof WebAssembly.Memory)) {
      throw new InvalidArgumentError(
        "handle",
        handle,
        "the value of PartitionedBloomFilter.handle() from another thread",
      );
    }
    const filter = Object.create(PartitionedBloomFilter.prototype) as PartitionedBloomFilter;
    const k = instantiateShared(handle.memory);
    Object.assign(filter, {
      geometry: handle.geometry,
      planned: handle.planned,
      memory: handle.memory,
      k,
      layout: PartitionedBloomFilter.layoutOf(k, handle.geometry, handle.maxThreads),
      u8: new Uint8Array(handle.memory.buffer),
    });
    Object.assign(filter, { header: filter.headerViews() });
    filter.slot = filter.claimSlot();
    return filter;
  }

  /** The shared memory and shape, to post to a worker that will attach(). */
  handle(): PartitionedBloomFilterHandle {
    return {
      memory: this.memory,
      geometry: this.geometry,
      planned: this.planned,
      maxThreads: this.layout.claims.length,
    };
  }

  /** Shards (= partitions of the equivalent BloomFilter). */
  get shards(): number {
    return this.geometry.partitions;
  }

  /** Bits over all shards. */
  get bits(): number {
    return this.geometry.slots * this.geometry.partitions;
  }

  /** Hash functions (k). */
  get hashes(): number {
    return this.geometry.hashes;
  }

  /** Adds, from every thread, that reported a new key. */
  get count(): number {
    return Number(Atomics.load(this.header.count, 0));
  }

  /** Adds a key; true when this call set at least one of its bits. */
  add(key: string | Uint8Array): boolean {
    return this.addMany([check.key("key", key)])[0] === 1;
  }

  /** True when the key may have been added by any thread. */
  has(key: string | Uint8Array): boolean {
    return this.hasMany([check.key("key", key)])[0] === 1;
  }

  /** Adds many keys; result[i] = 1 when this call set a bit of keys[i]. */
  addMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    return this.run(keyList(keys), true);
  }

  /** Tests many keys. */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    return this.run(keyList(keys), false);
  }

  /** Adds keys given as spans of one buffer (see BloomFilter.addSpans). */
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.run(keySpans(data, spans), true);
  }

  /** Tests keys given as spans of one buffer. */
  hasSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array {
    return this.run(keySpans(data, spans), false);
  }

  /** Fraction of bits set. */
  fillRatio(): number {
    this.live();
    const { shards } = this.layout;
    return this.k.sharedPopcount(shards.ptr, shards.byteLength) / this.bits;
  }

  /** Estimated FP rate now, from every thread's bits: the fill ratio to the power k (as BloomFilter's). */
  estimatedFpRate(): number {
    return Math.pow(this.fillRatio(), this.hashes);
  }

  /** The FP rate the filter is designed for: theory at its planned load with its own m and k (NaN when built from explicit bits), as BloomFilter's. */
  designedFpRate(): number {
    return designedRate(this.planned, "standard", this.bits, this.hashes);
  }

  /** The bits as a BloomFilter (kind 1, `shards` partitions); safe while other threads write, as a snapshot of some moment per word. */
  serialize(): Uint8Array {
    const copy = this.toBloomFilter();
    try {
      return copy.serialize();
    } finally {
      copy.dispose();
    }
  }

  /** A single-threaded BloomFilter holding a copy of the bits (same answers for every key). */
  toBloomFilter(): BloomFilter {
    this.live();
    const { shards } = this.layout;
    const filter = BloomFilter.fromGeometry(this.geometry, this.planned, this.count);
    filter.store.partitions.forEach((part, p) => part.view().set(shards.bytes(this.u8, p, 1)));
    return filter;
  }

  /** A shared filter holding the bits of a serialized standard BloomFilter (its partitions become the shards). */
  static deserialize(bytes: Uint8Array, options: { maxThreads?: number } = {}): PartitionedBloomFilter {
    const source = BloomFilter.deserialize(bytes);
    try {
      const { slots, partitions, hashes } = source.store.geometry;
      const filter = new PartitionedBloomFilter({
        bits: slots * partitions,
        hashes,
        shards: partitions,
        maxThreads: options.maxThreads,
      });
      const { shards } = filter.layout;
      source.store.partitions.forEach((part, p) => shards.copyIn(filter.u8, part.view(), p));
      Atomics.store(filter.header.count, 0, BigInt(source.count));
      Object.assign(filter, { planned: source.planned });
      return filter;
    } finally {
      source.dispose();
    }
  }

  /** Gives this thread's slot back; the bits stay for the other threads (the memory goes when no thread holds it). */
  dispose(): void {
    if (this.slot < 0) return;
    Atomics.store(this.header.slots, this.slot, 0);
    this.slot = -1;
  }

  private run(keys: Keys, add: boolean): Uint8Array {
    const slot = this.live();
    const { arena, staging } = sharedEngine();
    const { shards } = this.layout;
    const { hashes: pairs, out: flags } = slotRegions(this.layout.slots.at(slot));
    const { slots, hashes } = this.geometry;
    const out = new Uint8Array(countOf(keys));
    let added = 0;
    eachBatch(staging, keys, (n, at) => {
      staging.hashStaged(n);
      pairs.copyIn(this.u8, staging.hashes.bytes(arena.u8, 0, n));
      if (add)
        added += this.k.sharedSet(shards.ptr, shards.length, shards.size, slots, hashes, pairs.ptr, n, flags.ptr);
      else this.k.sharedTest(shards.ptr, shards.length, shards.size, slots, hashes, pairs.ptr, n, flags.ptr);
      flags.copyOut(this.u8, out, at, n);
    });
    if (added > 0) Atomics.add(this.header.count, 0, BigInt(added));
    return out;
  }

  private live(): number {
    if (this.slot < 0) throw new DisposedError("PartitionedBloomFilter");
    return this.slot;
  }

  private headerViews(): { count: BigInt64Array; slots: Int32Array } {
    return {
      count: this.layout.count.view(this.u8, BigInt64Array),
      slots: this.layout.claims.view(this.u8, Int32Array),
    };
  }

  private claimSlot(): number {
    for (let s = 0; s < this.layout.claims.length; s++) {
      if (Atomics.compareExchange(this.header.slots, s, 0, 1) === 0) return s;
    }
    throw new InvalidArgumentError(
      "maxThreads",
      this.layout.claims.length,
      "more slots: every thread slot of this filter is taken",
    );
  }

  private static layoutOf(k: SharedKernels, geometry: BitsGeometry, maxThreads: number): SharedLayout {
    if (k.sharedHeapBase() > BASE)
      throw new Error(`shared module static data ends at ${k.sharedHeapBase()}, past ${BASE}`);
    return sharedRegions(geometry, maxThreads);
  }

  private static allocate(geometry: BitsGeometry, maxThreads: number): WebAssembly.Memory {
    // A shared memory cannot grow under running threads: it is made at its full size once.
    const { end } = sharedRegions(geometry, maxThreads);
    if (end > MAX_ARENA_BYTES)
      throw new FilterTooLargeError(end, `one shared WebAssembly memory holds at most ${MAX_ARENA_BYTES} bytes`);
    const pages = Math.ceil(end / PAGE);
    try {
      return new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    } catch (error) {
      throw new FilterTooLargeError(end, `the platform refused a shared memory of that size (${String(error)})`);
    }
  }
}

/** The shared memory's regions: the insert count, a claim word a thread, every shard's bits, one batch slot a thread. */
function sharedRegions(geometry: BitsGeometry, maxThreads: number) {
  return layOut(BASE, {
    count: array(8, 1),
    claims: array(4, maxThreads),
    shards: array(partitionBytes(geometry), geometry.partitions),
    slots: array(SLOT_BYTES, maxThreads),
  });
}

/** Where the shared memory's regions lie (the same in every thread). */
type SharedLayout = ReturnType<typeof sharedRegions>;
