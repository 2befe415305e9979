// From user options to a bit-storage geometry: sizing, explicit sizes, and partitioning.
import { InvalidArgumentError, FilterTooLargeError } from "../errors.js";
import {
  BLOCK_BITS,
  MAX_PLANNED_BYTES,
  blockedBloomFpRate,
  bloomFpRate,
  optimalBloom,
  optimalBlockedBloom,
  type BloomPlan,
  type BloomSize,
} from "../sizing/bloom.js";
import * as check from "../validate.js";
import { partitionBytes, type BitsGeometry, type Layout } from "./partitioned-bits.js";

/** Options of the Bloom filter constructors: a planned load, or explicit sizes. */
export interface BloomFilterOptions {
  /** Items planned (n); with fpRate, sizes the filter. */
  readonly items?: number;
  /** Wanted false-positive rate at `items` (p). */
  readonly fpRate?: number;
  /** Explicit size in bits (m), instead of items + fpRate. */
  readonly bits?: number;
  /** Explicit number of hash functions (k), with bits. */
  readonly hashes?: number;
  /** Largest partition in bytes (default 2 GiB); a bigger filter is split into partitions. */
  readonly maxPartitionBytes?: number;
}

/** What a filter was planned for, kept for reporting and serialization (0 when unknown). */
export interface PlannedLoad {
  readonly items: number;
  readonly fpRate: number;
}

/** Theory's FP rate at the planned load with a filter's own m and k (NaN with no planned load: built from explicit bits). */
export function designedRate(planned: PlannedLoad, layout: Layout, bits: number, hashes: number): number {
  if (planned.items === 0) return Number.NaN;
  const size = { bits, hashes, items: planned.items };
  return layout === "blocked" ? blockedBloomFpRate(size) : bloomFpRate(size);
}

/** Default largest partition: 2 GiB of bits, leaving room for staging in one wasm32 memory. */
export const DEFAULT_MAX_PARTITION_BYTES = 2 ** 31;
/** Most hash functions a filter may use. */
export const MAX_HASHES = 64;
const MAX_BITS = 2 ** 53 - 1;
/** Refused up front: past this a filter belongs on disk or in Redis, and allocating it would only fail slowly. */
export const MAX_TOTAL_BYTES = MAX_PLANNED_BYTES;

/** Resolves options into a geometry and the planned load; `sizer` replaces the layout's minimum-memory sizing of `{ items, fpRate }`. */
export function resolveGeometry(
  layout: Layout,
  value: unknown,
  counterBits?: number,
  sizer?: (plan: BloomPlan) => BloomSize,
): { geometry: BitsGeometry; plan: PlannedLoad } {
  const opts = check.options<BloomFilterOptions>("options", value);
  let bits: number;
  let hashes: number;
  let plan: PlannedLoad;
  if (opts.bits !== undefined || opts.hashes !== undefined) {
    if (opts.items !== undefined || opts.fpRate !== undefined) {
      throw new InvalidArgumentError("options", value, "either { items, fpRate } or { bits, hashes }, not both");
    }
    bits = check.positiveInteger("bits", opts.bits, MAX_BITS);
    hashes = check.positiveInteger("hashes", opts.hashes, MAX_HASHES);
    plan = { items: 0, fpRate: 0 };
  } else {
    const items = check.positiveInteger("items", opts.items);
    const fpRate = check.probability("fpRate", opts.fpRate);
    const size =
      sizer !== undefined
        ? sizer({ items, fpRate })
        : layout === "blocked"
          ? optimalBlockedBloom({ items, fpRate })
          : optimalBloom({ items, fpRate });
    if (size.bits > MAX_BITS) throw new FilterTooLargeError(size.bytes, `${size.bits} bits exceed 2^53`);
    bits = size.bits;
    hashes = Math.min(size.hashes, MAX_HASHES);
    plan = { items, fpRate };
  }
  const maxBytes =
    opts.maxPartitionBytes === undefined
      ? DEFAULT_MAX_PARTITION_BYTES
      : check.positiveInteger("maxPartitionBytes", opts.maxPartitionBytes, DEFAULT_MAX_PARTITION_BYTES);
  if (maxBytes % 64 !== 0) throw new InvalidArgumentError("maxPartitionBytes", maxBytes, "a multiple of 64");
  const bytes = (bits * (counterBits ?? 1)) / 8;
  if (bytes > MAX_TOTAL_BYTES)
    throw new FilterTooLargeError(Math.ceil(bytes), "it exceeds the 1 TiB limit of one in-process filter");
  const geometry = split(layout, bits, hashes, maxBytes, counterBits);
  return { geometry: counterBits === undefined ? geometry : { ...geometry, counterBits }, plan };
}

function split(layout: Layout, bits: number, hashes: number, maxBytes: number, counterBits?: number): BitsGeometry {
  if (layout === "blocked") {
    const blocks = Math.ceil(bits / BLOCK_BITS);
    const partitions = Math.ceil((blocks * 64) / maxBytes);
    return { layout, slots: Math.ceil(blocks / partitions), partitions, hashes };
  }
  const partitions = Math.ceil(partitionBytes({ layout, slots: bits, counterBits }) / maxBytes);
  return { layout, slots: Math.ceil(bits / partitions), partitions, hashes };
}

/** Total bits of a geometry (counters, for the counting layout). */
export function totalBits(geometry: BitsGeometry): number {
  return geometry.slots * geometry.partitions * (geometry.layout === "blocked" ? BLOCK_BITS : 1);
}
