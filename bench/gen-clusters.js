// A deterministic JSON-lines collection with one huge cluster, the shape of a crawl full of
// "session expired" pages: COPIES copies of one page (a third byte-identical, the rest with one
// to three words changed, as a session token or a timestamp would) spread among distinct pages
// of 150 words drawn from a 20,000-word vocabulary. Lines are {"id": n, "text": ...}; ids of the
// copies are those with id % 3 === 0 while copies remain. With NEAR > 0, each other page is with
// that probability a near copy (2% of its words replaced) of an earlier one, as in the issue's
// "one in ten a near copy" collections. With PLANTED, the planted truth goes there (see
// bench/planted-truth.js): the near copies' pairs with their exact Jaccard, and which copies a
// first-kept dedup at THRESHOLD removes.
// usage: node bench/gen-clusters.js [DOCS] [COPIES] [OUT_FILE] [NEAR] [PLANTED] [THRESHOLD]
//        (default 20000 6666 bench/out/clusters.jsonl 0, no PLANTED file, 0.8)
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { xorshift32 } from "./common.js";
import { PlantedTruth } from "./planted-truth.js";

const docs = Number(process.argv[2] ?? 20_000);
const copies = Number(process.argv[3] ?? 6_666);
const file = process.argv[4] || "bench/out/clusters.jsonl";
const near = Number(process.argv[5] ?? 0);
const planted = process.argv[6] ? new PlantedTruth(process.argv[6], Number(process.argv[7] ?? 0.8)) : undefined;

const WORDS = 150;
const next = xorshift32(0x2545f491);
const wordIndex = () => Math.floor(next() * 20_000);
const text = (indices) => Array.from(indices, (i) => `w${i}`).join(" ");

// The distinct pages that near copies are drawn from, as word indices, 150 to a page, in chunks.
const CHUNK = 1 << 16;
const chunks = [];
let pageCount = 0;
const pageIds = [];
const pageAt = (n) => chunks[Math.floor(n / CHUNK)].subarray((n % CHUNK) * WORDS, ((n % CHUNK) + 1) * WORDS);
function addPage(words, id) {
  if (pageCount % CHUNK === 0) chunks.push(new Uint16Array(CHUNK * WORDS));
  chunks[chunks.length - 1].set(words, (pageCount % CHUNK) * WORDS);
  pageIds.push(id);
  pageCount++;
}

const expired = Array.from({ length: WORDS }, wordIndex);
mkdirSync(dirname(file), { recursive: true });
const fd = openSync(file, "w");
let buffered = [];
let bufferedChars = 0;
const write = (line) => {
  buffered.push(line);
  bufferedChars += line.length;
  if (bufferedChars > 1 << 22) writeSync(fd, buffered.join("")), (buffered = []), (bufferedChars = 0);
};
let made = 0;
for (let id = 0; id < docs; id++) {
  let line;
  if (id % 3 === 0 && made < copies) {
    const words = expired.map((i) => `w${i}`);
    const edits = made % 3 === 0 ? 0 : 1 + (made % 3);
    for (let e = 0; e < edits; e++) words[Math.floor(next() * words.length)] = `token${Math.floor(next() * 1e9)}`;
    line = words.join(" ");
    made++;
  } else if (pageCount > 0 && next() < near) {
    const n = Math.floor(next() * pageCount);
    const original = pageAt(n);
    const words = new Uint16Array(WORDS);
    for (let k = 0; k < WORDS; k++) words[k] = next() < 0.02 ? wordIndex() : original[k];
    line = text(words);
    planted?.copy(id, pageIds[n], original, words);
  } else {
    const words = Array.from({ length: WORDS }, wordIndex);
    if (near > 0) addPage(words, id);
    line = text(words);
  }
  write(`${JSON.stringify({ id, text: line })}\n`);
}
writeSync(fd, buffered.join(""));
closeSync(fd);
planted?.close();
process.stderr.write(`${docs} documents, ${made} copies of one page -> ${file}\n`);
