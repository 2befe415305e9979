// LSH layouts: how many bands of how many rows a MinHash-LSH structure uses for a similarity
// threshold. A pair of Jaccard similarity J shares at least one of b bands of r rows with
// probability 1 - (1 - J^r)^b (the S-curve). The index verifies every candidate, so its layout
// only has to miss few pairs at the threshold (lshLayout); the filter cannot verify, so the
// S-curve is its whole answer and its layout balances the pairs it reports below the threshold
// against those it misses above (filterLayout).

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

/** Most bands the filter layout takes: each band is a Bloom filter of every text, and 16 keep 1e-4 within 64 bytes a text (62.4). */
export const MAX_FILTER_BANDS = 16;

/**
 * LSH layout for a filter at threshold t: the b <= maxBands and r (b r <= 1024 bins) that minimize
 * the area under the S-curve below t (near-duplicates reported that are not) plus the area above
 * it above t (near-duplicates missed), with equal weights, as datasketch's MinHashLSH chooses its
 * layout. At t = 0.8: 16 bands of 16 rows, where lshLayout gives 13 of 3 (that one reports a pair
 * at J = 0.5 with probability 0.82, this one with 0.0002; at J = 0.8, 1.0 and 0.37).
 */
export function filterLayout(threshold: number, maxBands = MAX_FILTER_BANDS): { bands: number; rows: number } {
  const key = `${threshold}/${maxBands}`;
  const known = layouts.get(key);
  if (known !== undefined) return known;
  const errorOf = (layout: { bands: number; rows: number }) =>
    integral((s) => bandHitRate(s, layout), 0, threshold) + integral((s) => 1 - bandHitRate(s, layout), threshold, 1);
  let best = { bands: 1, rows: 1, error: Infinity };
  for (let bands = 1; bands <= maxBands; bands++) {
    // More rows move the curve right: the error falls to one least value and rises after it.
    let previous = Infinity;
    for (let rows = 1; rows * bands <= MAX_BINS; rows++) {
      const error = errorOf({ bands, rows });
      if (error < best.error) best = { bands, rows, error };
      if (error > previous) break;
      previous = error;
    }
  }
  const layout = { bands: best.bands, rows: best.rows };
  layouts.set(key, layout);
  return layout;
}

const layouts = new Map<string, { bands: number; rows: number }>();

/** The midpoint rule over 100 steps: the S-curves are smooth, and the layouts it ranks differ by far more. */
function integral(f: (x: number) => number, from: number, to: number): number {
  const steps = 100;
  const h = (to - from) / steps;
  let total = 0;
  for (let i = 0; i < steps; i++) total += f(from + (i + 0.5) * h);
  return total * h;
}
