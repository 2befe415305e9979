// Sizing of the age-partitioned Bloom filter (Shtul, Baquero, Almeida 2020). With k + l slices
// of m bits and a generation of g inserts, the slice of age j (0 = newest) holds g * min(j + 1, k)
// keys when the current generation is full, so its bit is set for an absent key with probability
// r_j = 1 - e^(-g min(j+1, k) / m). A query is positive when some k consecutive ages all answer
// 1; with the slices independent that probability is computed exactly by following the length
// of the current run of 1s along the ages.
import * as check from "../validate.js";

/** The shape of an age-partitioned filter. */
export interface AgePartitionedShape {
  /** Slices a key is written to and must be found in consecutively (k). */
  readonly hashes: number;
  /** Extra slices that set how long keys live (l). */
  readonly slack: number;
  /** Inserts per generation (g): the ring shifts after each g inserts. */
  readonly generation: number;
  /** Bits per slice (m). */
  readonly sliceBits: number;
}

/** A sized age-partitioned filter. */
export interface AgePartitionedSize extends AgePartitionedShape {
  /** All bits, (k + l) m. */
  readonly bits: number;
  /** Bytes of the slices, each rounded up to a 64-byte line. */
  readonly bytes: number;
  /** FP rate when the current generation is full (the worst moment). */
  readonly fpRate: number;
  /** Every key among the last l g inserts is reported present. */
  readonly retainsAtLeast: number;
  /** No key older than (l + 1) g inserts is reported present (barring false positives). */
  readonly retainsAtMost: number;
}

/** FP rate of an age-partitioned filter when its current generation is full. */
export function agePartitionedFpRate(shape: AgePartitionedShape): number {
  const { hashes: k, slack: l, generation: g, sliceBits: m } = shape;
  return windowPositiveRate(
    k,
    Array.from({ length: k + l }, (_, age) => -Math.expm1((-g * Math.min(age + 1, k)) / m)),
  );
}

/**
 * Probability that an absent key is reported present when the slice of age j (0 = newest) answers
 * 1 with probability rates[j], independently: some k consecutive ages all answer 1.
 */
export function windowPositiveRate(k: number, rates: ArrayLike<number>): number {
  // run[r] = probability that the ages so far end in exactly r consecutive 1s (r < k) and no
  // window of k was complete yet.
  let run = new Float64Array(k);
  run[0] = 1;
  let positive = 0;
  for (let age = 0; age < rates.length; age++) {
    const r = rates[age];
    const next = new Float64Array(k);
    for (let length = 0; length < k; length++) {
      next[0] += run[length] * (1 - r);
      if (length + 1 === k) positive += run[length] * r;
      else next[length + 1] += run[length] * r;
    }
    run = next;
  }
  return positive;
}

/**
 * The smallest age-partitioned filter that remembers at least the last `items` inserts with FP
 * rate at most `fpRate`. With `slack` (l) given, g = ceil(items / l); without it l = k, so keys
 * live at most (1 + 1/k) times the window. Without `hashes` every k from 1 to log2(1/p) + 8 is
 * tried and the one needing the fewest bits kept.
 */
export function optimalAgePartitioned(plan: {
  items: number;
  fpRate: number;
  hashes?: number;
  slack?: number;
}): AgePartitionedSize {
  const opts = check.options<{ items: number; fpRate: number; hashes?: number; slack?: number }>("plan", plan);
  const items = check.positiveInteger("items", opts.items);
  const fpRate = check.probability("fpRate", opts.fpRate);
  const fixedK = opts.hashes === undefined ? undefined : check.positiveInteger("hashes", opts.hashes, 64);
  const fixedL = opts.slack === undefined ? undefined : check.positiveInteger("slack", opts.slack, 1024);
  const kMax = fixedK ?? Math.min(64, Math.ceil(Math.log2(1 / fpRate)) + 8);
  let best: AgePartitionedSize | undefined;
  for (let k = fixedK ?? 1; k <= kMax; k++) {
    const slack = fixedL ?? k;
    const size = smallestSlices(k, slack, Math.ceil(items / slack), fpRate);
    if (best === undefined || size.bits < best.bits) best = size;
  }
  return best!;
}

function smallestSlices(hashes: number, slack: number, generation: number, fpRate: number): AgePartitionedSize {
  const rate = (sliceBits: number) => agePartitionedFpRate({ hashes, slack, generation, sliceBits });
  let lo = 1;
  let hi = 64;
  while (rate(hi) > fpRate) hi *= 2;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (rate(mid) > fpRate) lo = mid + 1;
    else hi = mid;
  }
  const slices = hashes + slack;
  return {
    hashes,
    slack,
    generation,
    sliceBits: lo,
    bits: slices * lo,
    bytes: slices * Math.ceil(lo / 512) * 64,
    fpRate: rate(lo),
    retainsAtLeast: slack * generation,
    retainsAtMost: (slack + 1) * generation,
  };
}
