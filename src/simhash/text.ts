// From a document string to the text the SimHash kernel tokenizes. ASCII text goes as it is (the
// kernel lowers A-Z). Other text is NFKC-normalized and lower-cased here, because Unicode tables
// belong to the platform, not to the kernel. Scripts written without spaces (Han, Kana, Thai,
// Lao, Khmer, Myanmar) are cut into words by Intl.Segmenter and the words joined with spaces,
// so the kernel's one rule (runs of word characters) then sees one token per word.

const UNSPACED_SCRIPTS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
let segmenter: Intl.Segmenter | undefined;

/** True when every UTF-16 unit of `text` is ASCII. */
export function isAscii(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return !/[^\x00-\x7f]/.test(text);
}

/** The text to tokenize for a non-ASCII document (normalized, folded, unspaced scripts segmented). */
export function prepareNonAscii(text: string): string {
  const folded = text.normalize("NFKC").toLowerCase();
  if (!UNSPACED_SCRIPTS.test(folded)) return folded;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "word" });
  const words: string[] = [];
  for (const part of segmenter.segment(folded)) if (part.isWordLike) words.push(part.segment);
  return words.join(" ");
}

/** The words Intl.Segmenter finds in `text` (after NFKC and lower-casing): what an unspaced-script document is cut into. */
export function segmentWords(text: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "word" });
  const words: string[] = [];
  for (const part of segmenter.segment(text.normalize("NFKC").toLowerCase())) if (part.isWordLike) words.push(part.segment);
  return words;
}
