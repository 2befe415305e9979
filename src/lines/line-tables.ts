// The exact line table over several WebAssembly memories, all with compact slots (table-shard.ts):
// the line engine's own table (the fast path's, in the engine's memory) and TableShard instances,
// 2^k tables in all, a fingerprint's
// table chosen by the low k bits of its high word (the bits no table uses for its partition or
// bucket). A batch of fingerprints is sorted by table (assembly/line-split.ts groupBy), each group
// copied to its instance and tested-and-set there, and the answers put back in line order. When a
// table is full and the memory budget or the 4 GiB of one memory stops its growth, the tables
// freeze: from then on a fingerprint is only looked up, and a line not found is the caller's to
// spill (see line-engine.ts). Frozen tables are cleared and reused to resolve the spill.
import { CrawlsieveError } from "../errors.js";
import type { Arena } from "../wasm/arena.js";
import { ArrayRegion } from "../wasm/array-region.js";
import { COMPACT, LOG_PARTS, PARTS, partitionLimit, TableShard } from "./table-shard.js";

/** The engine's own table, as the shards' kernels address it. */
export interface OwnTable {
  readonly arena: Arena;
  readonly ptr: number;
  readonly counts: number;
  readonly buckets: number;
  readonly limit: number;
}

/** Regions of the engine's memory a batch is worked in (M fingerprints). */
export interface BatchRegions {
  readonly digests: ArrayRegion;
  readonly grouped: ArrayRegion;
  readonly perm: ArrayRegion;
  readonly starts: ArrayRegion;
  readonly gflags: ArrayRegion;
  readonly flags: ArrayRegion;
}

/** Budget facts: bytes every memory may take, and the bytes all may take together. */
export interface MemoryLimits {
  readonly perMemory: number;
  /** Bytes left for tables once the engine's memory and the spill buffers are counted, as a function of what is held now. */
  readonly available: () => number;
}

/** The own table and 2^k - 1 shards, or the own table alone (frozen, single memory). */
export class LineTables {
  private readonly shards: TableShard[] = [];
  private logTables = 0;
  /** No insert any more: the budget is reached. */
  frozen = false;
  /** Buckets a partition of the own table while resolving a spill partition (resolveWith); its own count otherwise. */
  private ownActive: number | undefined;
  /** Moving the own table's keys out (spread): shards may grow past the budget. */
  private spreading = false;

  constructor(
    private readonly own: () => OwnTable,
    private readonly regions: BatchRegions,
    private readonly limits: MemoryLimits,
    private readonly batch: number,
  ) {}

  /** Tables in use (1 until spread). */
  get count(): number {
    return 1 << this.logTables;
  }

  /** Bytes of the shards' memories. */
  get shardBytes(): number {
    return this.shards.reduce((sum, s) => sum + s.byteLength, 0);
  }

  /** Keys the tables may hold without growing. */
  get capacity(): number {
    const own = this.own();
    return PARTS * own.limit + this.shards.reduce((sum, s) => sum + s.capacity, 0);
  }

  /**
   * Spreads the own table (it cannot grow further) over 2^k tables when the budget has room for
   * one more of its size (so the shards can take their shares at once); otherwise freezes.
   * Returns whether it spread.
   */
  spread(): boolean {
    const own = this.own();
    const tableBytes = PARTS * own.buckets * 64;
    const per = tableBytes * 1.1 + this.batch * 17 + (1 << 16);
    // Tables of the own table's size the budget holds besides it; rounded up to a power of two, as
    // the shards' growth is checked against the budget anyway (so a budget is used, not left over).
    const more = this.limits.available() / per;
    const log = more < 1.1 ? 0 : Math.min(6, Math.max(1, Math.ceil(Math.log2(1 + more))));
    if (log === 0) {
      this.frozen = true;
      return false;
    }
    this.logTables = log;
    // A shard starts with room for its share at a load of 0.75 (the own table is at most at 0.9).
    const buckets = Math.max(4, Math.ceil((own.buckets * 1.2) / (1 << log)));
    for (let i = 1; i < 1 << log; i++) this.shards.push(new TableShard(this.batch, buckets, COMPACT));
    // Each partition of the own table keeps its share; the rest goes to the shards in batches.
    const k = own.arena.k;
    const { scratch, moved } = own.arena.place({ table: tableBytes, scratch: own.buckets * 64, moved: own.buckets * COMPACT.perBucket * 16 }, own.ptr, "the line table");
    const mask = BigInt((1 << log) - 1);
    // A share above its plan grows its shard even past the budget: no key may be refused here.
    this.spreading = true;
    for (let p = 0; p < PARTS; p++) {
      const count = k.bucketsKeep(own.ptr, LOG_PARTS, own.buckets, p, own.counts, scratch, moved, mask, COMPACT.bytes) >>> 0;
      const movedKeys = new ArrayRegion(moved, 16, count);
      for (let at = 0; at < count; at += this.batch) {
        const n = Math.min(this.batch, count - at);
        this.regions.digests.copyIn(own.arena.u8, movedKeys.bytes(own.arena.u8, at, n));
        this.probe(n, "resolve");
      }
    }
    this.spreading = false;
    return true;
  }

