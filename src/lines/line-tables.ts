// The exact line table over several WebAssembly memories, all with compact slots (bucket-layout.ts).
// The line engine's own table (the fast path's, in the engine's memory) grows until one memory or
// the budget stops it; then it is sealed: it keeps the keys it has, nearly full (no memory is spent
// on a second copy or on half-empty tables), and is only looked up. New keys go to 2^k BucketTable
// instances (src/exact/bucket-table.ts, the tables FingerprintSet is made of too), a fingerprint's shard chosen by the low k bits of its high word (bits no table uses
// for its partition or bucket); each shard grows on its own from small within the budget. A batch
// is looked up in the own table first; the fingerprints it lacks are sorted by shard
// (assembly/line-split.ts groupBy), each group copied to its instance and tested-and-set there, and
// the answers put back in line order. When a full shard cannot grow, the tables freeze: from then
// on a fingerprint is only looked up, and a line not found is the caller's to spill (see
// line-engine.ts). The shards (or the own table, when there are none) are cleared and reused to
// resolve the spill.
import { CrawlsieveError } from "../errors.js";
import { Arena } from "../wasm/arena.js";
import { ArrayRegion } from "../wasm/array-region.js";
import { COMPACT, LOG_PARTS, PARTS, partitionLimit } from "../wasm/bucket-layout.js";
import { BucketTable, grownBuckets } from "../exact/bucket-table.js";
import type { FreeMemory } from "./key-sieve.js";

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
  /** The fingerprints the sealed own table lacks, packed (M of 16 bytes), */
  readonly absent: ArrayRegion;
  /** and their places in the batch (M u32). */
  readonly absentAt: ArrayRegion;
}

/** Budget facts: bytes every memory may take, and the bytes all may take together. */
export interface MemoryLimits {
  readonly perMemory: number;
  /** Bytes left for tables once the engine's memory and the spill buffers are counted, as a function of what is held now. */
  readonly available: () => number;
}

/** A shard's first table: a 16th of the own table's buckets (it grows from there), at least 4 a partition. */
const FIRST_SHARE = 16;
/** At most 2^6 shards. */
const MAX_LOG_SHARDS = 6;

/** The own table, sealed, and 2^k shards; or the own table alone (frozen: the budget had no room for shards). */
export class LineTables {
  private readonly shards: BucketTable[] = [];
  private logShards = 0;
  /** No insert any more: the budget is reached. */
  frozen = false;
  /** Buckets a partition of the own table while resolving a spill partition (resolveWith) with no shards; its own count otherwise. */
  private ownActive: number | undefined;

  constructor(
    private readonly own: () => OwnTable,
    private readonly regions: BatchRegions,
    private readonly limits: MemoryLimits,
    private readonly batch: number,
  ) {}

  /** Memories holding tables: the engine's and the shards'. */
  get count(): number {
    return 1 + this.shards.length;
  }

  /** Bytes of the shards' memories. */
  get shardBytes(): number {
    return this.shards.reduce((sum, s) => sum + s.byteLength, 0);
  }

  /**
   * Seals the own table (it cannot grow further) and starts 2^k shards for the keys to come, as
   * many as the budget can fill (each within one memory), when it has room for them; otherwise
   * freezes. Returns whether it made shards.
   */
  spread(): boolean {
    const own = this.own();
    const first = Math.max(4, Math.ceil(own.buckets / FIRST_SHARE));
    const firstBytes = PARTS * first * 64 + this.batch * 21 + (1 << 16);
    const available = this.limits.available();
    if (available < 2 * firstBytes) {
      this.frozen = true;
      return false;
    }
    // Enough shards that, each grown to its largest in one memory (about 80% of it, leaving room
    // for a growth step), they take the whole budget; each shard's first table must fit too.
    const wanted = Math.ceil(Math.log2(Math.max(1, available / (0.8 * this.limits.perMemory))));
    const fits = Math.floor(Math.log2(available / firstBytes));
    this.logShards = Math.max(0, Math.min(MAX_LOG_SHARDS, wanted, fits));
    for (let i = 0; i < 1 << this.logShards; i++)
      this.shards.push(new BucketTable(this.batch, first, COMPACT, "a line table shard"));
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
    const u8 = own.arena.u8;
    if (this.shards.length === 0) {
      if (mode === "resolve") {
        if (
          k.setAddMany(
            own.ptr,
            LOG_PARTS,
            own.buckets,
            own.counts,
            own.limit,
            r.digests.ptr,
            n,
            r.flags.ptr,
            COMPACT.bytes,
          ) >>>
            0 <
          n
        )
          throw tooLarge();
        return n;
      }
      // Frozen with the own table alone: looked up only.
      k.setHasMany(own.ptr, LOG_PARTS, own.buckets, r.digests.ptr, n, r.flags.ptr, COMPACT.bytes);
      flip(r.flags.bytes(u8, 0, n));
      return 0;
    }
    if (mode === "resolve") return this.probeShards(r.digests, undefined, n, n, mode);
    // The sealed own table first: what it holds was seen; the rest goes to the shards.
    k.setHasMany(own.ptr, LOG_PARTS, own.buckets, r.digests.ptr, n, r.flags.ptr, COMPACT.bytes);
    const m = k.gatherUnflagged(r.digests.ptr, r.flags.ptr, n, r.absent.ptr, r.absentAt.ptr) >>> 0;
    return m === 0 ? n : this.probeShards(r.absent, r.absentAt, m, n, mode);
  }

