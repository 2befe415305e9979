// The geometry of the bucket tables of 128-bit fingerprints (assembly/fingerprint-buckets.ts), in
// one place for every structure that keeps one: FingerprintSet and the exact line tables. A table
// is PARTS partitions of 64-byte buckets; a slot keeps the whole fingerprint (wide) or the low word
// and 32 bits of the high word (compact), the partition implying the high word's top LOG_PARTS bits.

/** Partitions: growth works one at a time through a scratch of one partition, so the peak is 1/64 over the new table. */
export const LOG_PARTS = 6;
export const PARTS = 1 << LOG_PARTS;

/** How a table keeps a fingerprint. */
export interface SlotLayout {
  /** Bytes of a slot: the kernels' `slot` argument. */
  readonly bytes: 12 | 16;
  /** Slots of a 64-byte bucket. */
  readonly perBucket: 4 | 5;
  /** Keys a partition may hold per slot before the table grows. */
  readonly maxLoad: number;
}

/**
 * 12-byte slots, 5 a bucket: the exact line table's (102 bits compared with the partition's).
 * Loaded to 0.9: five slots a bucket keep probe runs short there, and a full table is what a user's
 * memory pays for.
 */
export const COMPACT: SlotLayout = { bytes: 12, perBucket: 5, maxLoad: 0.9 };
/** 16-byte slots, 4 a bucket: the whole fingerprint (FingerprintSet serializes it; approximate dedup's exact phase hands it to its filter). */
export const WIDE: SlotLayout = { bytes: 16, perBucket: 4, maxLoad: 0.85 };
/**
 * 16-byte timed slots, 4 a bucket: the compact key (102 bits compared) and its time in whole
 * seconds (assembly/timed-set.ts, the exact windowed set); read as a wide slot for growth.
 */
export const TIMED: SlotLayout = { bytes: 16, perBucket: 4, maxLoad: 0.85 };

/** Most keys a partition of `buckets` buckets takes before it must grow. */
export function partitionLimit(buckets: number, layout: SlotLayout): number {
  return Math.min(buckets * layout.perBucket - 1, Math.floor(buckets * layout.perBucket * layout.maxLoad));
}

/** Buckets a partition that hold `items` keys spread over the partitions at the layout's largest load. */
export function bucketsFor(items: number, layout: SlotLayout): number {
  return Math.ceil(items / PARTS / (layout.perBucket * layout.maxLoad));
}
