// Sizing of the near-duplicate filter (LSHBloom: Khan et al. 2024): one blocked Bloom filter per
// LSH band over the band keys of every text. A text is reported a near-duplicate when any band
// filter has its key, so besides the pairs LSH itself finds (the S-curve of the layout, see
// filterLayout in lsh.ts) the b filters add false positives: with each at rate p_b a text that shares no band
// with anything is reported with probability 1 - (1 - p_b)^b. The whole test's budget P is
// therefore split as p_b = 1 - (1 - P)^(1/b), and each band filter holds every text.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { optimalBlockedBloom, type BloomSize } from "./bloom.js";
import { bandHitRate, filterLayout, MAX_BINS } from "./lsh.js";

/** What a near-duplicate filter is planned for. */
export interface NearDupPlan {
  /** Texts planned (each band filter holds all of them). */
  readonly items: number;
  /** False-positive rate of the whole test, over all bands. */
  readonly fpRate: number;
  /** Least Jaccard similarity meant as a near-duplicate, in (0, 1]; chooses the layout. */
  readonly threshold: number;
  /** Explicit LSH bands and rows, instead of filterLayout(threshold). */
  readonly bands?: number;
  readonly rows?: number;
}

/** The planned shape of a near-duplicate filter. */
export interface NearDupSize {
  readonly items: number;
  readonly fpRate: number;
  readonly threshold: number;
  readonly bands: number;
  readonly rows: number;
  /** The false-positive rate each band filter is sized for: 1 - (1 - fpRate)^(1/bands). */
  readonly bandFpRate: number;
  /** One band's blocked filter (every band is the same). */
  readonly band: BloomSize;
  /** Bits and bytes over all bands. */
  readonly bits: number;
  readonly bytes: number;
  /** Planned bytes a text: bytes / items. */
  readonly bytesPerItem: number;
  /** The whole test's rate from the bands' theoretical rates: 1 - (1 - band.fpRate)^bands. */
  readonly designedFpRate: number;
  /** The chance a pair exactly at the threshold shares a band: 1 - (1 - t^r)^b. */
  readonly recallAtThreshold: number;
}

/** Bands, rows and band filters for a near-duplicate filter; InvalidArgumentError names a bad value. */
export function optimalNearDupFilter(plan: NearDupPlan): NearDupSize {
  const opts = check.options<NearDupPlan>("plan", plan);
  const items = check.positiveInteger("items", opts.items);
  const fpRate = check.probability("fpRate", opts.fpRate);
  const threshold = opts.threshold;
  if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1))
    throw new InvalidArgumentError("threshold", threshold, "a number in (0, 1]");
  const layout = filterLayout(threshold);
  const bands = opts.bands === undefined ? layout.bands : check.integerInRange("bands", opts.bands, 1, MAX_BINS);
  const rows =
    opts.rows === undefined ? layout.rows : check.integerInRange("rows", opts.rows, 1, Math.floor(MAX_BINS / bands));
  const bandFpRate = -Math.expm1(Math.log1p(-fpRate) / bands);
  const band = optimalBlockedBloom({ items, fpRate: bandFpRate });
  const bits = band.bits * bands;
  const bytes = band.bytes * bands;
  return {
    items,
    fpRate,
    threshold,
    bands,
    rows,
    bandFpRate,
    band,
    bits,
    bytes,
    bytesPerItem: bytes / items,
    designedFpRate: -Math.expm1(bands * Math.log1p(-band.fpRate)),
    recallAtThreshold: bandHitRate(threshold, { bands, rows }),
  };
}
