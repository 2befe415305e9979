// Prototype, not shipped (issue 13, Deliver 4): the approximate line kernel of assembly/line-dedup.ts
// cut in two, to measure whether scanning and hashing on a second thread pays. scan() finds and
// hashes lines into 32-byte records (start, end, unterminated, probe | NH-128); apply() tests-and-
// sets their fingerprints in one split-block filter and copies kept lines out. The measurement is
// in bench/RESULTS.md (2026-11-25): it did not pay on this 2-core machine, so nothing ships from it.
import { nh128 } from "../../assembly/nh-hash";
import { splitBlockOf, splitBlockHas, splitBlockSet } from "../../assembly/split-block";
import { newlines } from "../../assembly/line-dedup";

const NL: u8 = 0x0a;
const CR: u8 = 0x0d;
const GROUP: u32 = 32;
export let consumed: u32 = 0;
export let unique: f64 = 0;
let touched: u32 = 0;

/** Records of the complete lines of buf[0, len) (and with final a last line without "\n"), at most max; offsets relative to buf. Sets consumed. */
export function scan(buf: usize, len: u32, final: u32, rec: usize, max: u32): u32 {
  const end = buf + <usize>len;
  let q = buf;
  let n: u32 = 0;
  let base = buf;
  let mask = newlines(base, end);
  while (n < max && q < end) {
    while (mask == 0 && base + 64 < end) {
      base += 64;
      mask = newlines(base, end);
    }
    const nl = mask != 0 ? base + <usize>ctz(mask) : end;
    mask &= mask - 1;
    let lineEnd = nl + 1;
    if (nl == end) {
      if (final == 0) break;
      lineEnd = end;
    }
    const keyEnd = nl > q && load<u8>(nl - 1) == CR ? nl - 1 : nl;
    const r = rec + (<usize>n << 5);
    store<u32>(r, <u32>(q - buf));
    store<u32>(r, <u32>(lineEnd - buf), 4);
    store<u32>(r, (nl == end) ? 1 : 0, 8);
    nh128(q, keyEnd - q, r + 16);
    if ((load<u64>(r, 16) | load<u64>(r, 24)) == 0) store<u64>(r + 16, 1);
    n++;
    q = lineEnd;
  }
  consumed = <u32>(q - buf);
  return n;
}

/** Tests-and-sets n records (offsets relative to buf) in the filter; appends kept lines at out + outLen; returns the new outLen. */
export function apply(buf: usize, rec: usize, n: u32, bits: usize, blocks: f64, out: usize, outLen: u32): u32 {
  const nb = <u64>blocks;
  let len = <usize>outLen;
  let runStart: usize = 0;
  let runEnd: usize = 0;
  let kept = unique;
  let sum: u32 = 0;
  for (let g: u32 = 0; g < n; g += GROUP) {
    const m = min(GROUP, n - g);
    for (let i: u32 = 0; i < m; i++) {
      const r = rec + (<usize>(g + i) << 5);
      const probe = splitBlockOf(bits, nb, load<u64>(r, 16));
      store<u32>(r, <u32>probe, 12);
      sum += load<u32>(probe);
    }
    for (let i: u32 = 0; i < m; i++) {
      const r = rec + (<usize>(g + i) << 5);
      const probe = <usize>load<u32>(r, 12);
      const h2 = load<u64>(r, 24);
      if (splitBlockHas(probe, h2) == 0) {
        splitBlockSet(probe, h2);
        kept += 1;
        const start = buf + <usize>load<u32>(r);
        if (start != runEnd) {
          memory.copy(out + len, runStart, runEnd - runStart);
          len += runEnd - runStart;
          runStart = start;
        }
        runEnd = buf + <usize>load<u32>(r, 4);
        if (load<u32>(r, 8) != 0) {
          memory.copy(out + len, runStart, runEnd - runStart);
          len += runEnd - runStart;
          store<u8>(out + len++, NL);
          runStart = runEnd;
        }
      }
    }
  }
  memory.copy(out + len, runStart, runEnd - runStart);
  len += runEnd - runStart;
  unique = kept;
  touched ^= sum;
  return <u32>len;
}

/** First free byte. */
export function heapBase(): usize {
  return __heap_base;
}
