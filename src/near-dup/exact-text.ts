// The fingerprints `near-dups --dedup --exact-first` compares: XXH3-128 of each text's UTF-8 with
// every run of ASCII white space (space, tab, line breaks) made one space, none at either end,
// and A-Z lowered, in WebAssembly (assembly/exact-text.ts), one call a batch. The rule is chosen so
// that it never joins texts the tokenizer tells apart: the MinHash and SimHash kernels read runs
// of letters and digits, treat ASCII white space as a separator and lower A-Z themselves, so the
// words they see, in order, do not change. Nothing else is folded: NFC or full lower-casing would
// join texts the kernel keeps apart (a decomposed "é" is two tokens to it, an Armenian capital is
// not lowered). Texts with letters of scripts written without spaces are cut into words by
// Intl.Segmenter in pieces whose ends depend on offsets, so white space may matter there: those
// texts are hashed as they are.
import { packedDigests } from "../wasm/batch.js";
import { sharedEngine } from "../wasm/engine.js";

/** The texts' exact-first fingerprints, 16 bytes each, packed in text order. */
export function exactDigests(texts: readonly string[]): Uint8Array {
  return packedDigests(sharedEngine().staging, { list: texts }, "exact-text");
}
