// One contender of bench/crawlee.bench.js, in its own process: a crawl-order stream of link
// occurrences (pages of PER_PAGE links, NEW_PER_PAGE of them URLs never linked before, the rest
// earlier URLs in spellings Crawlee's key folds: trailing slash, utm_ parameters, fragments),
// enqueued page by page into a Crawlee 3.18.1 RequestQueue over an in-memory MemoryStorage,
// either directly (plain Crawlee) or through a SieveRequestManager (memory, lmdb or redis
// seen-set). Two paths: "add" passes URL strings to addRequestsBatched (crawler.addRequests,
// context.addRequests), "links" goes through Crawlee's enqueueLinks({ urls }) (which builds a
// Request per link before the queue, or the sieve, sees it). After each page one request is
// fetched and marked handled, as a crawl does (the sieve commits handled keys to its seen-set).
// Prints one JSON line: stream seconds and CPU seconds, storage-client calls and items, the
// queue's request count, requests handled.
// usage: node bench/peers/crawlee-enqueue.js CONTENDER PATH OCCURRENCES DISTINCT [REDIS_URL]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStorage } from "@crawlee/memory-storage";
import { Configuration, enqueueLinks, log, RequestQueue } from "crawlee";
import { createClient } from "redis";
import { SieveRequestManager } from "../../build/js/crawlee/index.js";

const [contender, path, occurrencesArg, distinctArg, redisUrl] = process.argv.slice(2);
const occurrences = Number(occurrencesArg);
const distinct = Number(distinctArg);
log.setLevel(log.LEVELS.OFF);

// The stream: page p brings NEW_PER_PAGE new URLs and PER_PAGE - NEW_PER_PAGE repeats of earlier
// ones (a deterministic LCG picks them), spelled one of four ways that share a Crawlee key.
const PER_PAGE = 500;
const pages = Math.ceil(occurrences / PER_PAGE);
const NEW_PER_PAGE = Math.ceil(distinct / pages);
const url = (id) => `https://docs.example.com/section-${id % 97}/page-${id}`;
const SPELL = [(u) => u, (u) => `${u}/`, (u) => `${u}?utm_source=nav&utm_medium=menu`, (u) => `${u}#content`];
let lcg = 12345;
const next = () => (lcg = (Math.imul(lcg, 1103515245) + 12345) >>> 0);
const stream = [];
let made = 0;
for (let p = 0; p < pages; p++) {
  const links = [];
  for (let i = 0; i < NEW_PER_PAGE && made < distinct; i++) links.push(url(made++));
  while (links.length < PER_PAGE) links.push(SPELL[next() % 4](url(next() % made)));
  stream.push(links);
}

// What reaches the queue's storage, counted.
const counts = { addRequestCalls: 0, batchCalls: 0, batchItems: 0 };
const inner = new MemoryStorage({ persistStorage: false });
const storage = new Proxy(inner, {
  get(target, prop) {
    if (prop !== "requestQueue") return Reflect.get(target, prop, target);
    return (...args) => {
      const client = target.requestQueue(...args);
      return new Proxy(client, {
        get(c, p) {
          if (p === "addRequest") return (r, o) => (counts.addRequestCalls++, c.addRequest(r, o));
          if (p === "batchAddRequests")
            return (rs, o) => (counts.batchCalls++, (counts.batchItems += rs.length), c.batchAddRequests(rs, o));
          const v = Reflect.get(c, p, c);
          return typeof v === "function" ? v.bind(c) : v;
        },
      });
    };
  },
});
const config = new Configuration({ storageClient: storage, persistStateIntervalMillis: 3_600_000 });
const queue = await RequestQueue.open(null, { config });
let target = queue;
let sieve;
let client;
let dir;
if (contender !== "plain") {
  let seen;
  if (contender === "memory") seen = { backend: "memory" };
  else if (contender === "lmdb")
    seen = { backend: "lmdb", path: join((dir = mkdtempSync(join(tmpdir(), "cs-bench-crawlee-"))), "seen") };
  else if (contender === "redis") {
    client = createClient({ url: redisUrl });
    await client.connect();
    seen = { backend: "redis", client, name: `bench-${process.pid}-${Date.now()}` };
  } else throw new Error(`unknown contender ${contender}`);
  sieve = await SieveRequestManager.open(queue, { config, seen, persist: false });
  target = sieve;
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
let handled = 0;
for (const links of stream) {
  if (path === "add") await target.addRequestsBatched(links, { waitForAllRequestsToBeAdded: true });
  else await enqueueLinks({ urls: links, requestQueue: target, strategy: "all", waitForAllRequestsToBeAdded: true });
  const request = await target.fetchNextRequest();
  if (request) {
    await target.markRequestHandled(request);
    handled += 1;
  }
}
// The sieve's last group of handled keys is committed inside the timed part.
await sieve?.persist();
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const total = queue.getTotalCount();
await sieve?.close();
await client?.quit();
if (dir) rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    occurrences: pages * PER_PAGE,
    distinct: made,
    queued: total,
    handled,
    committed: sieve?.stats.committed ?? 0,
    ...counts,
  }),
);
