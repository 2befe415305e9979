// Table layouts of the permuted-table index (Manku et al. 2007, section 3.1.1). With at most k
// of 64 bits differing and the bits cut into b blocks, at least b - k blocks agree exactly, so
// one table per choice of b - k leading blocks finds every neighbour. For k = 3 the paper's
// options: 4 tables (4 blocks of 16, one leads: 16 leading bits), 10 (5 blocks, two lead: 25-26),
// 20 (6 blocks, three lead: 31-33) and 16 (two levels: one of 4 blocks of 16, then one of 4
// blocks of 12 cut from the other 48 bits: 28 leading bits).
import { InvalidArgumentError } from "../errors.js";

/** One table: the bit positions that lead, in order, and how many there are. */
export interface TableSpec {
  /** (offset, width) runs of the original fingerprint, filled from the top bit down: leading runs first. */
  readonly pieces: readonly (readonly [number, number])[];
  /** Leading bits: the prefix that must match for the guarantee. */
  readonly leadingBits: number;
}

/** Cuts positions into `count` nearly equal consecutive blocks (larger ones first). */
function cut(positions: readonly number[], count: number): number[][] {
  const blocks: number[][] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const size = Math.floor(positions.length / count) + (i < positions.length % count ? 1 : 0);
    blocks.push(positions.slice(at, at + size));
    at += size;
  }
  return blocks;
}

/** Every r-subset of 0..n-1, in lexicographic order. */
function subsets(n: number, r: number): number[][] {
  if (r === 0) return [[]];
  const out: number[][] = [];
  for (let first = 0; first <= n - r; first++)
    for (const rest of subsets(n - first - 1, r - 1)) out.push([first, ...rest.map((x) => x + first + 1)]);
  return out;
}

/** Runs of consecutive positions in the given order, as (offset, width) pairs; then the other positions in runs. */
function toSpec(leading: readonly number[]): TableSpec {
  const lead = new Set(leading);
  const rest = Array.from({ length: 64 }, (_, i) => i).filter((i) => !lead.has(i));
  const pieces: [number, number][] = [];
  for (const run of [leading, rest]) {
    // Positions inside a block ascend; a piece is a run of consecutive positions, taken top bit first.
    let i = 0;
    while (i < run.length) {
      let j = i;
      while (j + 1 < run.length && run[j + 1] === run[j] + 1) j++;
      pieces.push([run[i], j - i + 1]);
      i = j + 1;
    }
  }
  return { pieces, leadingBits: leading.length };
}

/** Most tables an index holds (its table descriptors have a fixed region). */
export const MAX_TABLES = 32;

/** The table counts available for maxDistance k (at most MAX_TABLES). */
export function layoutChoices(k: number): number[] {
  const choices = new Set<number>();
  for (let blocks = k + 1; blocks <= Math.min(64, k + 4); blocks++) choices.add(binomial(blocks, blocks - k));
  if (k === 3) choices.add(16);
  return [...choices].filter((tables) => tables <= MAX_TABLES).sort((a, b) => a - b);
}

/** The tables of the layout with `tables` tables for maxDistance k. */
export function layout(k: number, tables: number): TableSpec[] {
  const all = Array.from({ length: 64 }, (_, i) => i);
  if (k === 3 && tables === 16) {
    const specs: TableSpec[] = [];
    const top = cut(all, 4);
    for (let a = 0; a < 4; a++) {
      const others = top.filter((_, i) => i !== a).flat();
      for (const second of cut(others, 4)) specs.push(toSpec([...top[a], ...second]));
    }
    return specs;
  }
  for (let blocks = k + 1; blocks <= Math.min(64, k + 4); blocks++) {
    if (binomial(blocks, blocks - k) !== tables) continue;
    const parts = cut(all, blocks);
    return subsets(blocks, blocks - k).map((chosen) => toSpec(chosen.flatMap((i) => parts[i])));
  }
  throw new InvalidArgumentError(
    "layout",
    tables,
    `a table count for maxDistance ${k}: ${layoutChoices(k).join(", ")}`,
  );
}

/** The default table count for n fingerprints: the fewest tables that keep a query's buckets small. */
export function defaultTables(k: number, n: number): number {
  const choices = layoutChoices(k);
  // Expected candidates per query: tables * n / 2^leadingBits; stop at the first layout under ~2048.
  for (const tables of choices) {
    const lead = layout(k, tables)[0].leadingBits;
    if ((tables * n) / 2 ** lead <= 2048) return tables;
  }
  return choices[choices.length - 1];
}

function binomial(n: number, r: number): number {
  let out = 1;
  for (let i = 1; i <= r; i++) out = (out * (n - r + i)) / i;
  return Math.round(out);
}
