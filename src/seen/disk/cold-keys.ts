// The keys of a disk seen-set past its memory budget that stay on disk: the file's sorted part
// (sorted-part.ts), looked up the way of IMP-CB. In memory stay a split-block Bloom filter of its
// fingerprints (key-sieve.ts, in a WebAssembly memory of its own, a shared one when a merge's
// thread built it there, 8 to 16 bits a key as the budget allows) and an index of blocks of 256
// fingerprints (4 KiB on disk): each block's first fingerprint and the XXH64 of its bytes, 28
// bytes a block, both made while the part is read once at open, every record verified, or by a
// background merge as it writes the part (ColdIndex, in the merge's worker thread; ColdKeys.adopt
// takes it over), and saved beside the log so the next open reads them, not the part
// (part-index.ts). A key the filter rules out is absent without a read; any other is found in its
// block, read and checked against the block's checksum before it is trusted, so a block damaged
// since the open is an error, never a wrong answer. A batch's keys are found in the index, ordered by block and searched in their blocks by kernels
// (assembly/cold-blocks.ts), the blocks read in file order, blocks near each other in one read.
import { renameSync, rmSync } from "node:fs";
import { FilterTooLargeError, FormatError } from "../../errors.js";
import { checksumBytes, checksumRegion } from "../../format/checksum.js";
import { array, type ArrayRegion } from "../../wasm/array-region.js";
import { Arena, MAX_ARENA_BYTES } from "../../wasm/arena.js";
import { BATCH } from "../../wasm/staging.js";
import { KeySieve, type SievePlace } from "../../lines/key-sieve.js";
import { instantiateSharedKernels } from "../../wasm/shared-module.js";
import { RECORD_FINGERPRINTS } from "../fingerprint-batches.js";
import { asideName } from "./file-log.js";
import { loadPartIndex, savePartIndex, sieveBits, type PartIndex } from "./part-index.js";
import { ORDER_WORDS, orderWords, type SortedPart } from "./sorted-part.js";

/** Fingerprints in a block: 4 KiB on disk, one read; a record's 65,536 are 256 whole blocks. */
const BLOCK = 256;
const BLOCKS_A_RECORD = RECORD_FINGERPRINTS / BLOCK;
/** Blocks read past rather than read apart: a system call costs more than 16 blocks' bytes (64 KiB) of copying. */
const GAP_BLOCKS = 16;
/** Filter bits a key: at most 16 (0.18% of absent keys read a block), at least 8 (about 2%), whatever the budget. */
const MAX_FILTER_BITS = 16;
const MIN_FILTER_BITS = 8;
/** Bytes of a block of the split-block filter. */
const FILTER_BLOCK = 64;
/**
 * Keys the filter let through that one look-up orders by block and searches (a call with more
 * takes several). Its regions grow to what calls need, up to this: the budget counts them.
 */
const LOOK_UP = 1 << 17;
/** Blocks one read takes at most (256 KiB): the span they are read into is counted in the budget too. */
const SPAN_BLOCKS = 64;

/** Bytes of memory the cold keys of a `count`-key sorted part take within `budget` bytes: the filter's share and the block index. */
export function coldBytes(count: number, budget: number): number {
  return filterBytes(count, budget) + Math.ceil(count / BLOCK) * (4 * ORDER_WORDS + 8);
}

/** The filter's bytes: half the budget, between 8 and 16 bits a key, and within one WebAssembly memory (less room for its batch). */
function filterBytes(count: number, budget: number): number {
  const bits = Math.min(MAX_FILTER_BITS * count, Math.max(MIN_FILTER_BITS * count, 4 * budget));
  // Whole 64-byte blocks: the filter at its floor of 8 bits a key needs the last block whole too (KeySieve.over).
  return Math.min(Math.ceil(bits / (8 * FILTER_BLOCK)) * FILTER_BLOCK, MAX_ARENA_BYTES - (64 << 20));
}

/**
 * A sorted part's filter and block index, as ColdIndex.parts() hands them over: the filter where it
 * was built, in a shared memory taken as it is, the index's buffers transferable.
 */