  /**
   * Tests-and-sets the n fingerprints in the digest region; flags[i] = 0 seen, 1 not seen.
   * "dedup": returns the index from which lines not seen must be spilled (n: none), freezing when
   * a full table cannot grow. "resolve": never freezes; a full table is an error (the spill's
   * partition holds more distinct lines than the tables).
   */
  probe(n: number, mode: "dedup" | "resolve"): number {
    const r = this.regions;
    const own = this.ownTable();
    const k = own.arena.k;
    const wasFrozen = this.frozen && mode === "dedup";
    let spillFrom = wasFrozen ? 0 : n;
    if (this.logTables === 0) {
      if (mode === "resolve") {
        if (k.setAddMany(own.ptr, LOG_PARTS, own.buckets, own.counts, own.limit, r.digests.ptr, n, r.flags.ptr, COMPACT.bytes) >>> 0 < n) throw tooLarge();
        return n;
      }
      k.setHasMany(own.ptr, LOG_PARTS, own.buckets, r.digests.ptr, n, r.flags.ptr, COMPACT.bytes);
      flip(r.flags.bytes(own.arena.u8, 0, n));
      return 0;
    }
    k.groupBy(r.digests.ptr, n, 16, 8, 0, this.logTables, r.grouped.ptr, r.perm.ptr, r.starts.ptr);
    const starts = r.starts.view(own.arena.u8, Uint32Array, 0, this.count + 1).slice();
    const perm = r.perm.view(own.arena.u8, Uint32Array, 0, n);
    for (let g = 0; g < this.count; g++) {
      const a = starts[g];
      const m = starts[g + 1] - a;
      if (m === 0) continue;
      let done = 0;
      let answers: Uint8Array;
      if (g === 0) {
        if (!this.frozen || mode === "resolve") done = k.setAddMany(own.ptr, LOG_PARTS, own.buckets, own.counts, own.limit, r.grouped.at(a), m, r.gflags.at(a), COMPACT.bytes) >>> 0;
        if (done < m) {
          if (mode === "resolve") throw tooLarge();
          this.frozen = true;
          k.setHasMany(own.ptr, LOG_PARTS, own.buckets, r.grouped.at(a + done), m - done, r.gflags.at(a + done), COMPACT.bytes);
        }
        answers = r.gflags.bytes(own.arena.u8, a, m);
      } else {
        const shard = this.shards[g - 1];
        shard.staging.copyIn(shard.arena.u8, r.grouped.bytes(own.arena.u8, a, m));
        if (!this.frozen || mode === "resolve") {
          done = shard.add(0, m);
          while (done < m && shard.whole && this.mayGrow(shard)) {
            shard.grow();
            done = shard.add(done, m);
          }
        }
        if (done < m) {
          if (mode === "resolve") throw tooLarge();
          this.frozen = true;
          shard.has(done, m);
        }
        answers = shard.flags.bytes(shard.arena.u8, 0, m);
        r.gflags.copyIn(own.arena.u8, answers, a);
        answers = r.gflags.bytes(own.arena.u8, a, m);
      }
      // Looked-up answers (1 present) turned into the flags' sense (0 seen); the first absent line starts the spill.
      for (let j = done; j < m; j++) {
        answers[j] ^= 1;
        if (answers[j] === 1 && perm[a + j] < spillFrom) spillFrom = perm[a + j];
      }
    }
    k.scatterFlags(r.gflags.ptr, r.perm.ptr, n, r.flags.ptr);
    return spillFrom;
  }

