// A bounded cache of recently seen keys: a 2-way set-associative table of 64-bit fingerprints
// (the first word of a key's hash pair; 0 marks an empty way, so a fingerprint of 0 is stored as
// 1). The set comes from the second word, so the fingerprint and its set are independent bits.
// Each set is 16 bytes (two ways); one byte per set, after the ways, holds the way used last,
// and an insert into a full set replaces the other one.

// @ts-ignore: decorator
@inline function fingerprintOf(hashes: usize, i: u32): u64 {
  const fp = load<u64>(hashes + (<usize>i << 4));
  return fp == 0 ? 1 : fp;
}

// @ts-ignore: decorator
@inline function setOf(hashes: usize, i: u32, mask: u32): usize {
  return <usize>(<u32>load<u64>(hashes + (<usize>i << 4) + 8) & mask);
}

/** out[i] = 1 when key i's fingerprint is in the table (and marks its way used); returns the hits. */
export function recentProbe(table: usize, setMask: u32, hashes: usize, count: u32, out: usize): u32 {
  const used = table + ((<usize>setMask + 1) << 4);
  let hits: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    const fp = fingerprintOf(hashes, i);
    const set = setOf(hashes, i, setMask);
    const ways = table + (set << 4);
    let hit: u32 = 0;
    if (load<u64>(ways) == fp) {
      store<u8>(used + set, 0);
      hit = 1;
    } else if (load<u64>(ways, 8) == fp) {
      store<u8>(used + set, 1);
      hit = 1;
    }
    store<u8>(out + i, <u8>hit);
    hits += hit;
  }
  return hits;
}

/** Inserts the fingerprint of every key i with skip[i] == 0, into an empty way or over the way not used last. */
export function recentInsert(table: usize, setMask: u32, hashes: usize, count: u32, skip: usize): void {
  const used = table + ((<usize>setMask + 1) << 4);
  for (let i: u32 = 0; i < count; i++) {
    if (load<u8>(skip + i) != 0) continue;
    const fp = fingerprintOf(hashes, i);
    const set = setOf(hashes, i, setMask);
    const ways = table + (set << 4);
    const a = load<u64>(ways);
    const b = load<u64>(ways, 8);
    if (a == fp || b == fp) continue;
    // An empty way first; else the way not used last.
    const way: u32 = a == 0 ? 0 : b == 0 ? 1 : 1 - <u32>load<u8>(used + set);
    store<u64>(ways + (<usize>way << 3), fp);
    store<u8>(used + set, <u8>way);
  }
}