  /**
   * Tests-and-sets the m fingerprints of `source` in the shards and writes their answers to the
   * flags at their places in the batch of n (`places`; none: they are the batch). Returns the
   * place from which lines not seen must be spilled (n: none).
   */
  private probeShards(
    source: ArrayRegion,
    places: ArrayRegion | undefined,
    m: number,
    n: number,
    mode: "dedup" | "resolve",
  ): number {
    const r = this.regions;
    const own = this.own();
    const k = own.arena.k;
    let spillFrom = this.frozen && mode === "dedup" ? 0 : n;
    k.groupBy(source.ptr, m, 16, 8, 0, this.logShards, r.grouped.ptr, r.perm.ptr, r.starts.ptr);
    const starts = r.starts.view(own.arena.u8, Uint32Array, 0, this.shards.length + 1).slice();
    const perm = r.perm.view(own.arena.u8, Uint32Array, 0, m);
    const at = places?.view(own.arena.u8, Uint32Array, 0, m);
    for (let g = 0; g < this.shards.length; g++) {
      const a = starts[g];
      const size = starts[g + 1] - a;
      if (size === 0) continue;
      const shard = this.shards[g];
      shard.stage(r.grouped.bytes(own.arena.u8, a, size));
      let done = 0;
      if (!this.frozen || mode === "resolve") {
        done = shard.add(0, size);
        while (done < size && shard.whole && this.mayGrow(shard)) {
          shard.grow(grownBuckets(shard.buckets));
          done = shard.add(done, size);
        }
      }
      if (done < size) {
        if (mode === "resolve") throw tooLarge();
        this.frozen = true;
        shard.has(done, size);
      }
      r.gflags.copyIn(own.arena.u8, shard.flags(size), a);
      const answers = r.gflags.bytes(own.arena.u8, a, size);
      // Looked-up answers (1 present) turned into the flags' sense (0 seen); the first absent line starts the spill.
      for (let j = done; j < size; j++) {
        answers[j] ^= 1;
        const place = at === undefined ? perm[a + j] : at[perm[a + j]];
        if (answers[j] === 1 && place < spillFrom) spillFrom = place;
      }
    }
    if (places === undefined) k.scatterFlags(r.gflags.ptr, r.perm.ptr, m, r.flags.ptr);
    else k.scatterFlagsAt(r.gflags.ptr, r.perm.ptr, places.ptr, m, r.flags.ptr);
    return spillFrom;
  }

  /**
   * Empties the tables that resolve a spill partition of `records` records (still frozen, which
   * "resolve" ignores): the shards, or the own table when there are none. Each is used as a table
   * just large enough for its share (at most its whole self; Infinity: whole), laid over the start
   * of its memory, so a partition's look-ups stay in cache where they can and clearing costs what
   * the partition does.
   */
  resolveWith(records: number): void {
    const tables = Math.max(1, this.shards.length);
    // Keys a partition of one table at a load of 0.6, with room for the spread of small counts.
    const share = records / tables / PARTS;
    const buckets = Math.ceil((share + 8 + 3 * Math.sqrt(share)) / (COMPACT.perBucket * 0.6));
    for (const s of this.shards) s.resolveWith(buckets);
    if (this.shards.length > 0) return;
    const own = this.own();
    this.ownActive = Math.max(4, Math.min(own.buckets, buckets));
    new ArrayRegion(own.counts, 4, PARTS).fill(own.arena.u8);
    new ArrayRegion(own.ptr, 64, PARTS * this.ownActive).fill(own.arena.u8);
  }

  /**
   * At least `wanted` bytes of memory free between the end of input and the resolution: the
   * largest table's (resolveWith clears what it then uses, and with shards the own table is no
   * longer looked up; only remove() may touch it, harmlessly), or, when it is smaller (a run of
   * few lines), a new instance of that size if the budget has room; else the largest table's.
   */
  spareMemory(wanted: number): FreeMemory {
    const own = this.own();
    const ownMemory = { arena: own.arena, ptr: own.ptr, bytes: PARTS * own.buckets * 64 };
    const largest = this.shards.map((s) => s.tableMemory).reduce((a, b) => (b.bytes > a.bytes ? b : a), ownMemory);
    if (largest.bytes >= wanted || wanted > this.limits.available()) return largest;
    const arena = new Arena();
    const { spare } = arena.place({ spare: wanted }, arena.base, "a filter of the spilled lines");
    return { arena, ptr: spare, bytes: wanted };
  }

  /** Removes the n fingerprints in the digest region from the tables holding them (flags: 1 where one was there). */
  remove(n: number): void {
    const r = this.regions;
    const own = this.ownTable();
    const k = own.arena.k;
    k.setRemoveMany(own.ptr, LOG_PARTS, own.buckets, own.counts, r.digests.ptr, n, r.flags.ptr, COMPACT.bytes);
    if (this.shards.length === 0) return;
    k.groupBy(r.digests.ptr, n, 16, 8, 0, this.logShards, r.grouped.ptr, r.perm.ptr, r.starts.ptr);
    const starts = r.starts.view(own.arena.u8, Uint32Array, 0, this.shards.length + 1).slice();
    for (let g = 0; g < this.shards.length; g++) {
      const a = starts[g];
      const m = starts[g + 1] - a;
      if (m === 0) continue;
      const shard = this.shards[g];
      shard.stage(r.grouped.bytes(own.arena.u8, a, m));
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
  private mayGrow(shard: BucketTable): boolean {
    const grown = shard.grownBytes(grownBuckets(shard.buckets));
    return grown <= this.limits.perMemory && grown - shard.byteLength <= this.limits.available();
  }
}

function flip(flags: Uint8Array): void {
  for (let i = 0; i < flags.length; i++) flags[i] ^= 1;
}

function tooLarge(): CrawlsieveError {
  return new CrawlsieveError(
    "ERR_SPILL_TOO_LARGE",
    "a partition of the lines spilled to disk holds more distinct lines than the memory budget can; raise --memory",
  );
}