export interface ColdIndexParts {
  readonly memory: WebAssembly.Memory;
  readonly filter: SievePlace;
  readonly firsts: Uint32Array;
  readonly sums: BigUint64Array;
  /** Fingerprints indexed. */
  readonly count: number;
}

/**
 * The filter and block index of a sorted part, built from its records as they are read or
 * written, in order (each a whole number of blocks but the last), for at most `most` keys within
 * `budget` bytes: the filter is sized for `most`, so one built while the part is written (its
 * count known only at the end) may hold a little more than it needs.
 */
export class ColdIndex {
  /** The filter it builds (undefined: the set's own filter, grown in place, already holds the keys: ColdIndex.indexOnly). */
  readonly sieve: KeySieve | undefined;
  /** Where the filter's memory ends. */
  readonly end: number;
  private readonly firsts: Uint32Array;
  private readonly sums: BigUint64Array;
  private count = 0;
  /** The set's filter grown in place: its shared memory and where it lies, read only (to save it). */
  private live: { memory: WebAssembly.Memory; place: SievePlace } | undefined;

  constructor(
    readonly arena: Arena | undefined,
    most: number,
    budget: number,
  ) {
    const blocks = Math.ceil(most / BLOCK);
    this.firsts = new Uint32Array(ORDER_WORDS * blocks);
    this.sums = new BigUint64Array(blocks);
    if (arena === undefined) {
      this.sieve = undefined;
      this.end = 0;
      return;
    }
    const bytes = KeySieve.bytesFor(0, BATCH, 16) + filterBytes(most, budget);
    const r = arena.place({ sieve: bytes }, arena.base, "the filter of a disk seen-set's keys");
    const sieve = KeySieve.over({ arena, ptr: r.sieve, bytes }, most, BATCH, 16);
    if (sieve === undefined)
      throw new FilterTooLargeError(
        (MIN_FILTER_BITS * most) / 8,
        `the filter of ${most} keys on disk (8 bits a key at least) outgrows one WebAssembly memory; open the set without a memory budget`,
      );
    this.sieve = sieve;
    this.end = r.sieve + bytes;
  }

  /**
   * The block index alone of at most `most` keys, for a part whose keys the set's filter (at
   * `place` in the shared `memory`) already holds: the set adds every key to it as the key comes
   * (ColdKeys.note). The filter is only read, to be saved; no kernel of this thread touches that
   * memory, which the set's thread goes on using.
   */
  static indexOnly(memory: WebAssembly.Memory, place: SievePlace, most: number): ColdIndex {
    const index = new ColdIndex(undefined, most, 0);
    index.live = { memory, place };
    return index;
  }

  /** Adds the next record's fingerprints (packed, in the part's order). */
  add(fingerprints: Uint8Array): void {
    if (this.count % BLOCK !== 0) throw new RangeError("a sorted part's records are whole blocks but the last");
    const sieve = this.sieve;
    if (sieve !== undefined)
      for (let at = 0; at < fingerprints.length; at += 16 * BATCH)
        sieve.add(fingerprints.subarray(at, Math.min(fingerprints.length, at + 16 * BATCH)), 16);
    const view = new DataView(fingerprints.buffer, fingerprints.byteOffset, fingerprints.byteLength);
    for (let at = 0; at < fingerprints.length; at += 16 * BLOCK) {
      const block = this.count / BLOCK;
      if (block >= this.sums.length) throw new RangeError(`more than the ${BLOCK * this.sums.length} keys planned`);
      orderWords(view, at, this.firsts, ORDER_WORDS * block);
      this.sums[block] = checksumBytes(0n, fingerprints.subarray(at, Math.min(fingerprints.length, at + 16 * BLOCK)));
      this.count += Math.min(BLOCK, (fingerprints.length - at) / 16);
    }
  }

