// The storage under the Bloom variants: a bit array split into partitions, each in its own WASM
// instance (wasm32 memory tops out at 4 GiB, so a bigger filter is split, never truncated).
// A key's partition comes from (low 32 bits of h1) xor (high 32 bits of h2), bits that steer
// positions inside a partition least; its bits inside the partition come from the full hash pair,
// so a one-partition filter is exactly the textbook filter.
import { Arena, alignUp } from "../wasm/arena.js";
import { Staging } from "../wasm/staging.js";
import { DisposedError } from "../errors.js";

/** Which kernels a layout uses and how many bits one slot is. */
export type Layout = "standard" | "blocked";

/** Shape of the bit storage. */
export interface BitsGeometry {
  readonly layout: Layout;
  /** Slots per partition: bits (standard) or 512-bit blocks (blocked). */
  readonly slots: number;
  readonly partitions: number;
  readonly hashes: number;
}

/** One partition: its arena, where its bits start, how many bytes they take. */
interface Part {
  readonly arena: Arena;
  readonly bitsPtr: number;
  readonly bytes: number;
  readonly staging: Staging;
}

/** Bytes one partition stores for `geometry` (whole cache lines). */
export function partitionBytes(geometry: Pick<BitsGeometry, "layout" | "slots">): number {
  return geometry.layout === "blocked" ? geometry.slots * 64 : alignUp(Math.ceil(geometry.slots / 8), 64);
}

/** A partitioned bit array with the kernels of its layout. */
export class PartitionedBits {
  readonly geometry: BitsGeometry;
  readonly bytesPerPartition: number;
  private parts: Part[];
  private readonly blocked: boolean;

  constructor(geometry: BitsGeometry) {
    this.geometry = geometry;
    this.blocked = geometry.layout === "blocked";
    this.bytesPerPartition = partitionBytes(geometry);
    this.parts = [];
    for (let p = 0; p < geometry.partitions; p++) {
      const arena = new Arena();
      const bitsPtr = arena.base;
      arena.reserve(bitsPtr + this.bytesPerPartition);
      this.parts.push({ arena, bitsPtr, bytes: this.bytesPerPartition, staging: new Staging(arena, bitsPtr + this.bytesPerPartition) });
    }
  }

  /** The partition whose staging receives batches. */
  get front(): Part {
    const part = this.parts[0];
    if (part === undefined) throw new DisposedError("filter");
    return part;
  }

  /** Every partition, in order (for serialization). */
  get partitions(): readonly Part[] {
    if (this.parts.length === 0) throw new DisposedError("filter");
    return this.parts;
  }

  /** Tests one key (one boundary crossing when unpartitioned). */
  hasOne(key: string | Uint8Array): boolean {
    const { arena, bitsPtr, staging } = this.front;
    if (this.parts.length > 1) return this.viaBatch(key, false);
    const len = staging.encodeOne(key);
    const { slots, hashes } = this.geometry;
    const k = arena.k;
    return (this.blocked ? k.blockedHasKey(bitsPtr, slots, hashes, staging.keysPtr, len) : k.bloomHasKey(bitsPtr, slots, hashes, staging.keysPtr, len)) === 1;
  }

  /** Adds one key; true when it was new. */
  addOne(key: string | Uint8Array): boolean {
    const { arena, bitsPtr, staging } = this.front;
    if (this.parts.length > 1) return this.viaBatch(key, true);
    const len = staging.encodeOne(key);
    const { slots, hashes } = this.geometry;
    const k = arena.k;
    return (this.blocked ? k.blockedAddKey(bitsPtr, slots, hashes, staging.keysPtr, len) : k.bloomAddKey(bitsPtr, slots, hashes, staging.keysPtr, len)) === 1;
  }

  /** Hashes the n keys staged in the front partition into its hash region. */
  hashStaged(n: number): void {
    const { arena, staging } = this.front;
    arena.k.hashPairs(staging.keysPtr, staging.spansPtr, n, staging.hashesPtr);
  }

