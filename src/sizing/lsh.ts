// LSH layouts: how many bands of how many rows a MinHash-LSH structure uses for a similarity
// threshold. A pair of Jaccard similarity J shares at least one of b bands of r rows with
// probability 1 - (1 - J^r)^b (the S-curve), the same for the index (which then verifies) and the
// filter (which cannot).

/** Most LSH bins (bands x rows). */
export const MAX_BINS = 1024;

/** LSH layout for a similarity threshold t: rows r with t^r near 1/2, and enough bands that a pair at t shares none with probability at most 1e-4. */
export function lshLayout(threshold: number): { bands: number; rows: number } {
  const rows = Math.max(1, Math.round(Math.log(0.5) / Math.log(threshold)));
  const hit = threshold ** rows;
  const bands = hit >= 1 ? 1 : Math.max(1, Math.ceil(Math.log(1e-4) / Math.log(1 - hit)));
  return { bands: Math.min(bands, Math.floor(MAX_BINS / rows)), rows };
}

/** The probability that a pair of Jaccard similarity `similarity` shares at least one band: 1 - (1 - J^r)^b. */
export function bandHitRate(similarity: number, layout: { bands: number; rows: number }): number {
  return -Math.expm1(layout.bands * Math.log1p(-(similarity ** layout.rows)));
}
