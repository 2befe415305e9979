// The line kernels' context block and Bloom stage record as the module lays them out: the offsets
// are exported by assembly/line-dedup.ts and read here, once per instance, so they are written in
// one place only. Every field of the block is a u32 except the two line counts (u64).
import type { Arena } from "../wasm/arena.js";
import type { Kernels } from "../wasm/kernels.js";

/** Byte offsets of the context block's fields, and the sizes of the block and its scratch. */
export interface LineContext {
  readonly mode: number;
  readonly hash: number;
  readonly out: number;
  readonly outLen: number;
  readonly scratch: number;
  readonly scalar: number;
  readonly status: number;
  readonly lines: number;
  readonly unique: number;
  readonly table: number;
  readonly logParts: number;
  readonly buckets: number;
  readonly limit: number;
  readonly counts: number;
  readonly stages: number;
  readonly stagePtr: number;
  readonly bytes: number;
  readonly scratchBytes: number;
}

/** Byte offsets of one Bloom stage record's fields, and its size. */
export interface StageRecord {
  readonly bits: number;
  readonly blocks: number;
  readonly keys: number;
  readonly capacity: number;
  readonly bytes: number;
}

/** The context layout the module `k` exports. */
export function lineContext(k: Kernels): LineContext {
  return {
    mode: k.LINE_MODE.value,
    hash: k.LINE_HASH.value,
    out: k.LINE_OUT.value,
    outLen: k.LINE_OUT_LEN.value,
    scratch: k.LINE_SCRATCH.value,
    scalar: k.LINE_SCALAR.value,
    status: k.LINE_STATUS.value,
    lines: k.LINE_LINES.value,
    unique: k.LINE_UNIQUE.value,
    table: k.LINE_TABLE.value,
    logParts: k.LINE_LOG_PARTS.value,
    buckets: k.LINE_BUCKETS.value,
    limit: k.LINE_LIMIT.value,
    counts: k.LINE_COUNTS.value,
    stages: k.LINE_STAGES.value,
    stagePtr: k.LINE_STAGE_PTR.value,
    bytes: k.LINE_CTX_BYTES.value,
    scratchBytes: k.LINE_SCRATCH_BYTES.value,
  };
}

/** The stage record layout the module `k` exports. */
export function stageRecord(k: Kernels): StageRecord {
  return {
    bits: k.LINE_STAGE_BITS.value,
    blocks: k.LINE_STAGE_BLOCKS.value,
    keys: k.LINE_STAGE_KEYS.value,
    capacity: k.LINE_STAGE_CAPACITY.value,
    bytes: k.LINE_STAGE_BYTES.value,
  };
}

/** Writes the u32 `value` into the field at `offset` of the context block at `ctx`. */
export function setField(arena: Arena, ctx: number, offset: number, value: number): void {
  arena.u32[(ctx + offset) >>> 2] = value;
}

/** Reads the u32 field at `offset` of the context block at `ctx`. */
export function field(arena: Arena, ctx: number, offset: number): number {
  return arena.u32[(ctx + offset) >>> 2];
}