  /** The index of the keys added, each block once (the arrays trimmed to them). */
  index(): { firsts: Uint32Array; sums: BigUint64Array; count: number } {
    const blocks = Math.ceil(this.count / BLOCK);
    return {
      firsts: this.firsts.subarray(0, ORDER_WORDS * blocks),
      sums: this.sums.subarray(0, blocks),
      count: this.count,
    };
  }

  /**
   * The filter where it lies (its arena's memory must be a shared one) and the index, to hand to
   * another thread (ColdKeys.adopt): views of its arrays, whose buffers are moved, not copied (a
   * copy of 28 bytes a block would come on top at the merge's end); the index is done with.
   */
  parts(): ColdIndexParts {
    const { firsts, sums, count } = this.index();
    if (this.live !== undefined) return { memory: this.live.memory, filter: this.live.place, firsts, sums, count };
    if (this.arena === undefined || this.sieve === undefined || !this.arena.shared)
      throw new RangeError("a filter handed to another thread is built in a shared memory");
    return { memory: this.arena.k.memory, filter: this.sieve.place, firsts, sums, count };
  }

  /** Saves the filter and index to `path` (a new file aside: installPartIndex renames it in) for a part of the log at `epoch`. */
  save(path: string, epoch: number): void {
    const index = { epoch, ...this.index() };
    if (this.live !== undefined) {
      savePartIndex(path, sieveBits(this.live.memory, this.live.place), this.live.place, index);
    } else if (this.arena !== undefined && this.sieve !== undefined) {
      savePartIndex(path, sieveBits(this.arena, this.sieve.place), this.sieve.place, index);
    }
  }
}

/**
 * The filter and index saved at `saved.path` when they are `part`'s (the log's epoch, the key
 * count, its first and last blocks' checksums) and the filter fits what `budget` gives one of
 * its size (twice the share: a merge sizes it from the keys its snapshot may hold); else
 * undefined, and the part is to be read.
 */
function loadSaved(
  part: SortedPart,
  budget: number,
  arena: Arena,
  saved: { path: string; epoch: number },
): (PartIndex & { sieve: KeySieve; end: number }) | undefined {
  let loaded: ReturnType<typeof loadPartIndex>;
  try {
    loaded = loadPartIndex(saved.path, arena);
  } catch {
    // Missing, damaged or torn: a cache, read again from the part.
    return undefined;
  }
  if (loaded.epoch !== saved.epoch || loaded.count !== part.count) return undefined;
  if (loaded.sieve.bitsPerKey * loaded.count > 2 * 8 * filterBytes(part.count, budget)) return undefined;
  const last = loaded.sums.length - 1;
  for (const b of last === 0 ? [0] : [0, last]) {
    const n = Math.min(BLOCK, part.count - b * BLOCK);
    const bytes = part.readFingerprints(b * BLOCK, n, new Uint8Array(16 * n));
    if (checksumBytes(0n, bytes) !== loaded.sums[b]) return undefined;
  }
  return loaded;
}

/** Saves a part's filter and index beside its log (aside, then renamed in); a failure leaves none. */
function saveBeside(index: ColdIndex, saved: { path: string; epoch: number }): void {
  const aside = asideName(saved.path);
  try {
    index.save(aside, saved.epoch);
    renameSync(aside, saved.path);
  } catch {
    rmSync(aside, { force: true });
  }
}

/** The regions of a look-up, after the filter in the same memory. */
interface LookUpRegions {
  /** Each block's first fingerprint's place in table order (ORDER_WORDS u32 words a block). */
  readonly firsts: ArrayRegion;
  /** The keys the filter let through (16 bytes each), their blocks (u64 slots for the sort, u32 after it), their tags, and the answers by tag. */
  readonly keys: ArrayRegion;
  readonly blocks: ArrayRegion;
  readonly tags: ArrayRegion;
  readonly found: ArrayRegion;
  /** Where blocks are read into: a record's at most. */
  readonly span: ArrayRegion;
}

