// MinHash near-duplicates over a whole collection in about 100 bytes of memory a document: the
// verification sketches (the 8 KB a long page that keep F1 near 1) go to a temporary file as they
// are made (sketch-file.ts), memory keeps each document's band keys, which become bucket numbers once
// every document is in (band-buckets.ts), and a candidate pair's sketches are read back only to
// be estimated (sketch-verifier.ts). The answers are those of MinHashIndex with the same
// parameters: the same candidates (documents sharing a band), the same estimate, the same star
// clusters; what changes is where the sketches live. Batch use: add everything, then cluster or
// list the pairs (MinHashIndex stays the online index, with remove and query).
import { tmpdir } from "node:os";
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { bandBuckets, bucketMembers } from "./band-buckets.js";
import { Column } from "./column.js";
import type { Clustering } from "./groups.js";
import type { MinHashIndexOptions, SimilarPair } from "./minhash-index.js";
import { checkSketchParams, lshLayout, type SketchParams, type Sketches } from "./minhash.js";
import { reaches } from "./pair-batch.js";
import { SketchFile } from "./sketch-file.js";
import { SketchVerifier } from "./sketch-verifier.js";

/** Options of MinHashSpill: MinHashIndex's, and where the sketches are written. */
export interface MinHashSpillOptions extends MinHashIndexOptions {
  /** The folder the temporary sketch file is made in; default the system's temporary folder. */
  readonly tmp?: string;
  /** Memory for sketches read back and kept while they are compared (a cluster's representative); default 64 MiB. */
  readonly cacheBytes?: number;
  /** Values per bottom-k sketch, on disk (up to 4 bytes each per document); default 2048. */
  readonly sketchSize?: number;
}

/**
 * Values per sketch by default: twice what near-dups kept in memory before (1,024; MinHashIndex's
 * default is 512), since here they cost disk, not memory, and halve the estimate's variance (F1 at
 * J >= 0.9 on the Python manuals: 0.970 with 1,024, 0.984 with 2,048).
 */
export const DEFAULT_SPILL_SKETCH_SIZE = 2048;
/** No node: the end of a bucket's list of representatives. */
const NONE = 0xffffffff;

/** Near-duplicates of a collection added in full, then clustered or listed as pairs; documents are numbered 0, 1, ... as added. */
export class MinHashSpill {
  /** Least estimated similarity reported. */
  readonly threshold: number;
  /** Sketch parameters (shingle, k, bands, rows). */
  readonly params: SketchParams;
  private readonly file: SketchFile;
  /** Each document's band keys, then (once sealed) its bucket numbers. */
  private readonly keys: Column<Uint32Array>;
  private readonly empty = new Column(Uint8Array);
  private bucketCount = -1;
  private readonly cacheBytes: number | undefined;

