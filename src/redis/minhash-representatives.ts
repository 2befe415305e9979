// Which documents of a batch become representatives of their band buckets, as MinHashIndex.cluster
// decides in memory: documents are taken in batch order; each answers the most similar
// representative it shares a band with (those Redis held when read, then the batch's own new ones)
// whose estimate reaches the threshold, or else becomes a representative, to be appended to each
// of its buckets that has room. Copies of one page so cost one representative a bucket, not one
// id per copy, and a bucket never holds more than `room` ids, so reading and appending to it cost
// the same whatever the index stored.
import { reaches } from "../near-dup/pair-batch.js";

/** A candidate answered: its id hash (latin1) and estimated similarity. */
export interface Found {
  readonly hash: string;
  readonly similarity: number;
}

/** One representative to append to a band bucket, with how many ids the bucket held when read. */
export interface Append {
  readonly doc: number;
  readonly band: number;
  readonly read: number;
}

/** A batch's band buckets as read from Redis, and how to estimate a document against candidates. */
export interface BatchBands {
  readonly bands: number;
  /** fields[doc * bands + b]: the band field of document doc in band b (latin1 bytes). */
  readonly fields: readonly string[];
  /** The id hash of each document (latin1 bytes). */
  readonly self: readonly string[];
  /** The documents to decide, in batch order. */
  readonly pending: readonly number[];
  /** Whether a document may become a representative (its id holds this text). */
  readonly canLead: (doc: number) => boolean;
  /** The representatives each field held when read, in order. */
  readonly read: ReadonlyMap<string, readonly string[]>;
  /** Most ids a bucket keeps. */
  readonly room: number;
  readonly threshold: number;
  /** Estimates of document doc against candidate hashes (NaN where a sketch is unknown). */
  readonly estimate: (doc: number, hashes: readonly string[]) => ArrayLike<number>;
}

/** Each pending document's answer (null: none reached the threshold) and the appends of those that became representatives. */
export function chooseRepresentatives(batch: BatchBands): { best: (Found | null)[]; appends: Append[] } {
  const { bands, fields, self, read, room } = batch;
  const best: (Found | null)[] = new Array(self.length).fill(null);
  const appends: Append[] = [];
  const added = new Map<string, string[]>();
  for (const doc of batch.pending) {
    const met = new Set<string>([self[doc]]);
    const candidates: string[] = [];
    for (let b = 0; b < bands; b++) {
      const field = fields[doc * bands + b];
      for (const list of [read.get(field), added.get(field)]) {
        for (const hash of list ?? []) {
          if (met.has(hash)) continue;
          met.add(hash);
          candidates.push(hash);
        }
      }
    }
    best[doc] = bestOf(candidates, candidates.length === 0 ? [] : batch.estimate(doc, candidates), batch.threshold);
    if (best[doc] !== null || !batch.canLead(doc)) continue;
    for (let b = 0; b < bands; b++) {
      const field = fields[doc * bands + b];
      const held = read.get(field) ?? [];
      const more = added.get(field) ?? [];
      if (held.includes(self[doc]) || held.length + more.length >= room) continue;
      appends.push({ doc, band: b, read: held.length });
      added.set(field, [...more, self[doc]]);
    }
  }
  return { best, appends };
}

/** The candidate of highest estimate reaching the threshold; of equal ones, the first. */
export function bestOf(hashes: readonly string[], estimates: ArrayLike<number>, threshold: number): Found | null {
  let found: Found | null = null;
  hashes.forEach((hash, j) => {
    const similarity = estimates[j];
    if (reaches(similarity, threshold) && (found === null || similarity > found.similarity))
      found = { hash, similarity };
  });
  return found;
}
