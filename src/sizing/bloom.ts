// Sizing math. For n items in m bits with k hash functions, a standard Bloom filter's
// false-positive rate is (1 - e^(-kn/m))^k; for a target p the optimum is m = -n ln p / (ln 2)^2
// bits and k = round(m/n ln 2). Worked example: n = 1e9, p = 0.01 gives about 9.585e9 bits
// (1.2 GB) and k = 7.
import { FilterTooLargeError, InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";

/** The size of a standard Bloom filter for a planned load. */
export interface BloomSize {
  /** Bits in the filter (m). */
  readonly bits: number;
  /** Hash functions (k). */
  readonly hashes: number;
  /** Bytes of the bit array, ceil(m / 8). */
  readonly bytes: number;
  /** The theoretical FP rate at the planned load with these (rounded) m and k. */
  readonly fpRate: number;
  /** Bits per planned item, m / n. */
  readonly bitsPerItem: number;
}

/** Planned load: items to be inserted and the wanted false-positive rate. */
export interface BloomPlan {
  readonly items: number;
  readonly fpRate: number;
}

const LN2 = Math.LN2;
/** Bits of one cache line: the block of the blocked variant. */
export const BLOCK_BITS = 512;

/** m and k for a standard Bloom filter holding `items` at `fpRate`. */
export function optimalBloom(plan: BloomPlan): BloomSize {
  const opts = check.options<BloomPlan>("plan", plan);
  const items = check.positiveInteger("items", opts.items);
  const fpRate = check.probability("fpRate", opts.fpRate);
  const bits = Math.ceil((-items * Math.log(fpRate)) / (LN2 * LN2));
  const hashes = Math.min(MAX_SIZED_HASHES, Math.max(1, Math.round((bits / items) * LN2)));
  return describe(bits, hashes, items, bloomFpRate({ bits, hashes, items }));
}

/**
 * m for a standard filter with exactly `hashes` probes that meets `fpRate` at `items`: from
 * (1 - e^(-kn/m))^k = p, m = -k n / ln(1 - p^(1/k)). Fewer probes than the optimum cost bits.
 */
export function bloomForHashes(plan: BloomPlan & { readonly hashes: number }): BloomSize {
  const opts = check.options<BloomPlan & { hashes: number }>("plan", plan);
  const items = check.positiveInteger("items", opts.items);
  const fpRate = check.probability("fpRate", opts.fpRate);
  const hashes = check.positiveInteger("hashes", opts.hashes, MAX_SIZED_HASHES);
  const bits = Math.ceil((-hashes * items) / Math.log1p(-Math.pow(fpRate, 1 / hashes)));
  return describe(bits, hashes, items, bloomFpRate({ bits, hashes, items }));
}

/** Memory the probe-thrifty sizing may spend over the minimum, by default. */
export const PROBE_THRIFTY_MEMORY = 1.6;

/**
 * The standard filter with the fewest probes whose memory stays within `memoryFactor` (default
 * 1.6) of the minimum. For stores where every probe is a remote operation (a Redis bit op costs
 * the server about half what a whole SADD does, and the client more), probes cost more than
 * bits. The default was chosen from measurement against the budget issue 17 set (at most 1/20
 * of a Redis SET's memory at p = 1e-4): there it gives k = 5 and 29 bits a key (1.51x the
 * minimum of k = 13 and 19.2), which measured faster than pipelined SADD at 1/23 of its memory,
 * where k = 6 (1.29x) was slower; elsewhere 1.5 and 1.6 pick the same k (3 at 1e-2, 4 at 1e-3,
 * 8 at 1e-6).
 */
export function probeThriftyBloom(plan: BloomPlan & { readonly memoryFactor?: number }): BloomSize {
  const opts = check.options<BloomPlan & { memoryFactor?: number }>("plan", plan);
  const least = optimalBloom({ items: opts.items as number, fpRate: opts.fpRate as number });
  const factor = opts.memoryFactor ?? PROBE_THRIFTY_MEMORY;
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1)
    throw new InvalidArgumentError("memoryFactor", factor, "a finite number of at least 1");
  for (let hashes = 1; hashes < least.hashes; hashes++) {
    const size = bloomForHashes({ items: opts.items as number, fpRate: opts.fpRate as number, hashes });
    if (size.bits <= least.bits * factor) return size;
  }
  return least;
}

