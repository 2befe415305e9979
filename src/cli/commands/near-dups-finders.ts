// The similarity engines behind `near-dups`: MinHash (MinHashSpill: LSH candidates verified by
// the bottom-k estimate, the sketches on disk) and SimHash (NearDupIndex: Hamming distance). Each
// stores documents by number, streams the pairs reaching its threshold, and makes star clusters
// in a given order: each document joins its closest earlier representative, or becomes one.
import type { Clustering, ScoredPair } from "../../near-dup/groups.js";
import { MinHashSpill } from "../../near-dup/minhash-spill.js";
import { type SketchParams, type Sketches, sketchMany } from "../../near-dup/minhash.js";
import type { SketchPool } from "../../near-dup/sketch-pool.js";
import { NearDupIndex, type NearMatch } from "../../near-dup/simhash-index.js";
import { features } from "../../near-dup/features.js";
import { simhashMany } from "../../near-dup/simhash.js";

/** Documents queried at once by the SimHash engine: a batch's matches are what memory holds. */
const QUERY_DOCS = 256;

/** Reports a phase's progress: documents done, candidates verified. */
export type OnProgress = (done: number, verified: number) => void;

/** The similarity engine behind the command: one per mode. */
export interface Finder {
  /**
   * Stores documents `numbers` (consecutive from 0, continuing the last call's); returns the
   * numbers of those without a word. A promise when sketching runs on worker threads: calls may
   * overlap, and documents are still stored in call order.
   */
  add(numbers: number[], texts: string[]): number[] | Promise<number[]>;
  /** Every pair reaching the threshold, in batches as found. */
  pairBatches(onProgress: OnProgress): Iterable<ScoredPair[]>;
  /** Star clusters, documents taken in `order`. */
  cluster(order: Uint32Array, onProgress: OnProgress): Clustering;
  readonly field: "similarity" | "distance";
  dispose(): void;
}

/** The MinHash engine, which can also take the documents of a saved index and hand its sketches to a new one. */
export interface MinHashFinder extends Finder {
  /** Sketch parameters of this run. */
  readonly params: SketchParams;
  /** Stores documents sketched by an earlier run (a saved index's), numbered on from the last. */
  addSaved(batch: Sketches): void;
  /** Told every batch of sketches stored, in document order (--save-index writes them). */
  onStored: ((batch: Sketches) => void) | undefined;
}

/**
 * MinHash: sketches on disk in MinHashSpill (under `tmp`), band buckets in memory; it streams
 * pairs and clusters in one pass itself. With `pool`, a batch is sketched on the worker threads
 * while the next is read, and batches are stored in order (the same sketches, so the same output).
 */
export function minhashFinder(
  threshold: number,
  shingle: number,
  sketchSize: number,
  tmp: string | undefined,
  pool?: SketchPool,
  layout?: { readonly bands: number; readonly rows: number },
): MinHashFinder {
  const index = new MinHashSpill({ threshold, shingle, sketchSize, tmp, ...layout });
  let stored: Promise<unknown> = Promise.resolve();
  const store = (made: Sketches) => {
    const none = index.addSketches(made);
    finder.onStored?.(made);
    return none;
  };
  const finder: MinHashFinder = {
    field: "similarity",
    params: index.params,
    onStored: undefined,
    addSaved: (batch) => void store(batch),
    add(_numbers, texts) {
      if (pool === undefined) return store(sketchMany(texts, index.params));
      const sketches = pool.sketchMany(texts, index.params);
      const done = Promise.all([sketches, stored]).then(([made]) => store(made));
      stored = done.catch(() => undefined);
      return done;
    },
    pairBatches: (onProgress) => index.pairBatches(onProgress),
    cluster: (order, onProgress) => index.cluster(order, onProgress),
    dispose: () => index.dispose(),
  };
  return finder;
}

/**
 * SimHash: fingerprints in the permuted-table index; pairs and clusters come from queries in
 * batches (copies of one fingerprint in a batch share a query), so memory holds one batch's
 * matches, not every pair.
 */
export function simhashFinder(maxDistance: number, shingle: number): Finder {
  const index = new NearDupIndex({ maxDistance });
  const fps: (bigint | undefined)[] = [];
  /** The matches of each document of `docs` (those without a word have none). */
  const matches = (docs: ArrayLike<number>): NearMatch[][] => {
    const asked = new Map<bigint, number>();
    const which: number[] = [];
    for (let i = 0; i < docs.length; i++) {
      const fp = fps[docs[i]];
      if (fp === undefined) which.push(-1);
      else {
        if (!asked.has(fp)) asked.set(fp, asked.size);
        which.push(asked.get(fp)!);
      }
    }
    const found = index.queryMany([...asked.keys()]);
    return which.map((w) => (w === -1 ? [] : found[w]));
  };
  return {
    field: "distance",
    add(numbers, texts) {
      const sketched = simhashMany(texts, { shingle });
      const kept: number[] = [];
      const empty: number[] = [];
      texts.forEach((text, i) => {
        if (sketched[i] !== 0n || features(text, { shingle }).length > 0) {
          kept.push(i);
          fps[numbers[i]] = sketched[i];
        } else empty.push(numbers[i]);
      });
      index.addMany(
        kept.map((i) => numbers[i]),
        BigUint64Array.from(kept, (i) => sketched[i]),
      );
      return empty;
    },
    // Larger is closer for grouping: the score is minus the distance.
    *pairBatches(onProgress) {
      index.build();
      let verified = 0;
      for (let from = 0; from < fps.length; from += QUERY_DOCS) {
        onProgress(from, verified);
        const docs = Array.from({ length: Math.min(QUERY_DOCS, fps.length - from) }, (_, i) => from + i);
        const found = matches(docs);
        const batch: ScoredPair[] = [];
        docs.forEach((a, i) => {
          verified += found[i].length;
          const later = found[i].filter((m) => m.id > a).sort((x, y) => x.id - y.id);
          for (const m of later) batch.push({ a, b: m.id, similarity: -m.distance });
        });
        yield batch;
      }
    },
    cluster(order, onProgress) {
      index.build();
      const position = new Uint32Array(fps.length);
      order.forEach((id, i) => (position[id] = i));
      const leads = new Uint8Array(fps.length);
      const representatives = Uint32Array.from(order);
      const similarities = new Float64Array(order.length).fill(1);
      let verified = 0;
      for (let from = 0; from < order.length; from += QUERY_DOCS) {
        onProgress(from, verified);
        const docs = order.subarray(from, Math.min(order.length, from + QUERY_DOCS));
        const found = matches(docs);
        docs.forEach((id, i) => {
          if (fps[id] === undefined) return;
          let best = -1;
          let bestDistance = Infinity;
          for (const m of found[i]) {
            verified++;
            if (m.id === id || leads[m.id] === 0) continue;
            if (m.distance < bestDistance || (m.distance === bestDistance && position[m.id] < position[best])) {
              best = m.id;
              bestDistance = m.distance;
            }
          }
          if (best === -1) leads[id] = 1;
          else {
            representatives[from + i] = best;
            similarities[from + i] = -bestDistance;
          }
        });
      }
      return { ids: Uint32Array.from(order), representatives, similarities };
    },
    dispose: () => index.dispose(),
  };
}