/** The on-disk keys of a disk seen-set, answered through a filter and a block index. */
export class ColdKeys {
  /** Made by reading the part whole (no saved filter and index of it was taken). */
  scanned = false;
  /** Keys asked, and blocks read for them (a key the filter could not rule out). */
  asked = 0;
  blocksRead = 0;
  /** Reads made for them: blocks near each other are read at once. */
  reads = 0;
  private r: LookUpRegions;
  /** Keys the look-up's regions hold now. */
  private room = 0;
  /** Each let-through key's place in the packed keys of has(), by tag. */
  private places = new Uint32Array(0);
  /** Blocks in the index. */
  private readonly blocks: number;
  /** Whether the filter holds every key the set holds (note): only then may a merge keep it. */
  private holdsAll = true;

  private constructor(
    private readonly part: SortedPart,
    /** The set's memory budget, that the filter is sized within (filterBytes). */
    private readonly budget: number,
    private readonly arena: Arena,
    private readonly sieve: KeySieve,
    /** Where the filter's memory ends: the block index and the look-up's regions follow it. */
    private readonly sieveEnd: number,
    firsts: Uint32Array,
    /** Each block's checksum. */
    private readonly sums: BigUint64Array,
  ) {
    this.blocks = sums.length;
    this.r = this.place(0);
    this.r.firsts.copyIn(arena.u8, new Uint8Array(firsts.buffer, firsts.byteOffset, firsts.byteLength));
  }

  /** Lays out the block index (first, so it stays where it is) and the look-up's regions for `room` keys; may grow memory. */
  private place(room: number): LookUpRegions {
    this.room = room;
    return this.arena.place(
      {
        firsts: array(4 * ORDER_WORDS, Math.max(1, this.blocks)),
        keys: array(16, room),
        blocks: array(4, 2 * room),
        tags: array(4, room),
        found: array(1, room),
        span: array(16, room === 0 ? 0 : SPAN_BLOCKS * BLOCK),
      },
      this.sieveEnd,
      "the block index of a disk seen-set's keys",
    );
  }

  /** Makes the look-up's regions hold at least `keys` keys (at most LOOK_UP), keeping the places gathered. */
  private ensure(keys: number): void {
    if (keys <= this.room) return;
    const room = Math.min(LOOK_UP, Math.max(keys, 2 * this.room, BATCH));
    const places = new Uint32Array(room);
    places.set(this.places);
    this.places = places;
    const kept = this.room === 0 ? undefined : this.r.keys.bytes(this.arena.u8).slice();
    this.r = this.place(room);
    if (kept !== undefined) this.r.keys.copyIn(this.arena.u8, kept);
  }

  /**
   * The cold keys of `part` (taken: closed with them) within `budget` bytes (coldBytes), from the
   * filter and index saved beside the log (part-index.ts) when `saved` names one that is the
   * part's and fits the budget; else the part is read whole once, each record verified, and what
   * was built saved there for the next open (a failure to save costs only that). The filter goes
   * in `arena` when given (the memory of cold keys released: a new one each time would stay
   * resident until collected).
   */
  static build(
    part: SortedPart,
    budget: number,
    arena = new Arena(),
    saved?: { path: string; epoch: number },
  ): ColdKeys {
    try {
      if (saved !== undefined) {
        const loaded = loadSaved(part, budget, arena, saved);
        if (loaded !== undefined)
          return new ColdKeys(part, budget, arena, loaded.sieve, loaded.end, loaded.firsts, loaded.sums);
      }
      const index = new ColdIndex(arena, part.count, budget);
      part.markAll();
      part.eachMarked((fingerprints) => index.add(fingerprints));
      const { firsts, sums } = index.index();
      // Made with an arena, the index has built its filter.
      const cold = new ColdKeys(part, budget, arena, index.sieve as KeySieve, index.end, firsts, sums);
      cold.scanned = true;
      if (saved !== undefined) saveBeside(index, saved);
      return cold;
    } catch (error) {
      part.close();
      throw error;
    }
  }

