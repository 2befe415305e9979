// The exports of build/crawlsieve.wasm as TypeScript sees them. Pointers and lengths are byte
// offsets into the instance's own memory; bit counts cross as f64 (exact below 2^53).
// test/kernels.test.ts holds these lists against the modules' own exports (names, kinds, number
// and types of parameters), so the two cannot drift.

/** The kernel functions of one instance. */
export interface Kernels {
  readonly memory: WebAssembly.Memory;
  /** Bytes of the streaming MD5 state (u32 global). */
  readonly MD5_STATE_BYTES: WebAssembly.Global;
  /** Bytes of md5Batch's scratch: four lanes' records and pad buffers (u32 global). */
  readonly MD5_LANES_SCRATCH_BYTES: WebAssembly.Global;
  /** Bytes of one slot of the Deduplicator's fingerprint table (u32 global). */
  readonly TABLE_SLOT_BYTES: WebAssembly.Global;
  /** Deduplicator stats: offset of the u64 count of table look-ups (u32 global). */
  readonly DEDUP_LOOKUPS: WebAssembly.Global;
  /** Deduplicator stats: offset of the u64 count of look-ups avoided (u32 global). */
  readonly DEDUP_AVOIDED: WebAssembly.Global;
  /** Deduplicator stats: offset of the u64 count of table entries (u32 global). */
  readonly DEDUP_ENTRIES: WebAssembly.Global;
  /** Deduplicator stats: offset of the u64 count of look-ups that found nothing (u32 global). */
  readonly DEDUP_LOOKUPS_NEW: WebAssembly.Global;
  /** Bytes of the Deduplicator's stats block (u32 global). */
  readonly DEDUP_STATS_BYTES: WebAssembly.Global;
  /** Age-partitioned state: offset of the u32 index of the newest slice (u32 global). */
  readonly AGED_FRONT: WebAssembly.Global;
  /** Age-partitioned state: offset of the u32 count of inserts into the current generation (u32 global). */
  readonly AGED_FILL: WebAssembly.Global;
  /** Bytes of the age-partitioned state record (u32 global). */
  readonly AGED_STATE_BYTES: WebAssembly.Global;
  /** Hash pair: offset of the u64 h2 (u32 global). */
  readonly HASH_H2: WebAssembly.Global;
  /** Bytes of one near-duplicate match record (query, id, position) (u32 global). */
  readonly ND_MATCH_BYTES: WebAssembly.Global;
  /** Near-duplicate match: offset of the u32 query index (u32 global). */
  readonly ND_MATCH_QUERY: WebAssembly.Global;
  /** Near-duplicate match: offset of the u32 stored id (u32 global). */
  readonly ND_MATCH_ID: WebAssembly.Global;
  /** Near-duplicate match: offset of the u32 table position (u32 global). */
  readonly ND_MATCH_POSITION: WebAssembly.Global;
  /** Bytes of the tokenizing kernels' state, the engine's scratch (u32 global). */
  readonly TOKEN_STATE_BYTES: WebAssembly.Global;
  /** Most tokens per shingle the tokenizing kernels take (u32 global). */
  readonly MAX_SHINGLE: WebAssembly.Global;
  /** Bytes of one near-duplicate table descriptor (u32 global). */
  readonly ND_TABLE_BYTES: WebAssembly.Global;
  /** Near-duplicate descriptor: offset of its entries' address (u32 global). */
  readonly ND_ENTRIES: WebAssembly.Global;
  /** Near-duplicate descriptor: offset of its directory's address (u32 global). */
  readonly ND_DIR: WebAssembly.Global;
  /** Near-duplicate descriptor: offset of its directory bits (u32 global). */
  readonly ND_BITS: WebAssembly.Global;
  /** Near-duplicate descriptor: offset of its piece count (u32 global). */
  readonly ND_PIECE_COUNT: WebAssembly.Global;
  /** Near-duplicate descriptor: offset of its first (offset, width) pair; pair i is 8 i bytes on (u32 global). */
  readonly ND_PIECES: WebAssembly.Global;
  /** Line context: offset of the mode (0 exact table, 1 Bloom stages) (u32 global). */
  readonly LINE_MODE: WebAssembly.Global;
  /** Line context: offset of the exact table's hash (0 MD5, 1 XXH3-128) (u32 global). */
  readonly LINE_HASH: WebAssembly.Global;
  /** Line context: offset of the output region's address (u32 global). */
  readonly LINE_OUT: WebAssembly.Global;
  /** Line context: offset of the bytes waiting in the output region (u32 global). */
  readonly LINE_OUT_LEN: WebAssembly.Global;
  /** Line context: offset of the scratch region's address (u32 global). */
  readonly LINE_SCRATCH: WebAssembly.Global;
  /** Line context: offset of the scalar-scan flag (u32 global). */
  readonly LINE_SCALAR: WebAssembly.Global;
  /** Line context: offset of the status (1: the seen-set must grow) (u32 global). */
  readonly LINE_STATUS: WebAssembly.Global;
  /** Line context: offset of the u64 count of lines worked (u32 global). */
  readonly LINE_LINES: WebAssembly.Global;
  /** Line context: offset of the u64 count of lines kept (u32 global). */
  readonly LINE_UNIQUE: WebAssembly.Global;
  /** Line context: offset of the exact table's address (u32 global). */
  readonly LINE_TABLE: WebAssembly.Global;
  /** Line context: offset of log2 of the table's partitions (u32 global). */
  readonly LINE_LOG_PARTS: WebAssembly.Global;
  /** Line context: offset of the buckets per partition (u32 global). */
  readonly LINE_BUCKETS: WebAssembly.Global;
  /** Line context: offset of the most keys a partition may hold (u32 global). */
  readonly LINE_LIMIT: WebAssembly.Global;
  /** Line context: offset of the address of the per-partition key counts (u32 global). */
  readonly LINE_COUNTS: WebAssembly.Global;
  /** Line context: offset of the Bloom stages in use (u32 global). */
  readonly LINE_STAGES: WebAssembly.Global;
  /** Line context: offset of the stage records' address (u32 global). */
  readonly LINE_STAGE_PTR: WebAssembly.Global;
  readonly LINE_FRESH: WebAssembly.Global;
  readonly LINE_FRESH_CAP: WebAssembly.Global;
  readonly LINE_FRESH_LEN: WebAssembly.Global;
  readonly LINE_SLOT: WebAssembly.Global;
  /** Bytes of the line context block (u32 global). */
  readonly LINE_CTX_BYTES: WebAssembly.Global;
  /** Bytes of the line kernels' scratch region (u32 global). */
  readonly LINE_SCRATCH_BYTES: WebAssembly.Global;
  /** Bytes of a line record of the split path (start, key end, line end, unterminated) (u32 global). */
  readonly SPLIT_LINE_BYTES: WebAssembly.Global;
  /** lineEmit's flag of a line printed as it is and not recorded (a record without its key, kept). */
  readonly EMIT_PASS: WebAssembly.Global;
  readonly LINE_STREAM_STATE_BYTES: WebAssembly.Global;
  /** Bytes of a spill record: 16-byte fingerprint and f64 spill index (u32 global). */
  readonly SPILL_RECORD_BYTES: WebAssembly.Global;
  /** Spill record: offset of its f64 spill index (u32 global). */
  readonly SPILL_RECORD_INDEX: WebAssembly.Global;
  /** Stage record: offset of the u32 address of its bits (u32 global). */
  readonly LINE_STAGE_BITS: WebAssembly.Global;
  /** Stage record: offset of its f64 block count (u32 global). */
  readonly LINE_STAGE_BLOCKS: WebAssembly.Global;
  /** Stage record: offset of its f64 count of keys set (u32 global). */
  readonly LINE_STAGE_KEYS: WebAssembly.Global;
  /** Stage record: offset of its f64 planned keys (u32 global). */
  readonly LINE_STAGE_CAPACITY: WebAssembly.Global;
  /** Bytes of one stage record (u32 global). */
  readonly LINE_STAGE_BYTES: WebAssembly.Global;
  heapBase(): number;
  xxh64(ptr: number, len: number, seed: bigint): bigint;
  xxh64Pieces(ptr: number, len: number, seed: bigint, piece: number): bigint;
  readonly XXH64_STATE_BYTES: WebAssembly.Global;
  xxh64Reset(state: number, seed: bigint): void;
  xxh64Update(state: number, ptr: number, len: number): void;
  xxh64Digest(state: number): bigint;
  hashPairs(keys: number, spans: number, count: number, out: number): void;
  fingerprintsXxh(keys: number, spans: number, count: number, out: number): void;
  bloomTest(bits: number, m: number, k: number, hashes: number, count: number, out: number): void;
  bloomSet(bits: number, m: number, k: number, hashes: number, count: number, skip: number, out: number): number;
  bloomHasKey(bits: number, m: number, k: number, key: number, len: number): number;
  bloomAddKey(bits: number, m: number, k: number, key: number, len: number): number;
  blockedTest(bits: number, blocks: number, k: number, hashes: number, count: number, out: number): void;
  blockedSet(bits: number, blocks: number, k: number, hashes: number, count: number, skip: number, out: number): number;
  blockedHasKey(bits: number, blocks: number, k: number, key: number, len: number): number;
  blockedAddKey(bits: number, blocks: number, k: number, key: number, len: number): number;
  popcountBytes(bits: number, bytes: number): number;
  /** Set bits among positions [from, to) of a bit array, for vectors that need not start or end on a byte. */
  popcountRange(bits: number, from: number, to: number): number;
  bloomPositions(m: number, partitions: number, k: number, hashes: number, count: number, out: number): void;
  blockedPositions(blocks: number, partitions: number, k: number, hashes: number, count: number, out: number): void;
  md5Init(state: number): void;
  md5Update(state: number, ptr: number, len: number): void;
  md5Final(state: number, out: number): void;
  md5(state: number, ptr: number, len: number, out: number): void;
  md5Batch(scratch: number, keys: number, spans: number, count: number, out: number): void;
  sha1(scratch: number, ptr: number, len: number, out: number): void;
  countingMin(counters: number, m: number, k: number, bits: number, hashes: number, count: number, out: number): void;
  countingAdd(
    counters: number,
    m: number,
    k: number,
    bits: number,
    hashes: number,
    count: number,
    skip: number,
    out: number,
  ): number;
  countingRemove(
    counters: number,
    m: number,
    k: number,
    bits: number,
    hashes: number,
    count: number,
    out: number,
  ): number;
  countingNonzero(counters: number, m: number, bits: number): number;
  dedupCheck(
    counters: number,
    m: number,
    k: number,
    bits: number,
    table: number,
    capacity: number,
    limit: number,
    digests: number,
    count: number,
    out: number,
    refs: number,
    stats: number,
  ): number;
  dedupRemove(
    counters: number,
    m: number,
    k: number,
    bits: number,
    table: number,
    capacity: number,
    digests: number,
    count: number,
    out: number,
    refs: number,
    stats: number,
  ): void;
  tableRehash(oldTable: number, oldCapacity: number, newTable: number, newCapacity: number): void;
  dedupCounts(table: number, capacity: number, digests: number, count: number, refs: number, write: number): void;
  simhashText(text: number, len: number, w: number, state: number): bigint;
  simhashDocs(text: number, spans: number, count: number, w: number, state: number, out: number): void;
  shingleText(text: number, len: number, w: number, state: number, out: number): number;
  shingleTokens(keys: number, spans: number, count: number, w: number, state: number, out: number): number;
  simhashWeighted(hashes: number, weights: number, count: number, sums: number): bigint;
  hamming(a: bigint, b: bigint): number;
  /** Most shingle hashes a text of `len` UTF-8 bytes gives: the u64 count of a `work` or `out` region. */
  shingleCapacity(len: number): number;
  ndBuildTable(
    desc: number,
    fps: number,
    srcDesc: number,
    ids: number,
    n: number,
    tableIds: number,
    cursor: number,
  ): void;
  ndOriginals(desc: number, from: number, n: number, out: number): void;
  ndQuery(
    descs: number,
    tables: number,
    n: number,
    ids: number,
    pfps: number,
    pids: number,
    pn: number,
    qs: number,
    nq: number,
    k: number,
    out: number,
    dists: number,
    cap: number,
    state: number,
  ): number;
  ndScan(
    desc0: number,
    n: number,
    ids: number,
    pfps: number,
    pids: number,
    pn: number,
    qs: number,
    nq: number,
    k: number,
    out: number,
    dists: number,
    cap: number,
    state: number,
  ): number;
  agedBatch(
    bits: number,
    sliceBytes: number,
    m: number,
    k: number,
    total: number,
    generation: number,
    state: number,
    hashes: number,
    count: number,
    mode: number,
    out: number,
  ): number;
  agedShift(bits: number, sliceBytes: number, total: number, state: number): void;
  multiDimBatch(
    bits: number,
    groups: number,
    n1: number,
    k1: number,
    n2: number,
    k2: number,
    rule: number,
    hashes: number,
    count: number,
    add: number,
    out: number,
  ): number;
  xxh128(ptr: number, len: number, out: number): void;
  xxh128Batch(keys: number, spans: number, count: number, out: number): void;
  /** XXH3-128 of each staged text after exact-first's normalization (assembly/exact-text.ts); rewrites the staged bytes. */
  exactTextDigests(keys: number, spans: number, count: number, out: number): void;
  lineDedup(ctx: number, buf: number, len: number, final: number): number;
  lineDigest(ctx: number, key: number, len: number, out: number): void;
  /** Starts the fingerprint of a key over 1,024 bytes in the state at `st` (LINE_STREAM_STATE_BYTES). */
  lineStreamInit(ctx: number, st: number): void;
  /** Feeds len bytes (a multiple of 1,024, XXH3's block) with more of the key to come. */
  lineStreamUpdate(ctx: number, st: number, p: number, len: number): void;
  /** Feeds the key's last len bytes (the 64 before p being the key's own) and writes the fingerprint of all `total` bytes. */
  lineStreamFinal(ctx: number, st: number, p: number, len: number, total: number, out: number): void;
  digestDedup(ctx: number, digest: number): number;
  /** Finds and fingerprints up to `max` lines into records and digests; returns the count. */
  lineScan(
    ctx: number,
    buf: number,
    len: number,
    final: number,
    max: number,
    records: number,
    digests: number,
    endAt: number,
  ): number;
  /** Fingerprints n key spans (u32 start, end; (0, 0): no key, an all-zero fingerprint) as the context hashes lines. */
  keyDigests(ctx: number, spans: number, n: number, digests: number): void;
  /** Tests-and-sets fingerprints [from, n) in the engine's own seen-set (zero ones passed by); returns where it stopped (status 1: grow first). */
  keyDedup(ctx: number, digests: number, flags: number, from: number, n: number): number;
  /** The f64 spill indexes of the flagged spill records; returns their count. */
  spillKept(records: number, flags: number, n: number, out: number): number;
  /** Stable counting sort of fixed-size records by some bits of one of their u64 words. */
  groupBy(
    src: number,
    n: number,
    size: number,
    word: number,
    shift: number,
    bits: number,
    dst: number,
    perm: number,
    starts: number,
  ): void;
  /** Grouped answers back into line order. */
  scatterFlags(grouped: number, perm: number, n: number, flags: number): void;
  /** Packs the fingerprints whose flag is 0 with their indices and clears every flag; returns how many. */
  gatherUnflagged(src: number, flags: number, n: number, dst: number, places: number): number;
  /** Puts the answers of a gathered subset back at their places in the batch. */
  scatterFlagsAt(grouped: number, perm: number, places: number, n: number, flags: number): void;
  /** Emits kept lines and spills the undecided ones; returns the lines spilled. */
  lineEmit(
    ctx: number,
    records: number,
    digests: number,
    flags: number,
    n: number,
    spillFrom: number,
    spill: number,
    spillRecords: number,
    first: number,
    spillLenAt: number,
  ): number;
  /** Copies a field of fixed-size records from one stride to another. */
  gather(src: number, n: number, srcStride: number, dst: number, dstStride: number, bytes: number): void;
  bucketsGrow(
    table: number,
    logParts: number,
    oldBuckets: number,
    newBuckets: number,
    scratch: number,
    slot: number,
  ): void;
  /** Sets every fingerprint of a bucket table in a blocked Bloom filter (approximate line dedup leaving its table phase). */
  bucketsToBlocked(table: number, bytes: number, bits: number, blocks: number): void;
  /** Sets n fingerprints, `stride` bytes apart, in a split-block filter (a store's keys are sieved against spilled lines). */
  splitBlockAddFingerprints(bits: number, blocks: number, src: number, n: number, stride: number): void;
  /** flags[i] = 1 when packed fingerprint i is surely not in a split-block filter, 0 when it may be. */
  splitBlockMissFingerprints(bits: number, blocks: number, src: number, n: number, flags: number): void;
  setAddMany(
    table: number,
    logParts: number,
    buckets: number,
    counts: number,
    limit: number,
    digests: number,
    n: number,
    out: number,
    slot: number,
  ): number;
  setHasMany(
    table: number,
    logParts: number,
    buckets: number,
    digests: number,
    n: number,
    out: number,
    slot: number,
  ): void;
  setRemoveMany(
    table: number,
    logParts: number,
    buckets: number,
    counts: number,
    digests: number,
    n: number,
    out: number,
    slot: number,
  ): number;
  /** Records timed fingerprints at `now` (cutoffs per key, or one cutoff): out[i] = 1 when not held; stops at a full partition (the exact windowed set). */
  timedAddMany(
    table: number,
    logParts: number,
    buckets: number,
    counts: number,
    limit: number,
    digests: number,
    n: number,
    out: number,
    now: number,
    cutoffs: number,
    cutoff: number,
    refresh: number,
  ): number;
  /** out[i] = 1 when timed fingerprint i is held at its cutoff; times[i] its time (0 absent). */
  timedRead(
    table: number,
    logParts: number,
    buckets: number,
    digests: number,
    n: number,
    out: number,
    times: number,
    cutoffs: number,
    cutoff: number,
  ): void;
  /** Removes timed fingerprints; out[i] = 1 when one was held at its cutoff; returns the slots freed. */
  timedRemoveMany(
    table: number,
    logParts: number,
    buckets: number,
    counts: number,
    digests: number,
    n: number,
    out: number,
    cutoffs: number,
    cutoff: number,
  ): number;
  /** Drops the timed keys with a time below `cutoff`, a partition at a time through a scratch of one; returns the count dropped. */
  timedSweep(table: number, logParts: number, buckets: number, counts: number, cutoff: number, scratch: number): number;
  /** counts[p] += the fingerprints of partition p (log compaction). */
  fpPartitionCounts(digests: number, n: number, logParts: number, counts: number): void;
  /** Copies the fingerprints of partitions [from, to) to their partition's cursor, flagged when forgotten (log compaction). */
  fpScatter(
    digests: number,
    n: number,
    logParts: number,
    from: number,
    to: number,
    cursors: number,
    out: number,
    forget: number,
  ): void;
  /** One partition's live fingerprints from its entries in log order, sorted, each once; returns how many. */
  fpCompactPartition(p: number, logParts: number, tail: number, nTail: number, scratch: number, out: number): number;
  sketchDocs(
    text: number,
    spans: number,
    count: number,
    w: number,
    k: number,
    bands: number,
    rows: number,
    state: number,
    work: number,
    bins: number,
    sketches: number,
    keys: number,
    unspaced: number,
    keyWords: number,
  ): number;
  estimatePairs(base: number, k: number, pairs: number, count: number, out: number): void;
  simhashDistinctText(text: number, len: number, w: number, state: number, work: number): bigint;
  simhashDistinctDocs(
    text: number,
    spans: number,
    count: number,
    w: number,
    state: number,
    work: number,
    out: number,
  ): void;
  recentProbe(table: number, setMask: number, hashes: number, count: number, out: number): number;
  recentInsert(table: number, setMask: number, hashes: number, count: number, skip: number): void;
  /** Finds each packed fingerprint's block in a sorted part's block index and sorts them by block; returns how many lie in one. */
  coldLocate(firsts: number, count: number, keys: number, n: number, blocks: number, tags: number): number;
  /** Searches located fingerprints in their blocks of a span read from the sorted part: found[tag] = 1 where present. */
  coldFind(
    span: number,
    spanBlock: number,
    spanKeys: number,
    perBlock: number,
    keys: number,
    blocks: number,
    tags: number,
    from: number,
    to: number,
    found: number,
  ): void;
}

/** The exports of build/crawlsieve-shared.wasm, which imports one shared memory. */
export interface SharedKernels {
  /** The imported shared memory, exported again. */
  readonly memory: WebAssembly.Memory;
  sharedSet(
    bits: number,
    shards: number,
    shardBytes: number,
    m: number,
    k: number,
    hashes: number,
    count: number,
    out: number,
  ): number;
  sharedTest(
    bits: number,
    shards: number,
    shardBytes: number,
    m: number,
    k: number,
    hashes: number,
    count: number,
    out: number,
  ): void;
  sharedPopcount(bits: number, bytes: number): number;
  sharedHeapBase(): number;
}
