// Candidate pairs of a SketchFile's documents checked by their estimated Jaccard similarity
// (the estimatePairs kernel, in batches): one document at a time is the current one, and the
// sketches of those it is compared with are read from the file into slots of WebAssembly memory
// and kept there, so the representative of a cluster of thousands of copies is read once. When
// the slots are full they are all let go at once (after the pairs queued so far are estimated).
import { DisposedError } from "../errors.js";
import { Arena } from "../wasm/arena.js";
import { array, type ArrayRegion } from "../wasm/array-region.js";
import { PAIR_REGIONS, PairBatch } from "./pair-batch.js";
import type { SketchFile } from "./sketch-file.js";

/** Memory the cached sketches may take by default. */
const CACHE_BYTES = 64 << 20;
/** Slot 0 holds the current document; the others, documents compared with it. */
const CURRENT = 0;

/** Estimates pairs (current document, other document) whose sketches are read from a SketchFile. */
export class SketchVerifier {
  private arena: Arena | undefined;
  private slots: ArrayRegion;
  private readonly maxSlots: number;
  private readonly slotOf = new Map<number, number>();
  private nextSlot = CURRENT + 1;
  private readonly batch: PairBatch;

  constructor(
    private readonly file: SketchFile,
    /** Memory for cached sketches (at least 256 of them are kept); default 64 MiB. */
    cacheBytes: number | undefined,
    /** Gets each estimated pair: the tag it was pushed with and the estimate. */
    done: (tag: number, similarity: number) => void,
  ) {
    const slotBytes = 4 * (file.k + 1);
    this.maxSlots = Math.max(256, Math.floor((cacheBytes ?? CACHE_BYTES) / slotBytes));
    this.arena = new Arena();
    const regions = this.arena.place(
      { ...PAIR_REGIONS, slots: array(slotBytes, 64) },
      this.arena.base,
      "the sketch cache",
    );
    this.slots = regions.slots;
    const sketches = () => ({ arena: this.live(), ptr: this.slots.ptr, k: file.k });
    this.batch = new PairBatch(regions, sketches, (tag, _x, _y, similarity) => done(tag, similarity));
  }

  /** Makes `doc` the current document: later pairs compare it with others. */
  current(doc: number): void {
    this.batch.flush(); // the pairs queued compare the previous current document
    this.file.read(doc, this.slots.bytes(this.live().u8, CURRENT, 1));
  }

  /** Queues the pair (current document, `doc`); `done` hears `tag` with its estimate at the next flush or when the batch is full. */
  push(doc: number, tag: number): void {
    this.batch.push(tag, CURRENT, this.slotFor(doc));
  }

  /** Estimates the pairs still queued. */
  flush(): void {
    this.batch.flush();
  }

  /** Releases the memory. */
  dispose(): void {
    this.arena = undefined;
  }

  private slotFor(doc: number): number {
    const cached = this.slotOf.get(doc);
    if (cached !== undefined) return cached;
    if (this.nextSlot === this.maxSlots) {
      this.batch.flush(); // the queued pairs name slots about to be reused
      this.slotOf.clear();
      this.nextSlot = CURRENT + 1;
    }
    const slot = this.nextSlot++;
    if (slot >= this.slots.length) {
      const arena = this.live();
      this.slots = arena.place(
        { slots: array(this.slots.size, Math.min(this.maxSlots, 2 * this.slots.length)) },
        this.slots.ptr,
        "the sketch cache",
      ).slots;
    }
    this.file.read(doc, this.slots.bytes(this.live().u8, slot, 1));
    this.slotOf.set(doc, slot);
    return slot;
  }

  private live(): Arena {
    if (this.arena === undefined) throw new DisposedError("SketchVerifier");
    return this.arena;
  }
}
