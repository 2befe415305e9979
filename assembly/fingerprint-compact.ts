// Compaction of a seen-set's log (src/seen/disk/log-compaction.ts): the live fingerprints are
// rewritten in the bucket tables' order (fingerprint-buckets.ts), partition (the high word's top
// bits) then low word, so a later load fills a table bucket after bucket instead of at random.
// A compaction works a partition at a time on the partition's entries in log order, each flagged
// when it forgets its fingerprint. The flag lives in the high word's top bit: within a partition
// those bits are the partition's own and are put back on output (so logParts is at least 1).

/** counts[p] (u32) += the fingerprints of partition p among `n` packed 16-byte ones at `digests`. */
export function fpPartitionCounts(digests: usize, n: u32, logParts: u32, counts: usize): void {
  const shift = <u64>(64 - logParts);
  for (let i: u32 = 0; i < n; i++) {
    const p = <usize>(load<u64>(digests + (<usize>i << 4), 8) >> shift);
    store<u32>(counts + (p << 2), load<u32>(counts + (p << 2)) + 1);
  }
}

/**
 * Copies the fingerprints of partitions [from, to) among `n` at `digests` to out + 16 *
 * cursors[p - from] (u32, advanced), in order, the high word's partition bits replaced by the
 * forget flag (`forget`: 1 for a record of forgotten fingerprints).
 */
export function fpScatter(digests: usize, n: u32, logParts: u32, from: u32, to: u32, cursors: usize, out: usize, forget: u32): void {
  const shift = <u64>(64 - logParts);
  const keep: u64 = (<u64>1 << shift) - 1;
  const flag: u64 = forget != 0 ? <u64>1 << 63 : 0;
  for (let i: u32 = 0; i < n; i++) {
    const d = digests + (<usize>i << 4);
    const hi = load<u64>(d, 8);
    const p = <u32>(hi >> shift);
    if (p < from || p >= to) continue;
    const c = cursors + (<usize>(p - from) << 2);
    const at = out + (<usize>load<u32>(c) << 4);
    store<u32>(c, load<u32>(c) + 1);
    store<u64>(at, load<u64>(d));
    store<u64>(at, (hi & keep) | flag, 8);
  }
}

// @ts-ignore: decorator
@inline function before(lo: u64, hi: u64, lo2: u64, hi2: u64): bool {
  return lo < lo2 || (lo == lo2 && hi < hi2);
}

/**
 * Partition `p`'s live fingerprints from its `nTail` entries at `tail` (from fpScatter, in log
 * order), written to `out` (room for nTail; it may be `tail`) sorted by low word, then high word,
 * each once, high words whole: a fingerprint's last entry decides, kept when it adds, dropped when
 * it forgets. `scratch` holds 16 * nTail bytes and then 4 * 2^b counts, 2^b the least power of
 * two at or above nTail. Returns the fingerprints written.
 */
export function fpCompactPartition(p: u32, logParts: u32, tail: usize, nTail: u32, scratch: usize, out: usize): u32 {
  const keep: u64 = (<u64>1 << <u64>(64 - logParts)) - 1;
  const top: u64 = <u64>p << <u64>(64 - logParts);
  // A stable counting sort of the tail on the low word's top b bits (b = ceil(log2 nTail), so about
  // one entry a bucket), then an insertion sort, stable and short, for the rest of the order.
  let b: u32 = 1;
  while (b < 32 && (<u64>1 << b) < <u64>nTail) b++;
  const counts = scratch + (<usize>nTail << 4);
  const buckets: usize = <usize>1 << b;
  memory.fill(counts, 0, buckets << 2);
  const shift = <u64>(64 - b);
  for (let i: u32 = 0; i < nTail; i++) {
    const c = counts + (<usize>(load<u64>(tail + (<usize>i << 4)) >> shift) << 2);
    store<u32>(c, load<u32>(c) + 1);
  }
  let sum: u32 = 0;
  for (let k: usize = 0; k < buckets; k++) {
    const c = load<u32>(counts + (k << 2));
    store<u32>(counts + (k << 2), sum);
    sum += c;
  }
  for (let i: u32 = 0; i < nTail; i++) {
    const d = tail + (<usize>i << 4);
    const c = counts + (<usize>(load<u64>(d) >> shift) << 2);
    const at = scratch + (<usize>load<u32>(c) << 4);
    store<u32>(c, load<u32>(c) + 1);
    store<u64>(at, load<u64>(d));
    store<u64>(at, load<u64>(d, 8), 8);
  }
  for (let i: u32 = 1; i < nTail; i++) {
    const lo = load<u64>(scratch + (<usize>i << 4));
    const hi = load<u64>(scratch + (<usize>i << 4), 8);
    const hk = hi & keep;
    let j = i;
    while (j > 0) {
      const q = scratch + (<usize>(j - 1) << 4);
      if (!before(lo, hk, load<u64>(q), load<u64>(q, 8) & keep)) break;
      store<u64>(q + 16, load<u64>(q));
      store<u64>(q + 16, load<u64>(q, 8), 8);
      j--;
    }
    store<u64>(scratch + (<usize>j << 4), lo);
    store<u64>(scratch + (<usize>j << 4), hi, 8);
  }
  // Each run of one fingerprint is written once, when its last entry adds it.
  let n: u32 = 0;
  for (let j: u32 = 0; j < nTail; ) {
    const lo = load<u64>(scratch + (<usize>j << 4));
    const hk = load<u64>(scratch + (<usize>j << 4), 8) & keep;
    let present = true;
    while (j < nTail && load<u64>(scratch + (<usize>j << 4)) == lo && (load<u64>(scratch + (<usize>j << 4), 8) & keep) == hk) {
      present = (load<u64>(scratch + (<usize>j << 4), 8) & ~keep) == 0;
      j++;
    }
    if (!present) continue;
    store<u64>(out + (<usize>n << 4), lo);
    store<u64>(out + (<usize>n << 4), hk | top, 8);
    n++;
  }
  return n;
}
