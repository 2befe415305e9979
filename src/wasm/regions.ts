// The region planner: a structure names the regions it keeps in its instance's memory and their
// sizes, and gets back where each starts. Every region starts on a cache line (64 bytes), so no
// region shares a line with its neighbour and any typed view of one (u64, v128) is aligned.
// Laying out is pure arithmetic here; Arena.place makes the regions exist, and it is the one place
// memory grows. A region that grows later (a table, a key buffer) is laid out last and re-placed
// from its own start with its new size, or with its new size and a scratch region after it.
// A region named with array(size, length) comes back as an ArrayRegion, which knows its element
// size, so element i's address is computed there and not in the structure.
import { ArrayRegion, type ArraySpec } from "./array-region.js";

/** Alignment of every region: one cache line. */
export const REGION_ALIGN = 64;

/** A region's size as the planner takes it: bytes, or array(size, length). */
export type RegionSize = number | ArraySpec;

/** Where each named region starts (an ArrayRegion for an array), and where the last one ends. */
export type Regions<S> = { readonly [K in keyof S]: [S[K]] extends [number] ? number : ArrayRegion } & {
  readonly end: number;
};

/** Rounds `n` up to a multiple of `to` (a power of two). */
export function alignUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** Bytes rounded up to whole cache lines (a region's size when its content is counted in lines). */
export function wholeLines(bytes: number): number {
  return alignUp(bytes, REGION_ALIGN);
}

/** Lays regions of the given byte sizes out from `start`, in the order of their names; allocates nothing. */
export function layOut<S extends { readonly [name: string]: RegionSize }>(start: number, sizes: S): Regions<S> {
  const placed: Record<string, number | ArrayRegion> = {};
  let at = start;
  for (const name of Object.keys(sizes)) {
    at = alignUp(at, REGION_ALIGN);
    const size = sizes[name];
    if (typeof size === "number") {
      placed[name] = at;
      at += size;
    } else {
      const region = new ArrayRegion(at, size.size, size.length);
      placed[name] = region;
      at = region.end;
    }
  }
  placed.end = at;
  return placed as Regions<S>;
}
