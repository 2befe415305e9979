// The kernel module: every export takes and returns numbers only (pointers, lengths, counts).
// The TypeScript layer owns memory layout; heapBase tells it where free memory begins, and the
// exported constants (*_BYTES globals) give it the sizes of records the kernels define, so no size
// is written twice. src/wasm/kernels.ts must list exactly these exports (test/kernels.test.ts).

export { xxh64, xxh64Pieces, hashPairs, fingerprintsXxh, HASH_H2, XXH64_STATE_BYTES, xxh64Reset, xxh64Update, xxh64Digest } from "./xxh64";
export { bloomTest, bloomSet, bloomHasKey, bloomAddKey, popcountBytes, popcountRange, bloomPositions } from "./bloom";
export { blockedTest, blockedSet, blockedHasKey, blockedAddKey, blockedPositions } from "./blocked-bloom";
export { md5Init, md5Update, md5Final, md5, md5Batch, MD5_STATE_BYTES } from "./md5";
export { MD5_LANES_SCRATCH_BYTES } from "./md5-lanes";
export { sha1 } from "./sha1";
export { countingMin, countingAdd, countingRemove, countingNonzero } from "./counting";
export { dedupCheck, dedupRemove, tableRehash, dedupCounts, TABLE_SLOT_BYTES, DEDUP_LOOKUPS, DEDUP_AVOIDED, DEDUP_ENTRIES, DEDUP_LOOKUPS_NEW, DEDUP_STATS_BYTES } from "./fingerprint-table";
export { agedBatch, agedShift, AGED_FRONT, AGED_FILL, AGED_STATE_BYTES } from "./age-partitioned";
export { multiDimBatch } from "./multi-dim";
export { simhashText, simhashDocs, shingleText, shingleTokens, simhashWeighted, hamming, shingleCapacity, TOKEN_STATE_BYTES, MAX_SHINGLE } from "./simhash";
export { ndBuildTable, ndOriginals, ndQuery, ndScan, ND_TABLE_BYTES, ND_ENTRIES, ND_DIR, ND_BITS, ND_PIECE_COUNT, ND_PIECES, ND_MATCH_BYTES, ND_MATCH_QUERY, ND_MATCH_ID, ND_MATCH_POSITION } from "./near-dup";
export { xxh128, xxh128Batch } from "./xxh3";
export { exactTextDigests } from "./exact-text";
export { lineDedup, lineDigest, digestDedup, lineStreamInit, lineStreamUpdate, lineStreamFinal, LINE_STREAM_STATE_BYTES } from "./line-dedup";
export {
  LINE_MODE, LINE_HASH, LINE_OUT, LINE_OUT_LEN, LINE_SCRATCH, LINE_SCALAR, LINE_STATUS, LINE_LINES, LINE_UNIQUE, LINE_TABLE, LINE_LOG_PARTS,
  LINE_BUCKETS, LINE_LIMIT, LINE_COUNTS, LINE_STAGES, LINE_STAGE_PTR, LINE_FRESH, LINE_FRESH_CAP, LINE_FRESH_LEN, LINE_SLOT, LINE_CTX_BYTES, LINE_SCRATCH_BYTES,
  LINE_STAGE_BITS, LINE_STAGE_BLOCKS, LINE_STAGE_KEYS, LINE_STAGE_CAPACITY, LINE_STAGE_BYTES,
} from "./line-dedup";
export { lineScan, groupBy, scatterFlags, gatherUnflagged, scatterFlagsAt, lineEmit, gather, spillKept, SPLIT_LINE_BYTES, SPILL_RECORD_BYTES, SPILL_RECORD_INDEX, EMIT_PASS } from "./line-split";
export { keyDigests, keyDedup } from "./line-keys";
export { bucketsGrow, bucketsToBlocked } from "./fingerprint-buckets";
export { splitBlockAddFingerprints, splitBlockMissFingerprints } from "./split-block";
export { setAddMany, setHasMany, setRemoveMany } from "./fingerprint-set";
export { timedAddMany, timedRead, timedRemoveMany, timedSweep } from "./timed-set";
export { fpPartitionCounts, fpScatter, fpCompactPartition } from "./fingerprint-compact";
export { sketchDocs, estimatePairs } from "./minhash";
export { simhashDistinctText, simhashDistinctDocs } from "./simhash";
export { recentProbe, recentInsert } from "./recent-cache";
export { coldLocate, coldFind } from "./cold-blocks";

/** First byte after the module's static data: the TypeScript layer allocates from here. */
export function heapBase(): usize {
  return __heap_base;
}