  /**
   * The cold keys of `part` (taken) from the filter and index a merge built while it wrote the part
   * (ColdIndex.parts), checked against the part's count: the filter is used where the merge's
   * thread built it, in its shared memory, with no copy. With `arena` (the memory of the cold keys
   * it replaces, whose filter the merge kept: ColdIndex.indexOnly), the filter is the one at
   * `parts.filter` there, kept as it is.
   */
  static adopt(part: SortedPart, budget: number, parts: ColdIndexParts, arena?: Arena): ColdKeys {
    try {
      if (parts.count !== part.count || parts.sums.length !== Math.ceil(part.count / BLOCK))
        throw new FormatError(
          `${part.where}: its sorted part holds ${part.count} keys, but the merge that wrote it indexed ${parts.count}`,
          "ERR_STORE_CORRUPT",
        );
      const over = arena ?? new Arena(instantiateSharedKernels(parts.memory));
      const sieve = KeySieve.inPlace(over, parts.filter, BATCH, 16);
      return new ColdKeys(part, budget, over, sieve, parts.filter.ptr + parts.filter.bytes, parts.firsts, parts.sums);
    } catch (error) {
      part.close();
      throw error;
    }
  }

  /**
   * Adds keys the set has just taken into memory to the filter, so that it holds every key the set
   * holds (a merge can then keep it as it is: keptFor), as long as it has the bits a filter of that
   * many keys would be given: past that it could never be kept, and adding more would only let more
   * absent keys through to a block read (a part's filter at 16 bits a key holds none more), so it
   * takes no more and is not kept. A key forgotten later keeps its bits: a block read more for it,
   * never a wrong answer (the block is searched).
   */
  note(packed: Uint8Array): void {
    if (!this.holdsAll || packed.length === 0) return;
    if (!this.roomFor(this.sieve.place.lines + packed.length / 16, this.budget)) {
      this.holdsAll = false;
      return;
    }
    for (let at = 0; at < packed.length; at += 16 * BATCH)
      this.sieve.add(packed.subarray(at, Math.min(packed.length, at + 16 * BATCH)), 16);
  }

  /** Whether the filter holds every key the set holds (note): a merge may keep it only then. */
  get holdsEveryKey(): boolean {
    return this.holdsAll;
  }

  /** The filter no longer holds every key the set holds (a kept filter whose old cold keys stopped noting). */
  lacksKeys(): void {
    this.holdsAll = false;
  }

  /**
   * The filter's shared memory and place, when a merge into a part of at most `keys` keys can
   * keep it as it is instead of building another (no second filter, no reading of its keys):
   * it holds every key held, is in a shared memory and has at least 8 bits a key and all that
   * filterBytes gives that many within `budget` (so a filter is kept only at its flat share of
   * the budget, between budget/4 and budget/2 keys: below, the share grows with the keys; above,
   * at 8 bits a key, every key more needs more bits). Else undefined: the merge builds a new one.
   */
  keptFor(keys: number, budget: number): { memory: WebAssembly.Memory; place: SievePlace } | undefined {
    if (!this.arena.shared || !this.holdsAll || !this.roomFor(keys, budget)) return undefined;
    return { memory: this.arena.k.memory, place: this.sieve.place };
  }

  /** Whether the filter has the bits a filter of `keys` keys within `budget` is given (and 8 a key at least). */
  private roomFor(keys: number, budget: number): boolean {
    const bits = this.sieve.place.blocks * FILTER_BLOCK * 8;
    return bits >= MIN_FILTER_BITS * keys && bits >= 8 * filterBytes(keys, budget);
  }

  /** Where the filter lies in its memory, the keys added to it counted. */
  get filter(): SievePlace {
    return this.sieve.place;
  }

  /** Keys in the sorted part. */
  get count(): number {
    return this.part.count;
  }

  /** Bytes of memory held: the filter's memory (the block index and the look-up's regions in it) and the checksums. */
  get byteLength(): number {
    return this.arena.k.memory.buffer.byteLength + this.sums.byteLength;
  }

