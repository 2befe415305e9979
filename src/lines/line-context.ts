// The line kernels' context block and Bloom stage record as the module lays them out: the offsets
// are exported by assembly/line-dedup.ts and named here, once, with their types (every context
// field a u32 but the two line counts, u64; a stage's bits a u32, its counts f64).
import type { Kernels } from "../wasm/kernels.js";
import { f64, KernelRecord, u64 } from "../wasm/record.js";

/** Fields of the context block. */
export type LineField =
  | "mode"
  | "hash"
  | "out"
  | "outLen"
  | "scratch"
  | "scalar"
  | "status"
  | "lines"
  | "unique"
  | "table"
  | "logParts"
  | "buckets"
  | "limit"
  | "counts"
  | "stages"
  | "stagePtr"
  | "fresh"
  | "freshCap"
  | "freshLen"
  | "slot";

/** Fields of one Bloom stage record. */
export type StageField = "bits" | "blocks" | "keys" | "capacity";

/** Bytes of the context block, of its scratch region and of one stage record, as the module `k` says. */
export function lineSizes(k: Kernels): { context: number; scratch: number; stage: number } {
  return { context: k.LINE_CTX_BYTES.value, scratch: k.LINE_SCRATCH_BYTES.value, stage: k.LINE_STAGE_BYTES.value };
}

/** The context block at `ptr`, laid out as the module `k` exports. */
export function lineContext(k: Kernels, ptr: number): KernelRecord<LineField> {
  return new KernelRecord(ptr, {
    mode: k.LINE_MODE,
    hash: k.LINE_HASH,
    out: k.LINE_OUT,
    outLen: k.LINE_OUT_LEN,
    scratch: k.LINE_SCRATCH,
    scalar: k.LINE_SCALAR,
    status: k.LINE_STATUS,
    lines: u64(k.LINE_LINES),
    unique: u64(k.LINE_UNIQUE),
    table: k.LINE_TABLE,
    logParts: k.LINE_LOG_PARTS,
    buckets: k.LINE_BUCKETS,
    limit: k.LINE_LIMIT,
    counts: k.LINE_COUNTS,
    stages: k.LINE_STAGES,
    stagePtr: k.LINE_STAGE_PTR,
    fresh: k.LINE_FRESH,
    freshCap: k.LINE_FRESH_CAP,
    freshLen: k.LINE_FRESH_LEN,
    slot: k.LINE_SLOT,
  });
}

/** A stage record at `ptr` (one element of the stages' array region), laid out as the module `k` exports. */
export function stageRecord(k: Kernels, ptr: number): KernelRecord<StageField> {
  return new KernelRecord(ptr, {
    bits: k.LINE_STAGE_BITS,
    blocks: f64(k.LINE_STAGE_BLOCKS),
    keys: f64(k.LINE_STAGE_KEYS),
    capacity: f64(k.LINE_STAGE_CAPACITY),
  });
}