  /**
   * Empties the tables to resolve a spill partition of `records` records (still frozen, which
   * "resolve" ignores): each is used as a table just large enough for its share (at most its
   * whole self; Infinity: whole), laid over the start of its memory, so a partition's look-ups
   * stay in cache where they can and clearing costs what the partition does.
   */
  resolveWith(records: number): void {
    const own = this.own();
    // Keys a partition of one table at a load of 0.6, with room for the spread of small counts.
    const buckets = Math.ceil((records / this.count / PARTS + 8 + 3 * Math.sqrt(records / this.count / PARTS)) / (COMPACT.perBucket * 0.6));
    this.ownActive = Math.max(4, Math.min(own.buckets, buckets));
    new ArrayRegion(own.counts, 4, PARTS).fill(own.arena.u8);
    new ArrayRegion(own.ptr, 64, PARTS * this.ownActive).fill(own.arena.u8);
    for (const s of this.shards) s.resolveWith(buckets);
  }

  /** Removes the n fingerprints in the digest region from the tables holding them (flags: 1 where one was there). */
  remove(n: number): void {
    const r = this.regions;
    const own = this.ownTable();
    const k = own.arena.k;
    if (this.logTables === 0) {
      k.setRemoveMany(own.ptr, LOG_PARTS, own.buckets, own.counts, r.digests.ptr, n, r.flags.ptr, COMPACT.bytes);
      return;
    }
    k.groupBy(r.digests.ptr, n, 16, 8, 0, this.logTables, r.grouped.ptr, r.perm.ptr, r.starts.ptr);
    const starts = r.starts.view(own.arena.u8, Uint32Array, 0, this.count + 1).slice();
    for (let g = 0; g < this.count; g++) {
      const a = starts[g];
      const m = starts[g + 1] - a;
      if (m === 0) continue;
      if (g === 0) {
        k.setRemoveMany(own.ptr, LOG_PARTS, own.buckets, own.counts, r.grouped.at(a), m, r.gflags.at(a), COMPACT.bytes);
        continue;
      }
      const shard = this.shards[g - 1];
      shard.staging.copyIn(shard.arena.u8, r.grouped.bytes(own.arena.u8, a, m));
      shard.remove(m);
    }
  }

  /**
   * Empties every table (a store was cleared); their sizes stay. Frozen tables stay frozen: lines
   * spilled before would otherwise be printed where they occur again, not where they first did.
   */
  clear(): void {
    const own = this.own();
    new ArrayRegion(own.counts, 4, PARTS).fill(own.arena.u8);
    new ArrayRegion(own.ptr, 64, PARTS * own.buckets).fill(own.arena.u8);
    this.ownActive = undefined;
    for (const s of this.shards) s.resolveWith(Infinity);
  }

  /** The own table as the kernels use it now (fewer buckets while a small spill partition is resolved). */
  private ownTable(): OwnTable {
    const own = this.own();
    if (this.ownActive === undefined) return own;
    return { ...own, buckets: this.ownActive, limit: partitionLimit(this.ownActive, COMPACT) };
  }

  /** Whether a shard may grow: its next size within one memory and the budget. */
  private mayGrow(shard: TableShard): boolean {
    const extra = shard.grownBytes - shard.byteLength;
    return shard.grownBytes <= this.limits.perMemory && (this.spreading || extra <= this.limits.available());
  }
}

function flip(flags: Uint8Array): void {
  for (let i = 0; i < flags.length; i++) flags[i] ^= 1;
}

function tooLarge(): CrawlsieveError {
  return new CrawlsieveError("ERR_SPILL_TOO_LARGE", "a partition of the lines spilled to disk holds more distinct lines than the memory budget can; raise --memory");
}
