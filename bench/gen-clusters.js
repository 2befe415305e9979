// A deterministic JSON-lines collection with one huge cluster, the shape of a crawl full of
// "session expired" pages: COPIES copies of one page (a third byte-identical, the rest with one
// to three words changed, as a session token or a timestamp would) spread among distinct pages
// of 150 words drawn from a 20,000-word vocabulary. Lines are {"id": n, "text": ...}; ids of the
// copies are those with id % 3 === 0 while copies remain. With NEAR > 0, each other page is with
// that probability a near copy (2% of its words replaced) of an earlier one, as in the issue's
// "one in ten a near copy" collections.
// usage: node bench/gen-clusters.js [DOCS] [COPIES] [OUT_FILE] [NEAR]   (default 20000 6666 bench/out/clusters.jsonl 0)
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { xorshift32 } from "./common.js";

const docs = Number(process.argv[2] ?? 20_000);
const copies = Number(process.argv[3] ?? 6_666);
const file = process.argv[4] ?? "bench/out/clusters.jsonl";
const near = Number(process.argv[5] ?? 0);

const next = xorshift32(0x2545f491);
const word = () => `w${Math.floor(next() * 20_000)}`;
const page = () => Array.from({ length: 150 }, word);
const WORDS = 150;
// Earlier pages (those near copies are made of) as word numbers in one growing array: 300 bytes
// a page, where arrays of strings ran out of heap at 2 M documents.
let pages = new Uint16Array(WORDS * 1024);
let pageCount = 0;

const expired = page();
mkdirSync(dirname(file), { recursive: true });
const fd = openSync(file, "w");
let made = 0;
for (let id = 0; id < docs; id++) {
  let text;
  if (id % 3 === 0 && made < copies) {
    const words = expired.slice();
    const edits = made % 3 === 0 ? 0 : 1 + (made % 3);
    for (let e = 0; e < edits; e++) words[Math.floor(next() * words.length)] = `token${Math.floor(next() * 1e9)}`;
    text = words.join(" ");
    made++;
  } else if (pageCount > 0 && next() < near) {
    const at = Math.floor(next() * pageCount) * WORDS;
    text = Array.from(pages.subarray(at, at + WORDS), (w) => (next() < 0.02 ? word() : `w${w}`)).join(" ");
  } else {
    const words = page();
    if (near > 0) {
      if ((pageCount + 1) * WORDS > pages.length) {
        const grown = new Uint16Array(pages.length * 2);
        grown.set(pages);
        pages = grown;
      }
      words.forEach((w, i) => (pages[pageCount * WORDS + i] = Number(w.slice(1))));
      pageCount++;
    }
    text = words.join(" ");
  }
  writeSync(fd, `${JSON.stringify({ id, text })}\n`);
}
closeSync(fd);
process.stderr.write(`${docs} documents, ${made} copies of one page, ${pageCount} pages near copies were made of -> ${file}\n`);
