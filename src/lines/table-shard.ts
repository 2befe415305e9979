// One more WebAssembly memory for the exact line table: an instance holding a bucket table of
// 128-bit fingerprints (assembly/fingerprint-buckets.ts, probed by assembly/fingerprint-set.ts's
// batch kernels) and a staging region a batch of fingerprints is copied into. The line engine's
// own table and these shards split the fingerprints by the low bits of their high word
// (line-tables.ts); a shard grows like the engine's table (grownBuckets), when the memory budget allows.
import { Arena } from "../wasm/arena.js";
import { array, ArrayRegion } from "../wasm/array-region.js";
import { LOG_PARTS, PARTS, partitionLimit, type SlotLayout } from "../wasm/bucket-layout.js";
import { layOut } from "../wasm/regions.js";
import type { FreeMemory } from "./key-sieve.js";

/**
 * Tables at least this large (about 7.5e7 keys) grow by LARGE_GROWTH, smaller ones by GROWTH (fewer
 * rehashes): past a growth a table is at most 1.2x its keys' need, so from 1e8 keys on it holds
 * at most 12.8 / (0.9 / 1.2) = 17.1 bytes a key, and the last 1.5x growth (to under 1.5 GiB)
 * happens below 1e8 keys.
 */
const LARGE_TABLE = 2 ** 30;
const GROWTH = 1.5;
const LARGE_GROWTH = 1.2;

/** Buckets a partition after the next growth of a table of `buckets` a partition. */
export function grownBuckets(buckets: number): number {
  return Math.max(buckets + 1, Math.ceil(buckets * (PARTS * buckets * 64 >= LARGE_TABLE ? LARGE_GROWTH : GROWTH)));
}

/** A bucket table in an instance of its own, probed a staged batch at a time. */
export class TableShard {
  readonly arena = new Arena();
  /** Fingerprints of a batch, 16 bytes each. */
  readonly staging: ArrayRegion;
  /** Answers of a batch, a byte each. */
  readonly flags: ArrayRegion;
  private readonly counts: ArrayRegion;
  private readonly tablePtr: number;
  buckets: number;
  /** Buckets a partition the kernels use: all of them, or fewer while a small spill partition is resolved (resolveWith). */
  private active: number;

  constructor(
    batch: number,
    buckets: number,
    private readonly layout: SlotLayout,
  ) {
    // The table lies last: it grows in place.
    const r = this.arena.place(
      { counts: array(4, PARTS), staging: array(16, batch), flags: array(1, batch), table: PARTS * buckets * 64 },
      this.arena.base,
      "a line table shard",
    );
    this.staging = r.staging;
    this.flags = r.flags;
    this.counts = r.counts;
    this.tablePtr = r.table;
    this.buckets = buckets;
    this.active = buckets;
  }

  /** Adds staged fingerprints [from, n): flags 1 new, 0 seen; returns where it stopped (n when done; less when a partition is full). */
  add(from: number, n: number): number {
    const k = this.arena.k;
    return (
      from +
      (k.setAddMany(
        this.tablePtr,
        LOG_PARTS,
        this.active,
        this.counts.ptr,
        partitionLimit(this.active, this.layout),
        this.staging.at(from),
        n - from,
        this.flags.at(from),
        this.layout.bytes,
      ) >>>
        0)
    );
  }

  /** Tests staged fingerprints [from, n): flags 1 present, 0 absent. */
  has(from: number, n: number): void {
    if (from < n)
      this.arena.k.setHasMany(
        this.tablePtr,
        LOG_PARTS,
        this.active,
        this.staging.at(from),
        n - from,
        this.flags.at(from),
        this.layout.bytes,
      );
  }

  /** Removes staged fingerprints [0, n) where present. */
  remove(n: number): void {
    this.arena.k.setRemoveMany(
      this.tablePtr,
      LOG_PARTS,
      this.active,
      this.counts.ptr,
      this.staging.ptr,
      n,
      this.flags.ptr,
      this.layout.bytes,
    );
  }

  /** Bytes of memory after the next growth (the scratch included): for the budget. */
  get grownBytes(): number {
    const next = grownBuckets(this.buckets);
    return Math.max(
      this.byteLength,
      layOut(this.tablePtr, { table: PARTS * next * 64, scratch: this.buckets * 64 }).end,
    );
  }

  /** Grows the table in place (grownBuckets) through a scratch of one old partition. */
  grow(): void {
    const next = grownBuckets(this.buckets);
    const { scratch } = this.arena.place(
      { table: PARTS * next * 64, scratch: this.buckets * 64 },
      this.tablePtr,
      "a line table shard",
    );
    this.arena.k.bucketsGrow(this.tablePtr, LOG_PARTS, this.buckets, next, scratch, this.layout.bytes);
    this.buckets = next;
    this.active = next;
  }

  /** Whether the whole table is in use (it may grow only then). */
  get whole(): boolean {
    return this.active === this.buckets;
  }

  /**
   * Empties the table as one of `buckets` buckets a partition (at most its own), laid over the
   * start of its memory: a spill partition with few lines is resolved in a table that fits in
   * cache, and only that much is cleared.
   */
  resolveWith(buckets: number): void {
    this.active = Math.max(4, Math.min(this.buckets, buckets));
    this.counts.fill(this.arena.u8);
    new ArrayRegion(this.tablePtr, 64, PARTS * this.active).fill(this.arena.u8);
  }

  /** Its table's memory (for a use between the end of input and resolveWith, which clears what it uses). */
  get tableMemory(): FreeMemory {
    return { arena: this.arena, ptr: this.tablePtr, bytes: PARTS * this.buckets * 64 };
  }

  /** Keys it may hold without growing. */
  get capacity(): number {
    return PARTS * partitionLimit(this.buckets, this.layout);
  }

  /** Bytes of WebAssembly memory held. */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength;
  }
}
