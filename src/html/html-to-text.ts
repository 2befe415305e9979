// HTML to the text a reader sees, for near-duplicate detection: parsed with htmlparser2 (a real,
// streaming, forgiving parser), boilerplate dropped so that one article in two site templates
// gives the same text. Dropped: script, style and other non-text elements, navigation, headers,
// footers, sidebars, forms, and elements marked hidden or with a landmark role for navigation,
// banner, site info, sidebar or search. When the page has <main> or <article> elements, only
// their text is kept. Block elements become line breaks, so words in adjacent blocks never glue.
/**
 * `crawlsieve/html`: HTML to the text a reader sees, for near-duplicate detection.
 * @module crawlsieve/html
 */
import { Parser } from "htmlparser2";

const SKIP = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "math",
  "nav",
  "header",
  "footer",
  "aside",
  "form",
  "iframe",
  "button",
  "select",
  "textarea",
  "head",
  "object",
  "canvas",
  "dialog",
]);
const SKIP_ROLES = new Set(["navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"]);
const PRIMARY = new Set(["main", "article"]);
const BLOCK = new Set([
  "address",
  "blockquote",
  "br",
  "dd",
  "div",
  "dl",
  "dt",
  "figcaption",
  "figure",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
  "li",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "tbody",
  "td",
  "tfoot",
  "th",
  "thead",
  "tr",
  "ul",
  "main",
  "article",
  "body",
  "title",
  "summary",
  "details",
]);

/** The visible main text of an HTML document, boilerplate removed. */
export function htmlToText(html: string): string {
  if (typeof html !== "string") throw new TypeError(`html must be a string, got ${typeof html}`);
  const all: string[] = [];
  const primary: string[] = [];
  // Per open element: did it start a skipped region, a primary region?
  const stack: { skip: boolean; primary: boolean }[] = [];
  let skipDepth = 0;
  let primaryDepth = 0;
  const push = (text: string) => {
    if (skipDepth > 0) return;
    all.push(text);
    if (primaryDepth > 0) primary.push(text);
  };
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        const role = attributes.role?.toLowerCase();
        const skip =
          SKIP.has(name) ||
          (role !== undefined && SKIP_ROLES.has(role)) ||
          "hidden" in attributes ||
          attributes["aria-hidden"] === "true";
        const isPrimary = PRIMARY.has(name) || role === "main";
        stack.push({ skip, primary: isPrimary });
        if (skip) skipDepth++;
        if (isPrimary) primaryDepth++;
        if (BLOCK.has(name)) push("\n");
      },
      ontext(text) {
        push(text);
      },
      onclosetag(name) {
        const open = stack.pop();
        if (open?.skip) skipDepth--;
        if (open?.primary) primaryDepth--;
        if (BLOCK.has(name)) push("\n");
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  const chosen = primary.some((part) => part.trim() !== "") ? primary : all;
  return chosen
    .join("")
    .replace(/[ \t\f\v\r\u00a0]+/g, " ")
    .replace(/ *\n[\s]*/g, "\n")
    .trim();
}