  constructor(options: MinHashSpillOptions = {}) {
    check.options<MinHashSpillOptions>("options", options);
    if (options.cacheBytes !== undefined) check.integerInRange("cacheBytes", options.cacheBytes, 0, 2 ** 31);
    this.cacheBytes = options.cacheBytes;
    const threshold = options.threshold ?? 0.8;
    if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1))
      throw new InvalidArgumentError("threshold", threshold, "a number in (0, 1]");
    this.threshold = threshold;
    const layout = lshLayout(threshold);
    this.params = checkSketchParams({
      shingle: options.shingle ?? 3,
      k: options.sketchSize ?? DEFAULT_SPILL_SKETCH_SIZE,
      bands: options.bands ?? layout.bands,
      rows: options.rows ?? layout.rows,
    });
    this.keys = new Column(Uint32Array, this.params.bands);
    this.file = new SketchFile(options.tmp ?? tmpdir(), this.params.k);
  }

  /** Documents added. */
  get size(): number {
    return this.empty.rows;
  }

  /** Bytes of memory per document the index holds (band keys, the sketch's place on disk, a flag), not counting a phase's working arrays. */
  get bytesPerDocument(): number {
    return 4 * this.params.bands + 8 + 1;
  }

  /** Bytes the sketches take on disk. */
  get diskBytes(): number {
    return this.file.byteLength;
  }

  /** Adds sketches made by sketchMany with this index's params; returns the numbers of those without a word. */
  addSketches(sketches: Sketches): number[] {
    const p = sketches?.params;
    const q = this.params;
    if (p === undefined || p.shingle !== q.shingle || p.k !== q.k || p.bands !== q.bands || p.rows !== q.rows) {
      throw new InvalidArgumentError("sketches", p, `sketches made with this index's params ${JSON.stringify(q)}`);
    }
    if (this.bucketCount >= 0)
      throw new InvalidArgumentError(
        "sketches",
        sketches.count,
        "no more documents: the collection was clustered or listed already",
      );
    const first = this.size;
    const none: number[] = [];
    this.file.append(sketches.values, sketches.count);
    this.keys.append(sketches.keys, sketches.count);
    for (let i = 0; i < sketches.count; i++) {
      const wordless = sketches.values[i * (q.k + 1)] === 0;
      this.empty.push(wordless ? 1 : 0);
      if (wordless) none.push(first + i);
    }
    return none;
  }

  /**
   * Star clusters, as MinHashIndex.cluster() makes them: documents are taken in `order` (each
   * number once; default ascending); each joins the most similar earlier representative that
   * shares a band with it and reaches the threshold (ties: the one taken first), or else becomes
   * a representative. A cluster of n copies costs n - 1 estimates. A document without a word is
   * its own representative.
   */
  cluster(order?: ArrayLike<number>, onProgress?: (done: number, verified: number) => void): Clustering {
    onProgress?.(0, 0); // said before the buckets are made, which takes seconds at 1e7 documents
    const buckets = this.seal();
    const n = this.size;
    const ids = order === undefined ? Uint32Array.from({ length: n }, (_, i) => i) : checkOrder(order, n);
    const { bands } = this.params;
    const empty = this.empty.values;
    const representatives = new Uint32Array(ids.length);
    const similarities = new Float64Array(ids.length).fill(1);
    // Each bucket's representatives as a linked list of nodes, newest first.
    const lastRep = new Uint32Array(this.bucketCount).fill(NONE);
    const nodeRep = new Column(Uint32Array);
    const nodeNext = new Column(Uint32Array);
    const rank = new Uint32Array(n); // a representative's position in the order, plus 1
    const mark = new Uint32Array(n);
    let best = -1;
    let bestSimilarity = -Infinity;
    const verifier = new SketchVerifier(this.file, this.cacheBytes, (rep, similarity) => {
      if (!reaches(similarity, this.threshold)) return;
      if (similarity > bestSimilarity || (similarity === bestSimilarity && rank[rep] < rank[best])) {
        best = rep;
        bestSimilarity = similarity;
      }
    });
    let verified = 0;
    try {
      for (let i = 0; i < ids.length; i++) {
        if ((i & 1023) === 0) onProgress?.(i, verified);
        const doc = ids[i];
        representatives[i] = doc;
        if (empty[doc] === 1) continue;
        best = -1;
        bestSimilarity = -Infinity;
        let asked = false;
        for (let b = 0; b < bands; b++) {
          const id = buckets[doc * bands + b];
          if (id === 0) continue;
          const reps = nodeRep.values;
          const next = nodeNext.values;
          for (let node = lastRep[id - 1]; node !== NONE; node = next[node]) {
            const rep = reps[node];
            if (mark[rep] === i + 1) continue;
            mark[rep] = i + 1;
            if (!asked) verifier.current(doc);
            asked = true;
            verified++;
            verifier.push(rep, rep);
          }
        }
        verifier.flush();
        if (best !== -1) {
          representatives[i] = best;
          similarities[i] = bestSimilarity;
          continue;
        }
        rank[doc] = i + 1;
        for (let b = 0; b < bands; b++) {
          const id = buckets[doc * bands + b];
          if (id === 0) continue;
          nodeNext.push(lastRep[id - 1]);
          lastRep[id - 1] = nodeRep.rows;
          nodeRep.push(doc);
        }
      }
    } finally {
      verifier.dispose();
    }
    return { ids, representatives, similarities };
  }

  /**
   * Every pair whose estimate reaches the threshold, as found: one array per document (ascending)
   * of its pairs with later documents, by their number. Memory holds one document's pairs.
   */
  *pairBatches(onProgress?: (done: number, verified: number) => void): Generator<SimilarPair[]> {
    onProgress?.(0, 0); // said before the buckets are made, which takes seconds at 1e7 documents
    const buckets = this.seal();
    const n = this.size;
    const { bands } = this.params;
    const { start, members } = bucketMembers(buckets, n, bands, this.bucketCount);
    const empty = this.empty.values;
    const mark = new Uint32Array(n);
    const later: number[] = [];
    let x = 0;
    let found: SimilarPair[] = [];
    const verifier = new SketchVerifier(this.file, this.cacheBytes, (y, similarity) => {
      if (reaches(similarity, this.threshold)) found.push({ a: x, b: y, similarity });
    });
    let verified = 0;
    try {
      for (; x < n; x++) {
        if ((x & 1023) === 0) onProgress?.(x, verified);
        if (empty[x] === 1) continue;
        for (let b = 0; b < bands; b++) {
          const id = buckets[x * bands + b];
          if (id === 0) continue;
          // The bucket's members are sorted: start past x.
          let lo = start[id - 1];
          let hi = start[id];
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (members[mid] <= x) lo = mid + 1;
            else hi = mid;
          }
          for (let j = lo; j < start[id]; j++) {
            const y = members[j];
            if (mark[y] === x + 1) continue;
            mark[y] = x + 1;
            later.push(y);
          }
        }
        if (later.length === 0) continue;
        later.sort((p, q) => p - q);
        verifier.current(x);
        for (const y of later) verifier.push(y, y);
        verifier.flush();
        verified += later.length;
        later.length = 0;
        if (found.length > 0) {
          yield found;
          found = [];
        }
      }
    } finally {
      verifier.dispose();
    }
  }

  /** Removes the sketch file and lets the memory go. */
  dispose(): void {
    this.file.close();
  }

  /** Turns the band keys into bucket numbers once every document is in; returns them. */
  private seal(): Uint32Array {
    if (this.bucketCount < 0) {
      this.bucketCount = bandBuckets(this.keys.values, this.size, this.params.bands, this.empty.values);
    }
    return this.keys.values;
  }
}

/** The documents of `order`, checked: each a number below n, each once. */
function checkOrder(order: ArrayLike<number>, n: number): Uint32Array {
  if (order === null || typeof order !== "object" || typeof order.length !== "number")
    throw new InvalidArgumentError("order", order, "an array of document numbers");
  const seen = new Uint8Array(n);
  const ids = new Uint32Array(order.length);
  for (let i = 0; i < order.length; i++) {
    const id = order[i];
    if (!Number.isInteger(id) || id < 0 || id >= n)
      throw new InvalidArgumentError(`order[${i}]`, id, `the number of an added document (0 to ${n - 1})`);
    if (seen[id] === 1)
      throw new InvalidArgumentError(`order[${i}]`, id, "a number not given before in order (each document once)");
    seen[id] = 1;
    ids[i] = id;
  }
  return ids;
}
