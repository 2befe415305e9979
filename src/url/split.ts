// Splits a URL the way w3lib's _urlparse does (not the WHATWG parser): scheme when the text
// before the first ":" starts with a letter, netloc after "//" up to "/", "?" or "#", then
// fragment and query. Relative references ("a?b=1", "?b=1") therefore survive canonicalization.

/** The parts of a split URL, every one a string ("" when absent). */
export interface UrlParts {
  scheme: string;
  netloc: string;
  path: string;
  query: string;
  fragment: string;
}

const LETTER = /^\p{L}/u;
const NETLOC_ENDS = ["/", "?", "#"];

function startsWithLetter(text: string): boolean {
  const c = text.charCodeAt(0) | 0x20;
  return (c >= 0x61 && c <= 0x7a) || (text.charCodeAt(0) > 0x7f && LETTER.test(text));
}

/** Splits `url` into scheme, netloc, path, query and fragment. */
export function splitUrl(url: string): UrlParts {
  let rest = url;
  let scheme = "";
  const colon = rest.indexOf(":");
  if (colon > 0 && startsWithLetter(rest)) {
    scheme = rest.slice(0, colon).toLowerCase();
    rest = rest.slice(colon + 1);
  }
  let netloc = "";
  if (rest.startsWith("//")) {
    rest = rest.slice(2);
    let end = rest.length;
    for (const sep of NETLOC_ENDS) {
      const at = rest.indexOf(sep);
      if (at !== -1 && at < end) end = at;
    }
    netloc = rest.slice(0, end);
    rest = rest.slice(end);
  }
  let fragment = "";
  const hash = rest.indexOf("#");
  if (hash !== -1) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let query = "";
  const question = rest.indexOf("?");
  if (question !== -1) {
    query = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  return { scheme, netloc, path: rest, query, fragment };
}
