// LSH buckets without a map of them: documents whose band keys are equal in a band share that
// band's bucket, and all that later steps need is which bucket, if any, each document shares. So
// each document's key in each band is replaced by the number of its bucket (0 when it is alone
// there, as nearly every document of a collection is), one band at a time through a reused
// open-addressing table. Memory stays the keys' own 4 bytes per document and band, where a Map of
// buckets (the in-memory index's) costs some 80 bytes per entry and stops at 2^24 entries.

/** Marks a free table slot. */
const FREE = 0;

/**
 * Replaces keys[doc * bands + b] by the number of the bucket document `doc` shares in band b:
 * buckets are numbered from 1 across all bands, in the order their second member is met; 0 where
 * the document is alone, and for the documents `skip` flags (no words: a candidate of nothing).
 * Returns how many buckets there are.
 */
export function bandBuckets(keys: Uint32Array, docs: number, bands: number, skip: Uint8Array): number {
  let size = 1024;
  while (size < 2 * docs) size *= 2;
  const mask = size - 1;
  const tableKey = new Uint32Array(size);
  const tableHead = new Uint32Array(size); // the first document of the key, plus 1; FREE when empty
  const tableBucket = new Uint32Array(size);
  let buckets = 0;
  for (let b = 0; b < bands; b++) {
    tableHead.fill(FREE);
    for (let doc = 0; doc < docs; doc++) {
      const at = doc * bands + b;
      if (skip[doc] !== 0) {
        keys[at] = 0;
        continue;
      }
      const key = keys[at];
      // Band keys are hashes already; the multiply spreads keys that differ only in high bits.
      let slot = Math.imul(key, 0x9e3779b1) >>> 0;
      for (;;) {
        slot &= mask;
        if (tableHead[slot] === FREE) {
          tableKey[slot] = key;
          tableHead[slot] = doc + 1;
          tableBucket[slot] = 0;
          keys[at] = 0;
          break;
        }
        if (tableKey[slot] === key) {
          if (tableBucket[slot] === 0) {
            tableBucket[slot] = ++buckets;
            keys[(tableHead[slot] - 1) * bands + b] = buckets;
          }
          keys[at] = tableBucket[slot];
          break;
        }
        slot++;
      }
    }
  }
  return buckets;
}

/** The members of every bucket in document order: bucket id's are members[start[id - 1] .. start[id]). */
export interface BucketMembers {
  readonly start: Float64Array;
  readonly members: Uint32Array;
}

/** Lists each bucket's documents from the bucket numbers bandBuckets left in `buckets`. */
export function bucketMembers(buckets: Uint32Array, docs: number, bands: number, count: number): BucketMembers {
  const start = new Float64Array(count + 1);
  for (let i = 0; i < docs * bands; i++) if (buckets[i] !== 0) start[buckets[i]]++;
  for (let id = 1; id <= count; id++) start[id] += start[id - 1];
  const members = new Uint32Array(start[count]);
  const fill = Float64Array.from(start);
  // Documents in ascending order, so each bucket's list comes out sorted.
  for (let doc = 0; doc < docs; doc++) {
    for (let b = 0; b < bands; b++) {
      const id = buckets[doc * bands + b];
      if (id !== 0) members[fill[id - 1]++] = doc;
    }
  }
  return { start, members };
}
