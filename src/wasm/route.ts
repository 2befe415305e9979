// The one partition router: a batch split over partitions (a Bloom filter over several instances,
// a Redis filter over several shards) is grouped by partition here, and, for instances, each
// partition's share of the staged elements is copied into that partition's own region, its kernel
// called once, and its result bytes put back at the keys' own places. Structures say only which
// partition an element goes to and what one partition does with its share.
import type { ArrayRegion } from "./array-region.js";

/** Indices [0, n) grouped by `partitionOf(i)`, each group in order and cut into runs of at most `chunk`; groups in order of first appearance. */
export function byPartition(
  n: number,
  partitionOf: (i: number) => number,
  chunk = Math.max(n, 1),
): [number, number[]][] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const p = partitionOf(i);
    const group = groups.get(p);
    if (group === undefined) groups.set(p, [i]);
    else group.push(i);
  }
  const out: [number, number[]][] = [];
  for (const [p, members] of groups) {
    if (members.length <= chunk) out.push([p, members]);
    else for (let c = 0; c < members.length; c += chunk) out.push([p, members.slice(c, c + chunk)]);
  }
  return out;
}

/** Where one partition takes its share of a routed batch: a region of the same element size in its memory. */
export interface Destination {
  readonly memory: Uint8Array;
  readonly region: ArrayRegion;
}

/**
 * Runs elements [0, n) of `from` (in `memory`) partition by partition: each partition's elements
 * are copied in order to the start of `into(p)`, its skip flags (when given) gathered into the
 * scratch `run` receives, and `run(p, m, skip)` leaves one result byte per element in `flags`,
 * which land in out[at + i] at each element's own index i. Returns the sum of what run returns.
 * The elements are copied out before any partition runs: partition 0 may stage into `from` itself.
 */
export function routeBatch(
  memory: Uint8Array,
  from: ArrayRegion,
  n: number,
  partitionOf: (i: number) => number,
  into: (p: number) => Destination,
  run: (p: number, m: number, skip: Uint8Array | undefined, flags: Uint8Array) => number,
  out: Uint8Array,
  at: number,
  skip?: Uint8Array,
): number {
  const groups = byPartition(n, partitionOf);
  if (from.size % 4 !== 0) throw new RangeError(`elements of ${from.size} bytes are not whole u32 words`);
  const w = from.size / 4;
  const source = from.view(memory, Uint32Array, 0, n).slice();
  const partSkip = skip === undefined ? undefined : new Uint8Array(n);
  const flags = new Uint8Array(n);
  let total = 0;
  for (const [p, members] of groups) {
    const m = members.length;
    const dst = into(p);
    if (dst.region.size !== from.size)
      throw new RangeError(`partition ${p} stages elements of ${dst.region.size} bytes, not ${from.size}`);
    const words = dst.region.view(dst.memory, Uint32Array, 0, m);
    for (let j = 0; j < m; j++) {
      const s = members[j] * w;
      for (let b = 0; b < w; b++) words[j * w + b] = source[s + b];
      if (partSkip !== undefined) partSkip[j] = skip![members[j]];
    }
    total += run(p, m, partSkip, flags);
    for (let j = 0; j < m; j++) out[at + members[j]] = flags[j];
  }
  return total;
}
