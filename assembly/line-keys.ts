// Keyed line dedup (dedup --field, --csv, --json-key, --canonicalize): the wrapper cuts each
// scanned line's key (src/lines/keys/) and hands its span here; the key is fingerprinted as the
// context says, as a whole line would be, and decided in the engine's own seen-set, so the line
// is printed or dropped by lineEmit (line-split.ts) exactly as on the raw-line path.

import { digest, testSet, LINE_SCRATCH, LINE_STATUS, LINE_MODE, LINE_HASH } from "./line-dedup";
import { md5Lanes } from "./md5-lanes";

const LANES: u32 = 32;

/**
 * Fingerprints `n` keys given as spans (u32 start, u32 end: addresses) at `spans` into 16 bytes
 * each at `digests`, as the context's mode and hash fingerprint a line. A span (0, 0) is a line
 * without its key: its fingerprint is all zero, which no key has (keyDedup passes it by).
 */
export function keyDigests(ctx: usize, spans: usize, n: u32, digests: usize): void {
  const scratch = <usize>load<u32>(ctx, LINE_SCRATCH);
  if (load<u32>(ctx, LINE_MODE) == 0 && load<u32>(ctx, LINE_HASH) == 0) {
    // MD5 four lanes at a time over the spans (start, end), as lineScan takes its records.
    for (let i: u32 = 0; i < n; i += LANES) md5Lanes(scratch, 0, spans + (<usize>i << 3), 8, min(LANES, n - i), digests + (<usize>i << 4));
    for (let i: u32 = 0; i < n; i++) {
      const d = digests + (<usize>i << 4);
      if ((load<u64>(d) | load<u64>(d, 8)) == 0) store<u64>(d, 1);
    }
  } else {
    for (let i: u32 = 0; i < n; i++) {
      const s = spans + (<usize>i << 3);
      const start = <usize>load<u32>(s);
      digest(ctx, scratch, start, <usize>load<u32>(s, 4) - start, digests + (<usize>i << 4));
    }
  }
  for (let i: u32 = 0; i < n; i++) {
    const s = spans + (<usize>i << 3);
    if (load<u32>(s) == 0 && load<u32>(s, 4) == 0) memory.fill(digests + (<usize>i << 4), 0, 16);
  }
}

/**
 * Tests-and-sets fingerprints [from, n) of `digests` in the engine's own seen-set (its table, or
 * its Bloom stages), one flag each (1 new, 0 seen); an all-zero fingerprint (no key) is passed by,
 * its flag left as the caller set it. Returns the index it stopped at: n, or earlier with status 1
 * when the seen-set must grow before that fingerprint.
 */
export function keyDedup(ctx: usize, digests: usize, flags: usize, from: u32, n: u32): u32 {
  store<u32>(ctx, 0, LINE_STATUS);
  for (let i = from; i < n; i++) {
    const d = digests + (<usize>i << 4);
    if ((load<u64>(d) | load<u64>(d, 8)) == 0) continue;
    const fresh = testSet(ctx, d);
    if (fresh == 2) {
      store<u32>(ctx, 1, LINE_STATUS);
      return i;
    }
    store<u8>(flags + <usize>i, <u8>fresh);
  }
  return n;
}