/** (1 - e^(-kn/m))^k: the expected FP rate of a standard filter with m bits and k hashes after n items. */
export function bloomFpRate(size: { bits: number; hashes: number; items: number }): number {
  const { bits, hashes, items } = size;
  return Math.pow(-Math.expm1((-hashes * items) / bits), hashes);
}

/**
 * The expected FP rate of a cache-line-blocked filter: keys per block are Poisson with mean
 * n * B / m, and a block holding j keys answers falsely with (1 - (1 - 1/B)^(jk))^k.
 */
export function blockedBloomFpRate(size: { bits: number; hashes: number; items: number }): number {
  const { bits, hashes, items } = size;
  const perBit = Math.log1p(-1 / BLOCK_BITS);
  return overBlockLoads((items * BLOCK_BITS) / bits, (j) => Math.pow(-Math.expm1(j * hashes * perBit), hashes));
}

/** Bits a key sets in a split-block filter: one in each 32-bit word of its 512-bit block. */
export const SPLIT_BLOCK_HASHES = 16;

/**
 * The expected FP rate of a split-block filter (the line pipeline's approximate filter, see
 * assembly/split-block.ts): keys per 512-bit block are Poisson with mean n * 512 / m, and each of
 * a key's sixteen words holds its bit with probability 1 - (31/32)^j after j keys in the block.
 */
export function splitBlockBloomFpRate(size: { bits: number; items: number }): number {
  const perWord = Math.log1p(-1 / 32);
  return overBlockLoads((size.items * BLOCK_BITS) / size.bits, (j) =>
    Math.pow(-Math.expm1(j * perWord), SPLIT_BLOCK_HASHES),
  );
}

/** The mean of `rateWith(j)` over a Poisson number j of keys per block (mean lambda). */
function overBlockLoads(lambda: number, rateWith: (j: number) => number): number {
  let total = 0;
  // Sum the Poisson mixture far enough past the mean that the tail is negligible.
  const last = Math.ceil(lambda + 12 * Math.sqrt(lambda) + 20);
  let logPmf = -lambda;
  for (let j = 0; j <= last; j++) {
    if (j > 0) logPmf += Math.log(lambda) - Math.log(j);
    total += Math.exp(logPmf) * rateWith(j);
  }
  return total;
}

/** Largest filter planned for one process (1 TiB); past it a filter belongs on disk or in Redis. */
export const MAX_PLANNED_BYTES = 2 ** 40;

/** m (a whole number of 512-bit blocks) and k for a blocked filter meeting `fpRate` at `items`; FilterTooLargeError past 1 TiB. */
export function optimalBlockedBloom(plan: BloomPlan): BloomSize {
  const opts = check.options<BloomPlan>("plan", plan);
  const items = check.positiveInteger("items", opts.items);
  const fpRate = check.probability("fpRate", opts.fpRate);
  const base = optimalBloom({ items, fpRate });
  // Blocking costs memory at equal p: search the smallest block count (and its best k) that meets p.
  const blocks = fewestBlocks(
    items,
    fpRate,
    base,
    (b) => bestK(b * BLOCK_BITS, items).fpRate,
    "a blocked filter",
    "BloomFilter",
  );
  const best = bestK(blocks * BLOCK_BITS, items);
  return describe(blocks * BLOCK_BITS, best.hashes, items, best.fpRate);
}

/** m (a whole number of 512-bit blocks) for a split-block filter (k = 16) meeting `fpRate` at `items`; FilterTooLargeError past 1 TiB. */
export function optimalSplitBlockBloom(plan: BloomPlan): BloomSize {
  const opts = check.options<BloomPlan>("plan", plan);
  const items = check.positiveInteger("items", opts.items);
  const fpRate = check.probability("fpRate", opts.fpRate);
  const base = optimalBloom({ items, fpRate });
  const blocks = fewestBlocks(
    items,
    fpRate,
    base,
    (b) => splitBlockBloomFpRate({ bits: b * BLOCK_BITS, items }),
    "a split-block filter",
    "a standard filter",
  );
  const bits = blocks * BLOCK_BITS;
  return describe(bits, SPLIT_BLOCK_HASHES, items, splitBlockBloomFpRate({ bits, items }));
}

