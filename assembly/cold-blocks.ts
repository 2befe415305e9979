// Present keys of a disk seen-set's sorted part, a batch at a time (src/seen/disk/cold-keys.ts):
// each fingerprint's block found in the block index, the batch ordered by block so blocks are
// read in file order, then each fingerprint searched among its block's once they are read.
// Table order (src/seen/disk/sorted-part.ts) is the partition (hi's top 6 bits), then lo, then
// hi's bits 32-57, then hi's low 32 bits: as one 128-bit number, A then B below. The index keeps
// a block's first fingerprint as five u32 words of that order (orderWords).
import { sortKeyed } from "./sort";

/** A fingerprint before every block: sorted last, and absent. */
const NONE: u64 = u64.MAX_VALUE;

@inline function orderA(lo: u64, hi: u64): u64 {
  return ((hi >> 58) << 58) | (lo >> 6);
}

@inline function orderB(lo: u64, hi: u64): u64 {
  return ((lo & 63) << 58) | (((hi >> 32) & 0x3ffffff) << 32) | (hi & 0xffffffff);
}

/** Whether index entry `at` (five words) is after the order (a, b). */
@inline function entryAfter(at: usize, a: u64, b: u64): bool {
  const w2 = <u64>load<u32>(at + 8);
  const ea = (<u64>load<u32>(at) << 58) | (<u64>load<u32>(at + 4) << 26) | (w2 >> 6);
  if (ea != a) return ea > a;
  const eb = ((w2 & 63) << 58) | (<u64>load<u32>(at + 12) << 32) | <u64>load<u32>(at + 16);
  return eb > b;
}

/**
 * For each of the `n` fingerprints at `keys` (16 bytes each): the block it can only be in (the
 * last of the `count` index entries at `firsts`, ascending, not after it), and its number as tag;
 * the pairs sorted by block. `blocks` holds n u64 slots and ends holding the sorted blocks as u32;
 * `tags` n u32. Returns how many lie in a block (they come first; the others are absent).
 */
export function coldLocate(firsts: usize, count: u32, keys: usize, n: u32, blocks: usize, tags: usize): u32 {
  let located: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const at = keys + (<usize>i << 4);
    const lo = load<u64>(at);
    const hi = load<u64>(at + 8);
    const a = orderA(lo, hi);
    const b = orderB(lo, hi);
    let l: u32 = 0;
    let h: u32 = count;
    while (l < h) {
      const mid = (l + h) >>> 1;
      if (entryAfter(firsts + <usize>mid * 20, a, b)) h = mid;
      else l = mid + 1;
    }
    store<u64>(blocks + (<usize>i << 3), l == 0 ? NONE : <u64>(l - 1));
    store<u32>(tags + (<usize>i << 2), i);
    if (l > 0) located++;
  }
  sortKeyed(blocks, tags, <usize>n);
  // In place, front to back: slot i's u32 lies at or before its u64, already read.
  for (let i: u32 = 0; i < located; i++) store<u32>(blocks + (<usize>i << 2), <u32>load<u64>(blocks + (<usize>i << 3)));
  return located;
}

/**
 * For the sorted entries [from, to) of coldLocate, whose blocks all lie in the span at `span`
 * (fingerprints from block `spanBlock` on, `spanKeys` of them, `perBlock` a block): found[tag] = 1
 * where the tag's fingerprint is among its block's (sorted in table order), else 0.
 */
export function coldFind(span: usize, spanBlock: u32, spanKeys: u32, perBlock: u32, keys: usize, blocks: usize, tags: usize, from: u32, to: u32, found: usize): void {
  for (let q = from; q < to; q++) {
    const tag = load<u32>(tags + (<usize>q << 2));
    const at = keys + (<usize>tag << 4);
    const lo = load<u64>(at);
    const hi = load<u64>(at + 8);
    const a = orderA(lo, hi);
    const b = orderB(lo, hi);
    const first = (load<u32>(blocks + (<usize>q << 2)) - spanBlock) * perBlock;
    const end = min(first + perBlock, spanKeys);
    let l = first;
    let h = end;
    while (l < h) {
      const mid = (l + h) >>> 1;
      const p = span + (<usize>mid << 4);
      const pl = load<u64>(p);
      const ph = load<u64>(p + 8);
      const pa = orderA(pl, ph);
      if (pa > a || (pa == a && orderB(pl, ph) > b)) h = mid;
      else l = mid + 1;
    }
    let hit: u8 = 0;
    if (l > first) {
      const p = span + (<usize>(l - 1) << 4);
      if (load<u64>(p) == lo && load<u64>(p + 8) == hi) hit = 1;
    }
    store<u8>(found + tag, hit);
  }
}
