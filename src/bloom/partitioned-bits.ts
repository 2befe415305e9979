// The storage under the Bloom variants: a bit array split into partitions, each in its own WASM
// instance (wasm32 memory tops out at 4 GiB, so a bigger filter is split, never truncated).
// A key's partition comes from (low 32 bits of h1) xor (high 32 bits of h2), bits that steer
// positions inside a partition least; its bits inside the partition come from the full hash pair,
// so a one-partition filter is exactly the textbook filter. Each partition is a BitRegion, the
// one bit-region type; this file adds the layouts' kernels and the routing of keys to partitions.
import { RecordArray } from "../wasm/record-array.js";
import { wholeLines } from "../wasm/regions.js";
import { routeBatch } from "../wasm/route.js";
import { DisposedError } from "../errors.js";
import { BitRegion } from "./bit-region.js";

/** Which kernels a layout uses: bits anywhere, bits in one cache line, or packed counters. */
export type Layout = "standard" | "blocked" | "counting";

/** A batch operation on staged hash pairs. */
export type Operation = "test" | "set" | "remove" | "min";

/** Shape of the bit storage. */
export interface BitsGeometry {
  readonly layout: Layout;
  /** Slots per partition: bits (standard) or 512-bit blocks (blocked). */
  readonly slots: number;
  readonly partitions: number;
  readonly hashes: number;
  /** Bits per counter (counting layout only: 2, 4 or 8). */
  readonly counterBits?: number;
}

/** Bytes one partition stores for `geometry` (whole cache lines). */
export function partitionBytes(geometry: Pick<BitsGeometry, "layout" | "slots" | "counterBits">): number {
  if (geometry.layout === "blocked") return geometry.slots * 64;
  const bitsPerSlot = geometry.layout === "counting" ? (geometry.counterBits ?? 4) : 1;
  return wholeLines(Math.ceil((geometry.slots * bitsPerSlot) / 8));
}

/** A partitioned bit array with the kernels of its layout. */
export class PartitionedBits {
  readonly geometry: BitsGeometry;
  readonly bytesPerPartition: number;
  private parts: BitRegion[];
  private readonly blocked: boolean;
  private readonly counting: boolean;

  constructor(geometry: BitsGeometry) {
    this.geometry = geometry;
    this.blocked = geometry.layout === "blocked";
    this.counting = geometry.layout === "counting";
    this.bytesPerPartition = partitionBytes(geometry);
    this.parts = Array.from({ length: geometry.partitions }, () => new BitRegion(this.bytesPerPartition));
  }

  /** The partition whose staging receives batches. */
  get front(): BitRegion {
    const part = this.parts[0];
    if (part === undefined) throw new DisposedError("filter");
    return part;
  }

  /** Every partition, in order (for serialization). */
  get partitions(): readonly BitRegion[] {
    if (this.parts.length === 0) throw new DisposedError("filter");
    return this.parts;
  }

  /** Tests one key (one boundary crossing when unpartitioned). */
  hasOne(key: string | Uint8Array): boolean {
    const { arena, bitsPtr, staging } = this.front;
    if (this.parts.length > 1 || this.counting) return this.viaBatch(key, "test") === 1;
    const len = staging.encodeOne(key);
    const { slots, hashes } = this.geometry;
    const k = arena.k;
    return (
      (this.blocked
        ? k.blockedHasKey(bitsPtr, slots, hashes, staging.keysPtr, len)
        : k.bloomHasKey(bitsPtr, slots, hashes, staging.keysPtr, len)) === 1
    );
  }

  /** Adds one key; true when it was new. */
  addOne(key: string | Uint8Array): boolean {
    const { arena, bitsPtr, staging } = this.front;
    if (this.parts.length > 1 || this.counting) return this.viaBatch(key, "set") === 1;
    const len = staging.encodeOne(key);
    const { slots, hashes } = this.geometry;
    const k = arena.k;
    return (
      (this.blocked
        ? k.blockedAddKey(bitsPtr, slots, hashes, staging.keysPtr, len)
        : k.bloomAddKey(bitsPtr, slots, hashes, staging.keysPtr, len)) === 1
    );
  }

  /** Hashes the n keys staged in the front partition into its hash region. */
  hashStaged(n: number): void {
    this.front.staging.hashStaged(n);
  }

  /** Copies n hash pairs from another structure's front staging into this one's. */
  adoptHashes(from: PartitionedBits, n: number): void {
    if (from === this) return;
    const src = from.front;
    const dst = this.front;
    dst.staging.hashes.copyIn(dst.arena.u8, src.staging.hashes.bytes(src.arena.u8, 0, n));
  }