/**
 * The fewest 512-bit blocks whose rate (`rateAt(blocks)`, falling as blocks grow) meets fpRate,
 * searched from the standard filter's size up; FilterTooLargeError past the in-process limit.
 */
function fewestBlocks(
  items: number,
  fpRate: number,
  base: BloomSize,
  rateAt: (blocks: number) => number,
  what: string,
  instead: string,
): number {
  let lo = Math.max(1, Math.floor(base.bits / BLOCK_BITS));
  // A block holds at most 64 of its 512 bits per key, so very small rates need nearly empty
  // blocks: the search stops at the in-process limit instead of doubling without end.
  const maxBlocks = MAX_PLANNED_BYTES / 64;
  if (lo > maxBlocks)
    throw new FilterTooLargeError(
      lo * 64,
      `${what} for ${items} items at fpRate ${fpRate} exceeds the ${MAX_PLANNED_BYTES}-byte limit of one in-process filter`,
    );
  let hi = lo;
  while (rateAt(hi) > fpRate) {
    if (hi === maxBlocks) {
      throw new FilterTooLargeError(
        maxBlocks * 64,
        `${what} cannot reach fpRate ${fpRate} for ${items} items within ${MAX_PLANNED_BYTES} bytes (at most 64 bits per key in a 512-bit block); use ${instead}, which needs ${base.bytes} bytes`,
      );
    }
    hi = Math.min(hi * 2, maxBlocks);
  }
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (rateAt(mid) > fpRate) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Most hash functions the sizing functions choose (the filters accept up to 64). */
export const MAX_SIZED_HASHES = 64;

function bestK(bits: number, items: number): { hashes: number; fpRate: number } {
  // Sparse blocks favour more hashes than m/n ln 2, so every k up to the cap is tried.
  let best = { hashes: 1, fpRate: blockedBloomFpRate({ bits, hashes: 1, items }) };
  for (let hashes = 2; hashes <= MAX_SIZED_HASHES; hashes++) {
    const fpRate = blockedBloomFpRate({ bits, hashes, items });
    if (fpRate < best.fpRate) best = { hashes, fpRate };
  }
  return best;
}

/** Swamidass-Baldi estimate of the items in a filter from its set bits: -(m/k) ln(1 - X/m). */
export function estimateItems(size: { bits: number; hashes: number; setBits: number }): number {
  const { bits, hashes, setBits } = size;
  if (setBits >= bits) return Infinity;
  return (-bits / hashes) * Math.log1p(-setBits / bits);
}

function describe(bits: number, hashes: number, items: number, fpRate: number): BloomSize {
  return { bits, hashes, bytes: Math.ceil(bits / 8), fpRate, bitsPerItem: bits / items };
}

/**
 * Bound on counter overflow in a counting Bloom filter with m counters of `counterBits` bits at the
 * optimal load (Fan et al. 2000): P(max c >= 2^b) <= m (e ln 2 / 2^b)^(2^b); about 1.37e-15 m for b = 4.
 */
export function counterOverflowBound(size: { counters: number; counterBits: number }): number {
  const counters = check.positiveInteger("counters", size.counters);
  const counterBits = check.integerInRange("counterBits", size.counterBits, 1, 16);
  const limit = 2 ** counterBits;
  return Math.min(1, counters * Math.pow((Math.E * LN2) / limit, limit));
}

/** Memory and combined FP rate of a time window: L slices of a standard filter each, queried together. */
export function timeWindowSize(plan: { slices: number; itemsPerSlice: number; fpRate: number }): {
  slice: BloomSize;
  bytes: number;
  combinedFpRate: number;
} {
  const opts = check.options<{ slices: number; itemsPerSlice: number; fpRate: number }>("plan", plan);
  const slices = check.positiveInteger("slices", opts.slices);
  const slice = optimalBloom({
    items: check.positiveInteger("itemsPerSlice", opts.itemsPerSlice),
    fpRate: check.probability("fpRate", opts.fpRate),
  });
  return { slice, bytes: slice.bytes * slices, combinedFpRate: -Math.expm1(slices * Math.log1p(-slice.fpRate)) };
}
