// One WebAssembly memory's bucket table of 128-bit fingerprints (assembly/fingerprint-buckets.ts,
// probed by assembly/fingerprint-set.ts's batch kernels) with the regions a batch passes through.
// Every exact table over several memories is made of these: FingerprintSet's shards
// (fingerprint-shard.ts adds their growth and timed slots) and the line engine's (line-tables.ts).
// The table lies last in its memory, so it grows in place; its owner says when and by how much.
import { DisposedError } from "../errors.js";
import { Arena } from "../wasm/arena.js";
import { array, ArrayRegion } from "../wasm/array-region.js";
import { LOG_PARTS, PARTS, partitionLimit, type SlotLayout } from "../wasm/bucket-layout.js";
import { layOut } from "../wasm/regions.js";

/**
 * Tables at least this large (about 7.5e7 compact keys) grow by LARGE_GROWTH, smaller ones by
 * GROWTH (fewer rehashes): past a growth a table is at most 1.2x its keys' need, so from 1e8 keys
 * on a compact table holds at most 12.8 / (0.9 / 1.2) = 17.1 bytes a key, and the last 1.5x growth
 * (to under 1.5 GiB) happens below 1e8 keys.
 */
const LARGE_TABLE = 2 ** 30;
const GROWTH = 1.5;
const LARGE_GROWTH = 1.2;

/** Buckets a partition after the next growth of a table of `buckets` a partition (the line tables'). */
export function grownBuckets(buckets: number): number {
  return Math.max(buckets + 1, Math.ceil(buckets * (PARTS * buckets * 64 >= LARGE_TABLE ? LARGE_GROWTH : GROWTH)));
}

/** A bucket table in an instance of its own, worked a staged batch at a time. */
export class BucketTable {
  private arena: Arena | undefined;
  /** Keys per partition (u32 each; the kernels keep them). */
  protected readonly counts: ArrayRegion;
  /** A batch's fingerprints, 16 bytes a key. */
  protected readonly staging: ArrayRegion;
  /** A batch's answers, a byte a key. */
  protected readonly out: ArrayRegion;
  /** A timed batch's cutoffs in, or its keys' times out (u32 seconds each). */
  protected readonly times: ArrayRegion;
  protected readonly tablePtr: number;
  /** Buckets a partition. */
  buckets: number;
  /** Buckets a partition the kernels use: all of them, or fewer while a small spill partition is resolved (resolveWith). */
  private active: number;

  /** A table of `buckets` buckets a partition with regions for batches of `batch` keys; `what` names it in errors. */
  constructor(
    batch: number,
    buckets: number,
    readonly layout: SlotLayout,
    private readonly what: string,
  ) {
    const arena = new Arena();
    const r = arena.place(
      {
        counts: array(4, PARTS),
        staging: array(16, batch),
        out: array(1, batch),
        times: array(4, batch),
        table: PARTS * buckets * 64,
      },
      arena.base,
      what,
    );
    this.arena = arena;
    this.counts = r.counts;
    this.staging = r.staging;
    this.out = r.out;
    this.times = r.times;
    this.tablePtr = r.table;
    this.buckets = buckets;
    this.active = buckets;
  }

  /** Copies packed fingerprints into the staging region (at most a batch). */
  stage(packed: Uint8Array): void {
    this.staging.copyIn(this.live().u8, packed);
  }

  /** The answers of the last batch, n of them (a view: valid until the next batch). */
  flags(n: number): Uint8Array {
    return this.out.bytes(this.live().u8, 0, n);
  }

  /** Adds staged fingerprints [from, n): flags 1 new, 0 seen; returns where it stopped (n when done; less when a partition is full). */
  add(from: number, n: number): number {
    const k = this.live().k;
    const took = k.setAddMany(
      this.tablePtr,
      LOG_PARTS,
      this.active,
      this.counts.ptr,
      partitionLimit(this.active, this.layout),
      this.staging.at(from),
      n - from,
      this.out.at(from),
      this.layout.bytes,
    );
    return from + (took >>> 0);
  }

  /** Tests staged fingerprints [from, n): flags 1 present, 0 absent. */
  has(from: number, n: number): void {
    if (from < n)
      this.live().k.setHasMany(
        this.tablePtr,
        LOG_PARTS,
        this.active,
        this.staging.at(from),
        n - from,
        this.out.at(from),
        this.layout.bytes,
      );
  }

  /** Removes staged fingerprints [0, n) where present: flags 1 where one was here. */
  remove(n: number): void {
    this.live().k.setRemoveMany(
      this.tablePtr,
      LOG_PARTS,
      this.active,
      this.counts.ptr,
      this.staging.ptr,
      n,
      this.out.ptr,
      this.layout.bytes,
    );
  }

  /** Bytes of memory after a growth to `next` buckets a partition (its scratch included): for a budget. */
  grownBytes(next: number): number {
    return Math.max(
      this.byteLength,
      layOut(this.tablePtr, { table: PARTS * next * 64, scratch: this.buckets * 64 }).end,
    );
  }

  /** Grows every partition to `next` buckets in place, through a scratch of one old partition after the new table. */
  grow(next: number): void {
    const arena = this.live();
    const { scratch } = arena.place({ table: PARTS * next * 64, scratch: this.buckets * 64 }, this.tablePtr, this.what);
    arena.k.bucketsGrow(this.tablePtr, LOG_PARTS, this.buckets, next, scratch, this.layout.bytes);
    this.buckets = next;
    this.active = next;
  }

  /** Whether the whole table is in use (it may grow only then). */
  get whole(): boolean {
    return this.active === this.buckets;
  }

  /**
   * Empties the table as one of `buckets` buckets a partition (at most its own; Infinity: whole),
   * laid over the start of its memory: a spill partition with few lines is resolved in a table
   * that fits in cache, and only that much is cleared.
   */
  resolveWith(buckets: number): void {
    this.active = Math.max(4, Math.min(this.buckets, buckets));
    const u8 = this.live().u8;
    this.counts.fill(u8);
    new ArrayRegion(this.tablePtr, 64, PARTS * this.active).fill(u8);
  }

  /** Removes every key (the table keeps its size). */
  clear(): void {
    this.resolveWith(Infinity);
  }

  /** Its table's memory (for a use between the end of input and resolveWith, which clears what it uses). */
  get tableMemory(): { arena: Arena; ptr: number; bytes: number } {
    return { arena: this.live(), ptr: this.tablePtr, bytes: PARTS * this.buckets * 64 };
  }

  /** Keys it may hold without growing. */
  get capacity(): number {
    return PARTS * partitionLimit(this.buckets, this.layout);
  }

  /** Keys held. */
  get size(): number {
    return this.counts.view(this.live().u8, Uint32Array).reduce((total, count) => total + count, 0);
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.live().k.memory.buffer.byteLength;
  }

  /** Releases the memory; later calls throw DisposedError. */
  dispose(): void {
    this.arena = undefined;
  }

  /** Disposes the table and hands its instance, memory touched already, to another use. */
  releaseArena(): Arena | undefined {
    const arena = this.arena;
    this.dispose();
    return arena;
  }

  /** The instance, while not disposed. */
  protected live(): Arena {
    if (this.arena === undefined) throw new DisposedError("FingerprintSet");
    return this.arena;
  }
}
