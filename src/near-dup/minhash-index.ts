// Near-duplicates by estimated Jaccard similarity of word shingles: every document's MinHash
// sketches (src/near-dup/minhash.ts) are kept in WASM memory; LSH band keys (one-permutation
// hashing, `bands` of `rows` bins) find candidates in a Map of buckets, and every candidate is
// verified by the bottom-k estimate of its Jaccard similarity (in WASM, batches of pairs), so a
// reported pair is one whose estimate reaches the threshold, not one that merely shared a band.
// Online: add, remove and query at any time; pairs() is the batch mode over everything stored.
import { DisposedError, FormatError, InvalidArgumentError } from "../errors.js";
import { concat, Kind, writeContainer } from "../format/container.js";
import { fromStoredParams, payloadOf, readStored, type Recipe } from "../format/recipe.js";
import * as check from "../validate.js";
import { Arena } from "../wasm/arena.js";
import { array, type ArrayRegion } from "../wasm/array-region.js";
import { eachRun } from "../wasm/batch.js";
import type { Clustering } from "./groups.js";
import { checkSketchParams, lshLayout, sketchMany, type SketchParams, type Sketches } from "./minhash.js";
import { PAIR_REGIONS, PairBatch, reaches } from "./pair-batch.js";

/** Options of MinHashIndex. */
export interface MinHashIndexOptions {
  /** Least estimated Jaccard similarity reported, in (0, 1]; default 0.8. */
  readonly threshold?: number;
  /** Words per shingle, 1 to 16; default 3. */
  readonly shingle?: number;
  /** Values per bottom-k sketch (more: a closer estimate, 4 bytes each per document); default 512. */
  readonly sketchSize?: number;
  /** LSH bands and rows; default from the threshold (see lshLayout). */
  readonly bands?: number;
  readonly rows?: number;
}

/** A stored document similar to a query. */
export interface SimilarMatch {
  readonly id: number;
  /** Estimated Jaccard similarity. */
  readonly similarity: number;
}

/** Two stored documents similar to each other (a < b). */
export interface SimilarPair {
  readonly a: number;
  readonly b: number;
  readonly similarity: number;
}

/** Default values per sketch. */
export const DEFAULT_SKETCH_SIZE = 512;
const QUERY_BATCH = 256;
const NO_SLOT = 0xffffffff;
const MINHASH_PARAM_BYTES = 32;

/**
 * Format v1, kind 10: threshold and sketch parameters, document count; the payload is the ids,
 * then the sketches, then the band keys, whose length the parameters fix.
 */
const RECIPE: Recipe<{ options: MinHashIndexOptions; count: number }> = {
  kind: Kind.MinHashIndex,
  what: "a MinHash index",
  paramBytes: MINHASH_PARAM_BYTES,
  read(params, payloadBytes) {
    const threshold = params.getFloat64(0, true);
    if (!(threshold > 0 && threshold <= 1))
      throw new FormatError(`threshold ${threshold} is not in (0, 1]`, "ERR_BAD_PARAMS");
    const { shingle, k, bands, rows } = checkSketchParams({
      shingle: params.getUint32(8, true),
      k: params.getUint32(12, true),
      bands: params.getUint32(16, true),
      rows: params.getUint32(20, true),
    });
    const count = Number(params.getBigUint64(24, true));
    const perDoc = 4 * (1 + (k + 1) + bands);
    if (payloadBytes !== perDoc * count)
      throw new FormatError(
        `payload of ${payloadBytes} bytes where ${count} documents need ${perDoc * count}`,
        "ERR_BAD_PARAMS",
      );
    return { options: { threshold, shingle, sketchSize: k, bands, rows }, count };
  },
};

