// The text `near-dups --dedup --exact-first` fingerprints: two texts with the same one are exact
// duplicates and only one of them is sketched. The normalization is chosen so that it never
// joins texts the tokenizer would tell apart: the MinHash and SimHash kernels (assembly/simhash.ts
// tokenize) read runs of letters and digits, treat every ASCII space, tab and line break as a
// separator and lower A-Z themselves, so collapsing runs of ASCII white space into one space,
// dropping it at both ends and lowering A-Z leaves the words they see, in order, unchanged.
// Nothing else is folded: NFC or full lower-casing would join texts the kernel keeps apart
// (a decomposed "é" is two tokens to it). Texts with letters of scripts written without spaces are
// cut into words by Intl.Segmenter in pieces whose ends depend on where each character sits, so
// white space there may matter: those texts are fingerprinted as they are.
import { UNSPACED_SCRIPTS } from "./text.js";

const SPACES = /[ \t\n\v\f\r]+/g;
// Most texts have only single spaces between words: a test is a tenth of what a replace costs.
const UNEVEN = /[\t\n\v\f\r]| {2}|^ | $/;
const UPPER = /[A-Z]+/g;
const NON_ASCII = /[^\x00-\x7f]/;

/** The text exact-first compares: ASCII white space collapsed and trimmed, A-Z lowered (unspaced scripts: as is). */
export function exactText(text: string): string {
  const ascii = !NON_ASCII.test(text);
  if (!ascii && UNSPACED_SCRIPTS.test(text)) return text;
  const spaced = UNEVEN.test(text) ? trimSpace(text.replace(SPACES, " ")) : text;
  // toLowerCase reaches beyond ASCII, where the kernel folds less: non-ASCII texts lower A-Z only.
  return ascii ? spaced.toLowerCase() : spaced.replace(UPPER, (run) => run.toLowerCase());
}

/** `text` without the one ASCII space collapsing may have left at either end. */
function trimSpace(text: string): string {
  const from = text.startsWith(" ") ? 1 : 0;
  const to = text.endsWith(" ") ? text.length - 1 : text.length;
  return from === 0 && to === text.length ? text : text.slice(from, Math.max(from, to));
}