  /** 1 for each packed fingerprint the sorted part holds. */
  has(packed: Uint8Array): Uint8Array {
    const n = packed.length / 16;
    const flags = new Uint8Array(n);
    this.asked += n;
    // Every key the filter lets through is copied beside the others (the filter's regions are reused by the next piece), with its place in `packed`.
    let m = 0;
    for (let from = 0; from < n; from += BATCH) {
      const piece = packed.subarray(16 * from, 16 * Math.min(n, from + BATCH));
      if (m + piece.length / 16 > LOOK_UP) {
        this.lookUp(m, flags);
        m = 0;
      }
      // Room first: growing memory would lose the view sieve() returns.
      this.ensure(m + piece.length / 16);
      const passed = this.sieve.sieve(piece);
      const p = passed.length / 16;
      if (p === 0) continue;
      this.r.keys.copyIn(this.arena.u8, passed, m);
      this.places.set(this.sieve.lastPlaces(p), m);
      for (let i = m; i < m + p; i++) this.places[i] += from;
      m += p;
    }
    if (m > 0) this.lookUp(m, flags);
    return flags;
  }

  /** Answers the m keys gathered in the keys region: found in the index, read in file order (blocks close together at once: a read costs more than the bytes between), searched in their blocks. */
  private lookUp(m: number, flags: Uint8Array): void {
    const { r, arena } = this;
    const k = arena.k;
    const located = k.coldLocate(r.firsts.ptr, this.blocks, r.keys.ptr, m, r.blocks.ptr, r.tags.ptr) >>> 0;
    const blocks = r.blocks.view(arena.u8, Uint32Array, 0, located);
    const tags = r.tags.view(arena.u8, Uint32Array, 0, located);
    const found = r.found.bytes(arena.u8, 0, m);
    for (let i = 0; i < located; ) {
      const first = blocks[i];
      const record = Math.floor(first / BLOCKS_A_RECORD);
      let j = i + 1;
      while (
        j < located &&
        blocks[j] - blocks[j - 1] <= GAP_BLOCKS &&
        blocks[j] - first < SPAN_BLOCKS &&
        Math.floor(blocks[j] / BLOCKS_A_RECORD) === record
      )
        j++;
      const last = blocks[j - 1];
      this.reads++;
      const keys = Math.min((last + 1) * BLOCK, this.part.count) - first * BLOCK;
      this.part.readFingerprints(first * BLOCK, keys, r.span.bytes(arena.u8, 0, keys));
      // Every block of the span the keys need is checked before any answer from it is trusted.
      for (let q = i; q < j; q++) if (q === i || blocks[q] !== blocks[q - 1]) this.verify(blocks[q], first, keys);
      k.coldFind(r.span.ptr, first, keys, BLOCK, r.keys.ptr, r.blocks.ptr, r.tags.ptr, i, j, r.found.ptr);
      i = j;
    }
    for (let q = 0; q < located; q++) if (found[tags[q]] === 1) flags[this.places[tags[q]]] = 1;
  }

  /** Releases the filter's memory and the part's descriptor. */
  close(): void {
    this.part.close();
  }

  /** Closes the part's descriptor and hands over the filter's memory, to be reused by the next cold keys (its contents are overwritten). */
  releaseArena(): Arena {
    this.part.close();
    return this.arena;
  }

  /** Filter bits a key of the sorted part. */
  get filterBits(): number {
    return this.sieve.bitsPerKey;
  }

  /** The rate at which a key not in the sorted part passes the filter, and costs a block read (what its size gives). */
  get filterFpRate(): number {
    return this.sieve.fpRate;
  }

  /** Checks block b's bytes as read now into the span (from block `first` on, `keys` fingerprints) against its checksum made at open. */
  private verify(b: number, first: number, keys: number): void {
    this.blocksRead++;
    const from = 16 * (b - first) * BLOCK;
    const bytes = Math.min(16 * keys, from + 16 * BLOCK) - from;
    if (checksumRegion(0n, this.arena, this.r.span.ptr + from, bytes) !== this.sums[b])
      throw new FormatError(
        `${this.part.where}: block ${b} of its sorted part (fingerprints ${b * BLOCK} to ${b * BLOCK + bytes / 16}) changed since it was read at open: the file was damaged`,
        "ERR_STORE_CORRUPT",
      );
  }
}