/** MinHash-LSH index with verification by estimated Jaccard. */
export class MinHashIndex {
  /** Least estimated similarity reported. */
  readonly threshold: number;
  /** Sketch parameters (shingle, k, bands, rows). */
  readonly params: SketchParams;
  private arena: Arena | undefined;
  // Regions: candidate pairs, their estimates, then the sketches: QUERY_BATCH query slots, then the
  // stored documents' slots (one region, as the kernel sees it: a pair names two slots of it).
  private readonly pairRegions: { readonly pairs: ArrayRegion; readonly out: ArrayRegion };
  /** One sketch a slot, 4 (k + 1) bytes (count, then k values); re-made when it grows. */
  private sketches: ArrayRegion;
  private capacity = 0;
  private slots = 0;
  private idOf = new Uint32Array(0);
  private keysOf = new Uint32Array(0);
  private empty = new Uint8Array(0);
  private readonly slotOf = new Map<number, number>();
  private readonly free: number[] = [];
  private readonly buckets = new Map<number, number | number[]>();

  constructor(options: MinHashIndexOptions = {}) {
    const opts = check.options<MinHashIndexOptions>("options", options);
    const threshold = opts.threshold ?? 0.8;
    if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1))
      throw new InvalidArgumentError("threshold", threshold, "a number in (0, 1]");
    this.threshold = threshold;
    const layout = lshLayout(threshold);
    this.params = checkSketchParams({
      shingle: opts.shingle ?? 3,
      k: opts.sketchSize ?? DEFAULT_SKETCH_SIZE,
      bands: opts.bands ?? layout.bands,
      rows: opts.rows ?? layout.rows,
    });
    this.arena = new Arena();
    const regions = this.arena.place(
      { ...PAIR_REGIONS, sketches: array(4 * (this.params.k + 1), 0) },
      this.arena.base,
      "the MinHash index",
    );
    this.pairRegions = regions;
    this.sketches = regions.sketches;
    this.grow(1024);
  }

  /** Documents stored. */
  get size(): number {
    return this.slotOf.size;
  }

  /** Bytes of WASM memory the sketches take now (the band Map lives in JS memory besides). */
  get byteLength(): number {
    return this.live().u8.length;
  }

  /** Stores a document's text under an id (a u32 of the caller's); an id stored before is replaced. */
  add(id: number, text: string): void {
    this.addMany([id], [text]);
  }

  /** Stores many documents: ids[i] for texts[i]. */
  addMany(ids: ArrayLike<number>, texts: readonly string[]): void {
    if (!Array.isArray(texts)) throw new InvalidArgumentError("texts", texts, "an array of strings");
    checkIds(ids, texts.length);
    this.addSketches(ids, sketchMany(texts, this.params));
  }

  /** Stores sketches made by sketchMany with this index's params (sketch in one place, index in another). */
  addSketches(ids: ArrayLike<number>, sketches: Sketches): void {
    this.checkSketches(sketches);
    checkIds(ids, sketches.count);
    const { bands, k } = this.params;
    for (let i = 0; i < sketches.count; i++) {
      const id = ids[i];
      if (this.slotOf.has(id)) this.remove(id);
      const slot = this.free.pop() ?? this.slots++;
      if (slot >= this.capacity) this.grow(this.capacity * 2);
      const arena = this.live();
      this.sketches.copyIn(arena.u8, sketches.values.subarray(i * (k + 1), (i + 1) * (k + 1)), QUERY_BATCH + slot);
      this.idOf[slot] = id;
      this.slotOf.set(id, slot);
      this.empty[slot] = sketches.values[i * (k + 1)] === 0 ? 1 : 0;
      if (this.empty[slot] === 1) continue; // a text without a word is a candidate of nothing
      for (let b = 0; b < bands; b++) {
        const key = sketches.keys[i * bands + b];
        this.keysOf[slot * bands + b] = key;
        const bucket = b * 0x100000000 + key;
        const list = this.buckets.get(bucket);
        if (list === undefined) this.buckets.set(bucket, slot);
        else if (typeof list === "number") this.buckets.set(bucket, [list, slot]);
        else list.push(slot);
      }
    }
  }

  /** Removes the document stored under `id`; false when there was none. */
  remove(id: number): boolean {
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff)
      throw new InvalidArgumentError("id", id, "an integer from 0 to 2^32 - 1");
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    const { bands } = this.params;
    for (let b = 0; b < bands && this.empty[slot] === 0; b++) {
      const bucket = b * 0x100000000 + this.keysOf[slot * bands + b];
      const list = this.buckets.get(bucket)!;
      if (typeof list === "number") this.buckets.delete(bucket);
      else {
        list.splice(list.indexOf(slot), 1);
        if (list.length === 1) this.buckets.set(bucket, list[0]);
      }
    }
    this.slotOf.delete(id);
    this.idOf[slot] = NO_SLOT;
    this.free.push(slot);
    return true;
  }

  /** Whether a document is stored under `id`. */
  has(id: number): boolean {
    return this.slotOf.has(id);
  }

  /** Stored documents whose estimated similarity to `text` reaches the threshold, most similar first. */
  query(text: string): SimilarMatch[] {
    return this.queryMany([text])[0];
  }

  /** query() for many texts. */
  queryMany(texts: readonly string[]): SimilarMatch[][] {
    if (!Array.isArray(texts)) throw new InvalidArgumentError("texts", texts, "an array of strings");
    return this.querySketches(sketchMany(texts, this.params));
  }

  /** query() for sketches made by sketchMany with this index's params. */
  querySketches(sketches: Sketches): SimilarMatch[][] {
    this.checkSketches(sketches);
    const { bands, k } = this.params;
    const results: SimilarMatch[][] = Array.from({ length: sketches.count }, () => []);
    const verify = this.pairBatch((q, slot, similarity) => results[q].push({ id: this.idOf[slot], similarity }));
    eachRun(sketches.count, QUERY_BATCH, (n, from) => {
      verify.flush(); // the query region is about to be overwritten
      this.sketches.copyIn(this.live().u8, sketches.values.subarray(from * (k + 1), (from + n) * (k + 1)), 0);
      for (let q = 0; q < n; q++) {
        const seen = new Set<number>();
        for (let b = 0; b < bands; b++) {
          const list = this.buckets.get(b * 0x100000000 + sketches.keys[(from + q) * bands + b]);
          if (list === undefined) continue;
          for (const slot of typeof list === "number" ? [list] : list) {
            if (seen.has(slot)) continue;
            seen.add(slot);
            verify.push(from + q, q, QUERY_BATCH + slot);
          }
        }
      }
      return n;
    });
    verify.flush();
    for (const list of results) list.sort((x, y) => y.similarity - x.similarity || x.id - y.id);
    return results;
  }

  /** Every pair of stored documents whose estimated similarity reaches the threshold (a < b, ordered by a then b). */
  pairs(): SimilarPair[] {
    return sorted(this.pairBatches());
  }

  /** Every pair that shares an LSH band, with its estimate, reaching the threshold or not (what pairs() verifies). */
  candidates(): SimilarPair[] {
    return sorted(this.pairBatches(false));
  }

  /**
   * pairs() as it is found, without holding it: one array per stored document (in the order they
   * were stored) of its pairs with documents stored after it, by their order. Memory stays that of
   * one document's pairs, so a cluster of n copies streams its n^2 / 2 pairs. With `filter` false,
   * every candidate with its estimate (candidates()). `onProgress` hears now and then how many
   * documents are done and how many candidates were verified.
   */
  *pairBatches(filter = true, onProgress?: (done: number, verified: number) => void): Generator<SimilarPair[]> {
    const { bands } = this.params;
    // mark[y] === x + 1: y is already a candidate of x (x meets y once in each band they share).
    const mark = new Uint32Array(this.slots);
    let found: SimilarPair[] = [];
    const verify = this.pairBatch((_, y, similarity, x) => {
      const a = this.idOf[x];
      const b = this.idOf[y];
      found.push(a < b ? { a, b, similarity } : { a: b, b: a, similarity });
    }, filter);
    let verified = 0;
    const later: number[] = [];
    for (let x = 0; x < this.slots; x++) {
      if ((x & 1023) === 0) onProgress?.(x, verified);
      if (this.idOf[x] === NO_SLOT || this.empty[x] === 1) continue;
      for (let b = 0; b < bands; b++) {
        const list = this.buckets.get(b * 0x100000000 + this.keysOf[x * bands + b]);
        if (typeof list !== "object") continue; // x alone in the bucket
        for (const y of list) {
          if (y <= x || mark[y] === x + 1) continue;
          mark[y] = x + 1;
          later.push(y);
        }
      }
      // Estimated in slot order, so the batch comes out in the order documents were stored.
      later.sort((p, q) => p - q);
      for (const y of later) verify.push(0, QUERY_BATCH + x, QUERY_BATCH + y);
      verified += later.length;
      later.length = 0;
      verify.flush();
      if (found.length > 0) {
        yield found;
        found = [];
      }
    }
  }

  /**
   * Star clusters at the threshold in O(documents + verified candidates): documents are taken in
   * `order` (stored ids, each once; by default ascending); each joins the most similar earlier
   * representative whose estimate reaches the threshold among those it shares an LSH band with,
   * or else becomes a representative itself. Only representatives are candidates, so n copies of
   * one page cost n - 1 estimates, not n^2 / 2, and every member is within the threshold of its
   * representative (no chains). A document without a word is its own representative.
   * `onProgress` hears now and then how many documents are done and candidates verified.
   */
  cluster(order?: ArrayLike<number>, onProgress?: (done: number, verified: number) => void): Clustering {
    const ids =
      order === undefined
        ? Uint32Array.from(this.slotOf.keys()).sort()
        : Uint32Array.from(checkOrder(order, this.slotOf));
    const { bands } = this.params;
    const representatives = new Uint32Array(ids.length);
    const similarities = new Float64Array(ids.length).fill(1);
    // Representatives by bucket, kept only for buckets that hold more than one document (a
    // document alone in all its buckets, the common case, is a candidate of nothing) and keyed by
    // the bucket's own list, which hashes faster than its number.
    const leaders = new Map<number[], number[]>();
    const shared: (number[] | undefined)[] = new Array(bands);
    const rank = new Uint32Array(this.slots); // a representative's position in `order`, plus 1
    const mark = new Uint32Array(this.slots);
    let best = -1;
    let bestSimilarity = -Infinity;
    const verify = this.pairBatch((_, rep, similarity) => {
      if (similarity > bestSimilarity || (similarity === bestSimilarity && rank[rep] < rank[best])) {
        best = rep;
        bestSimilarity = similarity;
      }
    });
    let verified = 0;
    for (let i = 0; i < ids.length; i++) {
      if ((i & 1023) === 0) onProgress?.(i, verified);
      const slot = this.slotOf.get(ids[i])!;
      representatives[i] = ids[i];
      if (this.empty[slot] === 1) continue;
      best = -1;
      bestSimilarity = -Infinity;
      for (let b = 0; b < bands; b++) {
        const list = this.buckets.get(b * 0x100000000 + this.keysOf[slot * bands + b]);
        shared[b] = typeof list === "object" ? list : undefined;
        const reps = shared[b] === undefined ? undefined : leaders.get(shared[b]!);
        if (reps === undefined) continue;
        for (const rep of reps) {
          if (mark[rep] === i + 1) continue;
          mark[rep] = i + 1;
          verified++;
          verify.push(0, QUERY_BATCH + slot, QUERY_BATCH + rep);
        }
      }
      verify.flush();
      if (best !== -1) {
        representatives[i] = this.idOf[best];
        similarities[i] = bestSimilarity;
        continue;
      }
      rank[slot] = i + 1;
      for (let b = 0; b < bands; b++) {
        const list = shared[b];
        if (list === undefined) continue;
        const reps = leaders.get(list);
        if (reps === undefined) leaders.set(list, [slot]);
        else reps.push(slot);
      }
    }
    return { ids, representatives, similarities };
  }

  /** Estimated similarities of pairs of stored ids (NaN where an id is not stored). */
  similarityMany(pairs: readonly (readonly [number, number])[]): Float64Array {
    const out = new Float64Array(pairs.length).fill(NaN);
    const verify = this.pairBatch((i, _, similarity) => (out[i] = similarity), false);
    pairs.forEach(([a, b], i) => {
      const sa = this.slotOf.get(a);
      const sb = this.slotOf.get(b);
      if (sa !== undefined && sb !== undefined) verify.push(i, QUERY_BATCH + sa, QUERY_BATCH + sb);
    });
    verify.flush();
    return out;
  }

  /** The estimated similarity of two stored documents, or undefined when either id is not stored. */
  similarity(a: number, b: number): number | undefined {
    const estimate = this.similarityMany([[a, b]])[0];
    return Number.isNaN(estimate) ? undefined : estimate;
  }

  /**
   * The index in serialization format v1: parameters, then per document (by ascending id) its id,
   * then the sketches, then the band keys; equal contents give equal bytes. Sketches depend on the
   * tokenizer and hashes of this format version (hash scheme 1), so they load as they were.
   */
  serialize(): Uint8Array {
    const { k, bands, shingle, rows } = this.params;
    const ids = Uint32Array.from(this.slotOf.keys()).sort();
    const n = ids.length;
    const values = new Uint32Array(n * (k + 1));
    const keys = new Uint32Array(n * bands);
    const u8 = this.live().u8;
    ids.forEach((id, i) => {
      const slot = this.slotOf.get(id)!;
      values.set(this.sketches.view(u8, Uint32Array, QUERY_BATCH + slot, 1), i * (k + 1));
      keys.set(this.keysOf.subarray(slot * bands, (slot + 1) * bands), i * bands);
    });
    const params = new Uint8Array(MINHASH_PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setFloat64(0, this.threshold, true);
    view.setUint32(8, shingle, true);
    view.setUint32(12, k, true);
    view.setUint32(16, bands, true);
    view.setUint32(20, rows, true);
    view.setBigUint64(24, BigInt(n), true);
    const tooLarge = (bytes: number) =>
      new FormatError(`index of ${bytes} bytes is too large for one array`, "ERR_TOO_LARGE");
    const bytes = (a: Uint32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    return writeContainer(
      Kind.MinHashIndex,
      params,
      concat([bytes(ids), bytes(values), bytes(keys)], tooLarge),
      tooLarge,
    );
  }

  /** Loads an index written by serialize(). */
  static deserialize(bytes: Uint8Array): MinHashIndex {
    const stored = readStored(bytes, RECIPE);
    const { options, count } = stored.params;
    // A copy: the views below need a 4-byte-aligned buffer of their own.
    const payload = payloadOf(stored).slice();
    const index = fromStoredParams(RECIPE.what, () => new MinHashIndex(options));
    const { k, bands } = index.params;
    const ids = new Uint32Array(payload.buffer, 0, count);
    const values = new Uint32Array(payload.buffer, 4 * count, count * (k + 1));
    const keys = new Uint32Array(payload.buffer, 4 * count * (k + 2), count * bands);
    for (let i = 0; i < count; i++) {
      if (i > 0 && ids[i] <= ids[i - 1])
        throw new FormatError(`document ids out of order at entry ${i}`, "ERR_BAD_PARAMS");
      if (values[i * (k + 1)] > k)
        throw new FormatError(
          `sketch ${i} claims ${values[i * (k + 1)]} values where at most ${k} fit`,
          "ERR_BAD_PARAMS",
        );
    }
    index.addSketches(ids, { params: index.params, count, values, keys });
    return index;
  }

  /** Releases the index's memory. */
  dispose(): void {
    this.arena = undefined;
  }

  /**
   * A batch of candidate pairs of kernel slots (x, y); `keep` gets those whose estimate reaches
   * the threshold (all with filter false) as (tag, y - QUERY_BATCH, similarity, x - QUERY_BATCH):
   * stored slots.
   */
  private pairBatch(
    keep: (tag: number, slot: number, similarity: number, other: number) => void,
    filter = true,
  ): PairBatch {
    const sketches = () => ({ arena: this.live(), ptr: this.sketches.ptr, k: this.params.k });
    return new PairBatch(this.pairRegions, sketches, (tag, x, y, similarity) => {
      if (!filter || reaches(similarity, this.threshold)) keep(tag, y - QUERY_BATCH, similarity, x - QUERY_BATCH);
    });
  }

  private live(): Arena {
    if (this.arena === undefined) throw new DisposedError("MinHashIndex");
    return this.arena;
  }

  private grow(capacity: number): void {
    this.sketches = this.live().place(
      { sketches: array(this.sketches.size, QUERY_BATCH + capacity) },
      this.sketches.ptr,
      "the MinHash index",
    ).sketches;
    const idOf = new Uint32Array(capacity).fill(NO_SLOT);
    idOf.set(this.idOf);
    this.idOf = idOf;
    const keysOf = new Uint32Array(capacity * this.params.bands);
    keysOf.set(this.keysOf);
    this.keysOf = keysOf;
    const empty = new Uint8Array(capacity);
    empty.set(this.empty);
    this.empty = empty;
    this.capacity = capacity;
  }

  private checkSketches(sketches: Sketches): void {
    const p = sketches?.params;
    const q = this.params;
    if (p === undefined || p.shingle !== q.shingle || p.k !== q.k || p.bands !== q.bands || p.rows !== q.rows) {
      throw new InvalidArgumentError("sketches", p, `sketches made with this index's params ${JSON.stringify(q)}`);
    }
  }
}

/** All the pairs of pairBatches(), ordered by a then b. */
function sorted(batches: Iterable<SimilarPair[]>): SimilarPair[] {
  const out: SimilarPair[] = [];
  for (const batch of batches) for (const pair of batch) out.push(pair);
  return out.sort((p, q) => p.a - q.a || p.b - q.b);
}

/** The ids of `order`, checked: each stored, each once. */
function checkOrder(order: ArrayLike<number>, slotOf: ReadonlyMap<number, number>): ArrayLike<number> {
  if (order === null || typeof order !== "object" || typeof order.length !== "number")
    throw new InvalidArgumentError("order", order, "an array of stored ids");
  const seen = new Set<number>();
  for (let i = 0; i < order.length; i++) {
    const id = order[i];
    if (!slotOf.has(id)) throw new InvalidArgumentError(`order[${i}]`, id, "the id of a stored document");
    if (seen.has(id))
      throw new InvalidArgumentError(`order[${i}]`, id, "an id not given before in order (each stored id once)");
    seen.add(id);
  }
  return order;
}

function checkIds(ids: ArrayLike<number>, count: number): void {
  if (ids === null || typeof ids !== "object" || typeof ids.length !== "number")
    throw new InvalidArgumentError("ids", ids, "an array of u32 ids");
  if (ids.length !== count) throw new InvalidArgumentError("ids", ids.length, `${count} ids, one per document`);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) {
      // JSON lines carry string ids: say how to store them.
      throw new InvalidArgumentError(
        `ids[${i}]`,
        id,
        `an integer from 0 to 2^32 - 1${typeof id === "string" ? " (for string ids, store each one's position in an array of them)" : ""}`,
      );
    }
  }
}
