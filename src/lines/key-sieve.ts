// A store's keys sieved by the lines waiting for them. Past the memory budget a store's keys are
// read whole at the end and set aside by partition beside the spilled lines (split-path.ts); only
// a key equal to a spilled line's fingerprint can change an answer, so a split-block Bloom filter
// of the spilled fingerprints (assembly/split-block.ts) lets through those and a small share of
// the rest, and the others are never written. It is the semi-join form of IMP-CB's filter: the
// filter is built on the side that is small at the end of a run (the lines that waited, not the
// store), and the store is read once, in order, with no random reads. It lives in memory a table
// no longer needs between the end of input and the resolution, which clears what it uses (or, for
// a run whose tables are too small for it, in a memory of its own: LineTables.spareMemory).
import type { Arena } from "../wasm/arena.js";
import { array, type ArrayRegion } from "../wasm/array-region.js";
import { layOut } from "../wasm/regions.js";
import { splitBlockBloomFpRate } from "../sizing/bloom.js";

/** Filter bits a spilled line: a false positive rate of 0.18%, and no fewer than 8 (11.5%) or the sieve is not worth its reading. */
const BITS_PER_LINE = 16;
const MIN_BITS_PER_LINE = 8;
const BLOCK_BYTES = 64;

/** Free memory of an instance: [ptr, ptr + bytes) of `arena`. */
export interface FreeMemory {
  readonly arena: Arena;
  readonly ptr: number;
  readonly bytes: number;
}

/** Where a sieve's filter lies in its memory, as inPlace() takes it over in another instance (e.g. a merge thread's, handed back with its shared memory). */
export interface SievePlace {
  readonly ptr: number;
  readonly bytes: number;
  /** Keys added, and the filter's 64-byte blocks. */
  readonly lines: number;
  readonly blocks: number;
}

/** A batch's staging (spill records or packed keys), the keys' answers, those let through and their places, then the filter's bits. */
function sieveLayout(ptr: number, batch: number, recordBytes: number) {
  return layOut(ptr, {
    staging: array(Math.max(16, recordBytes), batch),
    flags: array(1, batch),
    passed: array(16, batch),
    places: array(4, batch),
    bits: 0,
  });
}

/** A filter of the spilled lines' fingerprints that a store's keys pass through before they are set aside. */
export class KeySieve {
  private readonly staging: ArrayRegion;
  private readonly flags: ArrayRegion;
  private readonly passed: ArrayRegion;
  private readonly places: ArrayRegion;
  private readonly bits: number;
  private readonly blocks: number;
  /** Spilled lines added. */
  private lines = 0;
  /** Keys sieved, and keys let through. */
  keysIn = 0;
  keysOut = 0;

  private constructor(
    private readonly memory: FreeMemory,
    lines: number,
    batch: number,
    recordBytes: number,
    /** Given: the bits are another instance's, kept (inPlace); else they are made and zeroed. */
    blocks?: number,
  ) {
    const r = sieveLayout(memory.ptr, batch, recordBytes);
    this.staging = r.staging;
    this.flags = r.flags;
    this.passed = r.passed;
    this.places = r.places;
    this.bits = r.bits;
    this.blocks =
      blocks ??
      Math.min(
        Math.floor((memory.ptr + memory.bytes - r.bits) / BLOCK_BYTES),
        Math.ceil((lines * BITS_PER_LINE) / (8 * BLOCK_BYTES)),
      );
    if (blocks === undefined) memory.arena.u8.fill(0, this.bits, this.bits + this.blocks * BLOCK_BYTES);
  }

  /** The sieve another instance built in `arena`'s memory at `place` (its bits kept as they are). */
  static inPlace(arena: Arena, place: SievePlace, batch: number, recordBytes: number): KeySieve {
    const fixed = sieveLayout(0, batch, recordBytes).bits;
    if (place.blocks <= 0 || place.bytes - fixed < place.blocks * BLOCK_BYTES)
      throw new RangeError(`a sieve of ${place.blocks} blocks does not fit its ${place.bytes} bytes`);
    const sieve = new KeySieve(
      { arena, ptr: place.ptr, bytes: place.bytes },
      place.lines,
      batch,
      recordBytes,
      place.blocks,
    );
    sieve.lines = place.lines;
    return sieve;
  }

  /** Where this sieve lies in its memory, for inPlace() in another instance over the same memory. */
  get place(): SievePlace {
    return { ptr: this.memory.ptr, bytes: this.memory.bytes, lines: this.lines, blocks: this.blocks };
  }

  /** Where a sieve's bits begin, from the start of its memory (its batch's regions come first). */
  static bitsOffset(batch: number, recordBytes: number): number {
    return sieveLayout(0, batch, recordBytes).bits;
  }

  /** Bytes a sieve of `lines` lines takes at its full 16 bits a line. */
  static bytesFor(lines: number, batch: number, recordBytes: number): number {
    return (
      sieveLayout(0, batch, recordBytes).bits + Math.ceil((lines * BITS_PER_LINE) / (8 * BLOCK_BYTES)) * BLOCK_BYTES
    );
  }

  /** A sieve for `lines` spilled lines in `memory`, or undefined when it has too little room for them. */
  static over(memory: FreeMemory, lines: number, batch: number, recordBytes: number): KeySieve | undefined {
    const fixed = sieveLayout(0, batch, recordBytes).bits;
    if (Math.floor((memory.bytes - fixed) / BLOCK_BYTES) < Math.ceil((lines * MIN_BITS_PER_LINE) / (8 * BLOCK_BYTES)))
      return undefined;
    return new KeySieve(memory, lines, batch, recordBytes);
  }

  /** The rate at which a key not among the lines passes (what the filter's size gives). */
  get fpRate(): number {
    return splitBlockBloomFpRate({ bits: this.blocks * BLOCK_BYTES * 8, items: Math.max(1, this.lines) });
  }

  /** Filter bits a key added (its blocks' bits over the keys). */
  get bitsPerKey(): number {
    return (this.blocks * BLOCK_BYTES * 8) / Math.max(1, this.lines);
  }

  /** Adds spill records (`recordBytes` each, the fingerprint first), at most a batch. */
  add(records: Uint8Array, recordBytes: number): void {
    const n = records.length / recordBytes;
    const { arena } = this.memory;
    arena.u8.set(records, this.staging.ptr);
    arena.k.splitBlockAddFingerprints(this.bits, this.blocks, this.staging.ptr, n, recordBytes);
    this.lines += n;
  }

  /** The packed fingerprints (at most a batch) that may be among the lines, as a view valid until the next call. */
  sieve(packed: Uint8Array): Uint8Array {
    const n = packed.length / 16;
    const { arena } = this.memory;
    const k = arena.k;
    arena.u8.set(packed, this.staging.ptr);
    k.splitBlockMissFingerprints(this.bits, this.blocks, this.staging.ptr, n, this.flags.ptr);
    const m = k.gatherUnflagged(this.staging.ptr, this.flags.ptr, n, this.passed.ptr, this.places.ptr) >>> 0;
    this.keysIn += n;
    this.keysOut += m;
    return this.passed.bytes(arena.u8, 0, m);
  }

  /** Where in the last sieve()'s input each of the `n` keys it let through was, as a view valid until the next call. */
  lastPlaces(n: number): Uint32Array {
    return this.places.view(this.memory.arena.u8, Uint32Array, 0, n);
  }
}
