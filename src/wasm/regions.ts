// The region planner: a structure names the regions it keeps in its instance's memory and their
// sizes, and gets back where each starts. Every region starts on a cache line (64 bytes), so no
// region shares a line with its neighbour and any typed view of one (u64, v128) is aligned.
// Laying out is pure arithmetic here; Arena.place makes the regions exist, and it is the one place
// memory grows. A region that grows later (a table, a key buffer) is laid out last and re-placed
// from its own start with its new size, or with its new size and a scratch region after it.

/** Alignment of every region: one cache line. */
export const REGION_ALIGN = 64;

/** Where each named region starts, and where the last one ends. */
export type Regions<N extends string> = { readonly [K in N]: number } & { readonly end: number };

/** Rounds `n` up to a multiple of `to` (a power of two). */
export function alignUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** Bytes rounded up to whole cache lines (a region's size when its content is counted in lines). */
export function wholeLines(bytes: number): number {
  return alignUp(bytes, REGION_ALIGN);
}

/** Lays regions of the given byte sizes out from `start`, in the order of their names; allocates nothing. */
export function layOut<N extends string>(start: number, sizes: { readonly [K in N]: number }): Regions<N> {
  const placed: Record<string, number> = {};
  let at = start;
  for (const name of Object.keys(sizes) as N[]) {
    at = alignUp(at, REGION_ALIGN);
    placed[name] = at;
    at += sizes[name];
  }
  placed.end = at;
  return placed as Regions<N>;
}
