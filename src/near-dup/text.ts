// From a document string to the text the SimHash kernel tokenizes. ASCII text goes as it is (the
// kernel lowers A-Z). Other text is NFKC-normalized and lower-cased here, because Unicode tables
// belong to the platform, not to the kernel. Scripts written without spaces (Han, Kana, Thai,
// Lao, Khmer, Myanmar) are cut into words by Intl.Segmenter and the words joined with spaces,
// so the kernel's one rule (runs of word characters) then sees one token per word.

// V8's segment iterator slows down with the length of the string it walks (100 KB took 6 s
// here, 10 KB 20 ms), so long texts are segmented in pieces cut at a space or punctuation.
const PIECE = 1024;
const BOUNDARY = /[\s\p{P}]/u;
/** Scripts written without spaces between words: their texts need Intl.Segmenter. */
export const UNSPACED_SCRIPTS =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
let segmenter: Intl.Segmenter | undefined;

/** The text to tokenize for a non-ASCII document (normalized, folded, unspaced scripts segmented). */
export function prepareNonAscii(text: string): string {
  const folded = text.normalize("NFKC").toLowerCase();
  if (!UNSPACED_SCRIPTS.test(folded)) return folded;
  return words(folded).join(" ");
}

/** The word-like segments of already folded text, segmented piece by piece. */
function words(text: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "word" });
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + PIECE);
    if (end < text.length) {
      let cut = end;
      while (cut > at + PIECE / 2 && !BOUNDARY.test(text[cut - 1])) cut--;
      if (cut > at + PIECE / 2) end = cut;
      else if (text.charCodeAt(end) >= 0xdc00 && text.charCodeAt(end) <= 0xdfff) end--; // never split a surrogate pair
    }
    for (const part of segmenter.segment(text.slice(at, end))) if (part.isWordLike) out.push(part.segment);
    at = end;
  }
  return out;
}

/** The words Intl.Segmenter finds in `text` (after NFKC and lower-casing): what an unspaced-script document is cut into. */
export function segmentWords(text: string): string[] {
  return words(text.normalize("NFKC").toLowerCase());
}
