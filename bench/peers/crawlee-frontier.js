// One contender of the frontier-memory part of bench/crawlee.bench.js, in its own process: N
// distinct URLs put into what keeps a crawl's frontier from fetching a URL twice, then the memory
// still held after a full collection (heap + memory outside it: WebAssembly, buffers), per URL.
// - crawlee: a Crawlee 3.18.1 RequestQueue over MemoryStorage with persistStorage: false (every
//   request stays in memory: the storage's Map of entries, plus the queue's LRU cache (capped at
//   2M entries, two per request) and its 1M-slot dedup cache), N URLs added in batches of 1,000.
// - bloom: openSeenSet({ backend: "memory", exact: false, fpRate: 1e-6, items: N }).
// - exact: openSeenSet({ backend: "memory" }) (128-bit fingerprints).
// Run with --expose-gc. usage: node --expose-gc bench/peers/crawlee-frontier.js CONTENDER N
import { MemoryStorage } from "@crawlee/memory-storage";
import { Configuration, log, RequestQueue } from "crawlee";
import { init, openSeenSet } from "../../build/js/index.node.js";

const [contender, nArg] = process.argv.slice(2);
const n = Number(nArg);
log.setLevel(log.LEVELS.OFF);
const url = (i) => `https://docs.example-${i % 89}.org/section-${i % 997}/page/${i}.html?lang=en`;
const held = () => {
  global.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

let add;
let keep;
if (contender === "crawlee") {
  const config = new Configuration({
    storageClient: new MemoryStorage({ persistStorage: false }),
    persistStateIntervalMillis: 3_600_000,
  });
  const queue = await RequestQueue.open(null, { config });
  add = (urls) => queue.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
  keep = async () => queue.getTotalCount();
} else {
  await init();
  const seen = await openSeenSet(
    contender === "bloom" ? { backend: "memory", exact: false, fpRate: 1e-6, items: n } : { backend: "memory" },
  );
  add = (urls) => seen.addMany(urls);
  keep = () => seen.size();
}
const before = held();
const t0 = performance.now();
const BATCH = 1000;
for (let start = 0; start < n; start += BATCH) {
  const urls = [];
  for (let i = start; i < Math.min(n, start + BATCH); i++) urls.push(url(i));
  await add(urls);
}
const seconds = (performance.now() - t0) / 1000;
const grown = held() - before;
// Still alive when measured: the count is read after.
const count = await keep();
console.log(JSON.stringify({ n, count, seconds, bytes: grown, bytesPerUrl: grown / n }));
