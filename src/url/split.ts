// Splits a URL the way Python's urllib.parse.urlparse does (what w3lib uses; not the WHATWG
// parser): a scheme when the text before the first ":" is an ASCII letter followed by letters,
// digits, "+", "-" or ".", netloc after "//" up to "/", "?" or "#", then fragment and query, and
// params after the last path segment's ";". Relative references ("a?b=1", "?b=1") survive.

/** The parts of a split URL, every one a string ("" when absent). */
export interface UrlParts {
  scheme: string;
  netloc: string;
  path: string;
  query: string;
  fragment: string;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+\-.]*$/;
const NETLOC_ENDS = ["/", "?", "#"];
// urllib.parse.uses_params of Python 3.11.
const USES_PARAMS = new Set([
  "",
  "ftp",
  "hdl",
  "prospero",
  "http",
  "imap",
  "https",
  "shttp",
  "rtsp",
  "rtspu",
  "sip",
  "sips",
  "mms",
  "sftp",
  "tel",
]);

/** The path without its params, and the params (after the ";" of the last segment, for schemes that have them). */
export function splitParams(scheme: string, path: string): [string, string] {
  if (!USES_PARAMS.has(scheme)) return [path, ""];
  const semicolon = path.indexOf(";", path.lastIndexOf("/") + 1);
  return semicolon === -1 ? [path, ""] : [path.slice(0, semicolon), path.slice(semicolon + 1)];
}

// The schemes w3lib's main branch treats as WHATWG "special": "\\" means "/" before the query.
const SPECIAL = new Set(["ftp", "file", "http", "https", "ws", "wss"]);

/** Splits `url` into scheme, netloc, path, query and fragment; `head` adds w3lib main's "\\" rule. */
export function splitUrl(url: string, head = false): UrlParts {
  let rest = url;
  let scheme = "";
  const colon = rest.indexOf(":");
  if (colon > 0 && SCHEME.test(rest.slice(0, colon))) {
    scheme = rest.slice(0, colon).toLowerCase();
    rest = rest.slice(colon + 1);
  }
  if (head && SPECIAL.has(scheme) && rest.includes("\\")) {
    const cut = rest.search(/[?#]/);
    rest = cut === -1 ? rest.replaceAll("\\", "/") : rest.slice(0, cut).replaceAll("\\", "/") + rest.slice(cut);
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
