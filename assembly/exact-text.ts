// Fingerprints of texts as `near-dups --dedup --exact-first` compares them: XXH3-128 of the text's
// UTF-8 with every run of ASCII white space made one space (none at either end) and A-Z lowered.
// The tokenizer (simhash.ts tokenize) treats ASCII white space as a separator and lowers A-Z
// itself, so two texts with one fingerprint give it the same words, and the same sketches. A text
// with a letter of a script written without spaces is hashed as it is: the platform cuts it into
// words in pieces whose ends depend on offsets, where white space may count.
import { xxh128 } from "./xxh3";
import { isUnspaced } from "./simhash";

// True when the UTF-8 at `p` holds a code point of a script written without spaces (all are
// three or four bytes long: U+0E00 and up).
function hasUnspaced(p: usize, len: usize): bool {
  const end = p + len;
  while (p < end) {
    const c = <u32>load<u8>(p);
    if (c < 0xE0) {
      p++;
      continue;
    }
    const n: usize = c >= 0xF0 ? 4 : 3;
    if (p + n > end) return false;
    const cp =
      n == 3
        ? ((c & 0x0F) << 12) | ((<u32>load<u8>(p, 1) & 0x3F) << 6) | (<u32>load<u8>(p, 2) & 0x3F)
        : ((c & 0x07) << 18) | ((<u32>load<u8>(p, 1) & 0x3F) << 12) | ((<u32>load<u8>(p, 2) & 0x3F) << 6) | (<u32>load<u8>(p, 3) & 0x3F);
    if (isUnspaced(cp)) return true;
    p += n;
  }
  return false;
}

// Rewrites the `len` bytes at `p` in place (never longer) as the rule says; returns the new length.
function normalize(p: usize, len: usize): usize {
  let w = p;
  let space = false;
  for (let r = p; r < p + len; r++) {
    let c = <u32>load<u8>(r);
    if (c == 0x20 || (c >= 0x09 && c <= 0x0D)) {
      space = w > p; // a space at the start is dropped, one at the end never written
      continue;
    }
    if (space) {
      store<u8>(w++, 0x20);
      space = false;
    }
    if (c - 0x41 < 26) c |= 0x20;
    store<u8>(w++, <u8>c);
  }
  return w - p;
}

/** Exact-first fingerprints of `count` texts given as u32 (start, end) pairs at `spans` over `keys` (rewritten in place); digest i at out + 16 i. */
export function exactTextDigests(keys: usize, spans: usize, count: u32, out: usize): void {
  for (let i: u32 = 0; i < count; i++) {
    const p = keys + load<u32>(spans);
    let len = <usize>(load<u32>(spans, 4) - load<u32>(spans));
    if (!hasUnspaced(p, len)) len = normalize(p, len);
    xxh128(p, len, out + (<usize>i << 4));
    spans += 8;
  }
}
