// The plan of the approximate line filter's stages (src/lines/line-engine.ts). Approximate mode
// begins exact: a table of fingerprints for the first FIRST_STAGE_ITEMS distinct lines, small
// enough to stay in cache, so a stream with few distinct lines never leaves it. When the table
// fills, its fingerprints move into the first blocked Bloom filter, planned for every line still
// to come when the input's size is known (a regular file), so a big stream ends up in one filter
// (one cache miss a line) instead of a chain of stages, each a miss per new line; without a size,
// or when the estimate falls short, stages follow, each planned for STAGE_GROWTH times more keys.
// Stage i takes fpRate / 2^(i+1), so the compound rate stays under fpRate however many follow.

/** Distinct lines the exact phase holds before the first filter stage: 2^16, about 1.2 MiB of table. */
export const FIRST_STAGE_ITEMS = 1 << 16;
/** Each stage plans at least this many times the keys of the one before (the first: of the table). */
export const STAGE_GROWTH = 8;
/** Most keys an estimate may plan for one stage (a bound on a wrong estimate's memory). */
const MAX_ESTIMATED_ITEMS = 2 ** 28;

/** What is known when a stage is added. */
export interface StageFacts {
  /** The compound false-positive rate asked for. */
  readonly fpRate: number;
  /** Distinct lines the exact phase held. */
  readonly firstItems: number;
  /** Distinct lines kept so far. */
  readonly unique: number;
  /** Lines still to come, estimated from the input's size and the lines so far; undefined when unknown (a pipe). */
  readonly remainingLines?: number;
}

/** Keys and FP rate of filter stage `i` (0 is the first). */
export function planStage(i: number, facts: StageFacts): { items: number; fpRate: number } {
  const geometric = facts.firstItems * STAGE_GROWTH ** (i + 1);
  // Every line still to come counted as new: an upper bound on the distinct lines, as far as the
  // estimate of line length holds (when it does not, a further stage follows).
  const estimate =
    facts.remainingLines === undefined
      ? 0
      : Math.min(MAX_ESTIMATED_ITEMS, Math.ceil(facts.unique + facts.remainingLines));
  return { items: Math.max(geometric, estimate), fpRate: facts.fpRate / 2 ** (i + 1) };
}
