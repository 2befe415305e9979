// One WebAssembly memory's share of a FingerprintSet: a bucket table of whole 128-bit
// fingerprints (wide slots, bucket-table.ts). The exact windowed set's table is the same shard
// with timed slots (TIMED, assembly/timed-set.ts): the key and its time in whole seconds, with the
// timed operations below. It grows by 1.5x in place up to its memory's limit; past that its owner
// splits it in two (fingerprint-set.ts), so a set has no size limit but the machine's.
import { ArrayRegion } from "../wasm/array-region.js";
import { bucketsFor, LOG_PARTS, PARTS, partitionLimit, type SlotLayout, TIMED, WIDE } from "../wasm/bucket-layout.js";
import { eachRun } from "../wasm/batch.js";
import { BATCH } from "../wasm/staging.js";
import { BucketTable } from "./bucket-table.js";

const GROWTH = 1.5;
const MIN_BUCKETS = 4;
/** Largest table of one memory: 4 GiB (wasm32) less room for the batch regions. */
const MAX_TABLE_BYTES = 2 ** 32 - 2 ** 24;

/** The largest table a shard may hold (tests set less: CRAWLSIEVE_TEST_PER_MEMORY, as for the line tables). */
export function maxTableBytes(): number {
  const forced = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.CRAWLSIEVE_TEST_PER_MEMORY;
  return forced === undefined ? MAX_TABLE_BYTES : Math.min(MAX_TABLE_BYTES, Number(forced));
}

/** Buckets a partition of one memory's largest table has (at least the smallest table's). */
function maxBuckets(): number {
  return Math.max(MIN_BUCKETS, Math.floor(maxTableBytes() / (PARTS * 64)));
}

/** Most keys one shard holds: its largest table at its load limit. */
export function shardCapacity(): number {
  return PARTS * partitionLimit(maxBuckets(), WIDE);
}

/** Table bytes of a shard made for `items` keys (at its largest load). */
export function shardTableBytes(items: number): number {
  return PARTS * Math.max(MIN_BUCKETS, bucketsFor(items, WIDE)) * 64;
}

/** A fingerprint table in one WebAssembly memory that grows itself. */
export class FingerprintShard extends BucketTable {
  /**
   * A shard for `items` keys without growing, or for as many as one memory holds; `depth`: how
   * many routing bits its keys share (fingerprint-set.ts); `layout`: WIDE, or TIMED for the
   * timed operations (a timed shard is never split: its slots do not keep the routing bits).
   */
  constructor(
    items: number,
    readonly depth: number,
    layout: SlotLayout = WIDE,
  ) {
    super(
      BATCH,
      Math.min(maxBuckets(), Math.max(MIN_BUCKETS, bucketsFor(items, layout))),
      layout,
      "the fingerprint set",
    );
  }

  /**
   * Adds the n fingerprints in the staging region in order, growing the table as the kernel stops
   * at its load limit; returns how many it took: fewer than n when the table is as large as one
   * memory allows (the caller splits the shard). The flags (1: new) are at flags(), in order.
   */
  addStaged(n: number): number {
    let done = this.add(0, n);
    while (done < n && this.growWithin()) done = this.add(done, n);
    return done;
  }

  /**
   * Timed: records the n staged fingerprints at `now` (seconds), each held from its cutoff on:
   * `cutoff`, or the staged times when undefined (stageTimes). Grows as the kernel stops at its
   * load limit, calling `beforeGrow` first (a sweep of expired keys may make room); returns how
   * many it took, fewer than n when one memory is full. Flags (1: not held before) at out.
   */
  addTimedStaged(n: number, now: number, cutoff: number | undefined, refresh: boolean, beforeGrow: () => void): number {
    let taken = 0;
    eachRun(n, n, (left, done) => {
      const k = this.live().k;
      const took = k.timedAddMany(
        this.tablePtr,
        LOG_PARTS,
        this.buckets,
        this.counts.ptr,
        partitionLimit(this.buckets, TIMED),
        this.staging.at(done),
        left,
        this.out.at(done),
        now,
        cutoff === undefined ? this.times.at(done) : 0,
        cutoff ?? 0,
        refresh ? 1 : 0,
      );
      taken += took;
      if (took === left) return took;
      const before = this.size;
      beforeGrow();
      // A sweep that freed a quarter of the table leaves room enough; else the table grows.
      if (this.size > before * 0.75 && !this.growWithin()) return n - done;
      return took;
    });
    return taken;
  }

  /** Timed: out[i] = 1 where the i-th staged fingerprint is held at its cutoff (as addTimedStaged), times (stagedTimes) its time or 0. */
  readTimedStaged(n: number, cutoff: number | undefined): void {
    this.live().k.timedRead(
      this.tablePtr,
      LOG_PARTS,
      this.buckets,
      this.staging.ptr,
      n,
      this.out.ptr,
      this.times.ptr,
      cutoff === undefined ? this.times.ptr : 0,
      cutoff ?? 0,
    );
  }

  /** Timed: removes the staged fingerprints; out[i] = 1 where one was held at its cutoff. */
  removeTimedStaged(n: number, cutoff: number | undefined): void {
    this.live().k.timedRemoveMany(
      this.tablePtr,
      LOG_PARTS,
      this.buckets,
      this.counts.ptr,
      this.staging.ptr,
      n,
      this.out.ptr,
      cutoff === undefined ? this.times.ptr : 0,
      cutoff ?? 0,
    );
  }

  /** Timed: drops every key whose time is below `cutoff` (seconds); returns how many. */
  sweep(cutoff: number): number {
    const arena = this.live();
    const { scratch } = arena.place(
      { table: PARTS * this.buckets * 64, scratch: this.buckets * 64 },
      this.tablePtr,
      "the fingerprint set",
    );
    return arena.k.timedSweep(this.tablePtr, LOG_PARTS, this.buckets, this.counts.ptr, cutoff, scratch);
  }

  /** Timed: copies per-key cutoffs (seconds, at most BATCH) into the times region. */
  stageTimes(cutoffs: Uint32Array): void {
    this.times.copyIn(this.live().u8, cutoffs);
  }

  /** Timed: the keys' times of the last read, n of them (a view: valid until the next batch). */
  stagedTimes(n: number): Uint32Array {
    return this.times.view(this.live().u8, Uint32Array, 0, n);
  }

  /**
   * Visits the slots held, packed 16 bytes each, in table order, a partition at a time with its
   * number (a split or a serialize reads a full memory without a copy of it whole).
   */
  eachPacked(visit: (packed: Uint8Array, partition: number) => void): void {
    const part = this.buckets * WIDE.perBucket;
    const slots = new ArrayRegion(this.tablePtr, 16, PARTS * part);
    for (let p = 0; p < PARTS; p++) {
      const held = this.counts.view(this.live().u8, Uint32Array)[p];
      if (held > 0) visit(new ArrayRegion(slots.at(p * part), 16, part).packed(this.live().u8, held), p);
    }
  }

  /** Grows every partition by 1.5x in place; false when that outgrows one memory. */
  private growWithin(): boolean {
    const next = Math.ceil(this.buckets * GROWTH);
    if (PARTS * next * 64 > maxTableBytes()) return false;
    this.grow(next);
    return true;
  }
}
