// One contender of bench/seen.bench.js in its own process: a crawl-order stream of link
// occurrences (pages of 1,250 links: a few new links each, the rest seen before), checked and
// inserted a page at a time. argv: contender, distinct URLs, occurrences per URL.
// Prints JSON: keys checked, new, seconds, and the memory held per distinct URL. Run with --expose-gc.
import { createRequire } from "node:module";
import { init, openSeenSet } from "../../build/js/index.node.js";

const [contender, distinctArg, repeatArg] = process.argv.slice(2);
const distinct = Number(distinctArg);
const repeat = Number(repeatArg);
const PAGE = 1250;

/** Page p's links: its share of new URLs, then links to URLs met before (deterministic). */
function* pages() {
  const fresh = Math.ceil(PAGE / repeat);
  let next = 0;
  let seed = 7;
  for (let p = 0; next < distinct; p++) {
    const links = [];
    for (let i = 0; i < PAGE; i++) {
      if (i < fresh && next < distinct) links.push(url(next++));
      else {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        links.push(url(seed % Math.max(1, next)));
      }
    }
    yield links;
  }
}
const url = (i) => `https://docs.example-${i % 89}.org/section-${i % 997}/page/${i}.html?lang=en`;

async function contenderFor(name) {
  if (name === "crawlsieve-exact" || name === "crawlsieve-bloom") {
    await init();
    const seen = await openSeenSet(
      name === "crawlsieve-exact" ? { backend: "memory" } : { backend: "memory", exact: false, fpRate: 1e-6 },
    );
    return (links) => seen.addMany(links);
  }
  if (name === "set") {
    const set = new Set();
    return (links) => links.map((l) => (set.has(l) ? 0 : (set.add(l), 1)));
  }
  if (name === "seenreq") {
    // node-crawler 2.x's own duplicate check (skipDuplicates): normalise, MD5 hex, a Set.
    const Seenreq = createRequire(import.meta.url)("seenreq");
    const seen = new Seenreq();
    await seen.initialize();
    return async (links) => {
      const exists = await seen.exists(links.map((l) => ({ uri: l })));
      // One request in, one boolean out (not an array).
      return (Array.isArray(exists) ? exists : [exists]).map((e) => (e ? 0 : 1));
    };
  }
  throw new Error(`unknown contender ${name}`);
}

const check = await contenderFor(contender);
// What stays reachable after a full collection: the JavaScript heap plus memory outside it
// (WebAssembly memories, buffers). RSS would also count the garbage of the stream itself.
const held = () => {
  global.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};
const before = held();
const t0 = performance.now();
let keys = 0;
let fresh = 0;
for (const links of pages()) {
  const flags = await check(links);
  keys += links.length;
  for (const f of flags) fresh += f;
}
const seconds = (performance.now() - t0) / 1000;
const grown = held() - before;
// The contender must still be alive when its memory is read (a check after the measure keeps it so).
if ((await check([url(0)]))[0] !== 0) throw new Error(`${contender} forgot a URL`);
process.stdout.write(JSON.stringify({ keys, fresh, seconds, bytesPerUrl: grown / distinct }));