  /** Tests the n staged hash pairs; out[at + i] = 1 when pair i is present. */
  test(n: number, out: Uint8Array, at: number): void {
    this.apply("test", n, undefined, out, at);
  }

  /** Sets the staged hash pairs whose skip flag is 0; out[at + i] = 1 when pair i was new. Returns the count new. */
  set(n: number, skip: Uint8Array | undefined, out: Uint8Array, at: number): number {
    return this.apply("set", n, skip, out, at);
  }

  /** Counting layout: removes the staged pairs that are present; out[at + i] = 1 when removed. Returns the count removed. */
  remove(n: number, out: Uint8Array, at: number): number {
    return this.apply("remove", n, undefined, out, at);
  }

  /** Counting layout: out[at + i] = the smallest of pair i's counters. */
  min(n: number, out: Uint8Array, at: number): void {
    this.apply("min", n, undefined, out, at);
  }

  /** Set bits (non-zero counters for the counting layout) over all partitions. */
  popcount(): number {
    let total = 0;
    for (const part of this.partitions) {
      total += this.counting
        ? part.arena.k.countingNonzero(part.bitsPtr, this.geometry.slots, this.geometry.counterBits ?? 4)
        : part.popcount();
    }
    return total;
  }

  /** Drops the instances; the memory goes with the garbage collector. */
  dispose(): void {
    for (const part of this.parts) part.dispose();
    this.parts = [];
  }

  /** One key through the batch path (partitioned or counting filters); returns its result byte. */
  viaBatch(key: string | Uint8Array, op: Operation): number {
    const n = this.front.staging.encodeBatch([key], 0);
    this.hashStaged(n);
    const out = new Uint8Array(1);
    this.apply(op, 1, undefined, out, 0);
    return out[0];
  }

  private apply(op: Operation, n: number, skip: Uint8Array | undefined, out: Uint8Array, at: number): number {
    if (this.parts.length === 1) return this.applyPart(this.front, op, n, skip, out, at);
    return this.applyRouted(op, n, skip, out, at);
  }

  private applyPart(
    part: BitRegion,
    op: Operation,
    n: number,
    skip: Uint8Array | undefined,
    out: Uint8Array,
    at: number,
  ): number {
    const { arena, bitsPtr, staging } = part;
    const { slots, hashes } = this.geometry;
    const bits = this.geometry.counterBits ?? 4;
    const k = arena.k;
    const h = staging.hashesPtr;
    let changed = 0;
    if (op === "set") {
      if (skip !== undefined) staging.skip.copyIn(arena.u8, skip.subarray(0, n));
      const skipPtr = skip === undefined ? 0 : staging.skipPtr;
      changed = this.counting
        ? k.countingAdd(bitsPtr, slots, hashes, bits, h, n, skipPtr, staging.outPtr)
        : this.blocked
          ? k.blockedSet(bitsPtr, slots, hashes, h, n, skipPtr, staging.outPtr)
          : k.bloomSet(bitsPtr, slots, hashes, h, n, skipPtr, staging.outPtr);
    } else if (op === "remove") {
      changed = k.countingRemove(bitsPtr, slots, hashes, bits, h, n, staging.outPtr);
    } else if (op === "min" || this.counting) {
      // A counting filter's test is its minimum counter, read as a flag.
      k.countingMin(bitsPtr, slots, hashes, bits, h, n, staging.outPtr);
      if (op === "test") {
        const flags = staging.out.bytes(arena.u8, 0, n);
        for (let i = 0; i < n; i++) flags[i] = flags[i] === 0 ? 0 : 1;
      }
    } else if (this.blocked) {
      k.blockedTest(bitsPtr, slots, hashes, h, n, staging.outPtr);
    } else {
      k.bloomTest(bitsPtr, slots, hashes, h, n, staging.outPtr);
    }
    staging.readOut(out, at, n);
    return changed;
  }

  private applyRouted(op: Operation, n: number, skip: Uint8Array | undefined, out: Uint8Array, at: number): number {
    const { arena, staging } = this.front;
    const pairs = new RecordArray(arena.u8, staging.hashes, { h1: 0, h2: arena.k.HASH_H2 }, 0, n);
    const h1Low = pairs.low("h1");
    const h2High = pairs.high("h2");
    const count = this.parts.length;
    return routeBatch(
      arena.u8,
      staging.hashes,
      n,
      (i) => Math.floor((((pairs.word(i, h1Low) ^ pairs.word(i, h2High)) >>> 0) * count) / 4294967296),
      (p) => ({ memory: this.parts[p].arena.u8, region: this.parts[p].staging.hashes }),
      (p, m, partSkip, flags) => this.applyPart(this.parts[p], op, m, partSkip, flags, 0),
      out,
      at,
      skip,
    );
  }
}