  /** Copies n hash pairs from another structure's front staging into this one's. */
  adoptHashes(from: PartitionedBits, n: number): void {
    if (from === this) return;
    const src = from.front;
    const dst = this.front;
    dst.arena.u8.set(src.arena.u8.subarray(src.staging.hashesPtr, src.staging.hashesPtr + 16 * n), dst.staging.hashesPtr);
  }

  /** Tests the n staged hash pairs; out[at + i] = 1 when pair i is present. */
  test(n: number, out: Uint8Array, at: number): void {
    this.apply(n, undefined, out, at, false);
  }

  /** Sets the staged hash pairs whose skip flag is 0; out[at + i] = 1 when pair i was new. Returns the count new. */
  set(n: number, skip: Uint8Array | undefined, out: Uint8Array, at: number): number {
    return this.apply(n, skip, out, at, true);
  }

  /** Set bits over all partitions. */
  popcount(): number {
    let total = 0;
    for (const part of this.partitions) total += part.arena.k.popcountBytes(part.bitsPtr, part.bytes);
    return total;
  }

  /** Drops the instances; the memory goes with the garbage collector. */
  dispose(): void {
    this.parts = [];
  }

  private viaBatch(key: string | Uint8Array, add: boolean): boolean {
    const n = this.front.staging.encodeBatch([key], 0);
    this.hashStaged(n);
    const out = new Uint8Array(1);
    this.apply(1, undefined, out, 0, add);
    return out[0] === 1;
  }

  private apply(n: number, skip: Uint8Array | undefined, out: Uint8Array, at: number, add: boolean): number {
    if (this.parts.length === 1) return this.applyPart(this.front, n, skip, out, at, add);
    return this.applyRouted(n, skip, out, at, add);
  }

  private applyPart(part: Part, n: number, skip: Uint8Array | undefined, out: Uint8Array, at: number, add: boolean): number {
    const { arena, bitsPtr, staging } = part;
    const { slots, hashes } = this.geometry;
    const k = arena.k;
    let added = 0;
    if (add) {
      if (skip !== undefined) arena.u8.set(skip.subarray(0, n), staging.skipPtr);
      const skipPtr = skip === undefined ? 0 : staging.skipPtr;
      added = this.blocked
        ? k.blockedSet(bitsPtr, slots, hashes, staging.hashesPtr, n, skipPtr, staging.outPtr)
        : k.bloomSet(bitsPtr, slots, hashes, staging.hashesPtr, n, skipPtr, staging.outPtr);
    } else if (this.blocked) {
      k.blockedTest(bitsPtr, slots, hashes, staging.hashesPtr, n, staging.outPtr);
    } else {
      k.bloomTest(bitsPtr, slots, hashes, staging.hashesPtr, n, staging.outPtr);
    }
    out.set(arena.u8.subarray(staging.outPtr, staging.outPtr + n), at);
    return added;
  }

  private applyRouted(n: number, skip: Uint8Array | undefined, out: Uint8Array, at: number, add: boolean): number {
    const front = this.front;
    const base = front.staging.hashesPtr >>> 2;
    const pairs = front.arena.u32.slice(base, base + 4 * n);
    const count = this.parts.length;
    const members: number[][] = Array.from({ length: count }, () => []);
    for (let i = 0; i < n; i++) members[Math.floor((((pairs[4 * i] ^ pairs[4 * i + 3]) >>> 0) * count) / 4294967296)].push(i);
    let added = 0;
    const partSkip = skip === undefined ? undefined : new Uint8Array(n);
    const partOut = new Uint8Array(n);
    for (let p = 0; p < count; p++) {
      const list = members[p];
      if (list.length === 0) continue;
      const part = this.parts[p];
      const u32 = part.arena.u32;
      const dst = part.staging.hashesPtr >>> 2;
      for (let j = 0; j < list.length; j++) {
        u32.set(pairs.subarray(4 * list[j], 4 * list[j] + 4), dst + 4 * j);
        if (partSkip !== undefined) partSkip[j] = skip![list[j]];
      }
      added += this.applyPart(part, list.length, partSkip, partOut, 0, add);
      for (let j = 0; j < list.length; j++) out[at + list[j]] = partOut[j];
    }
    return added;
  }
}
