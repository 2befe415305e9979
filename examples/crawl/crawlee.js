// Crawlee's CheerioCrawler crawling the offline docs site (examples/crawl/site.js) through
// crawlsieve/crawlee: the queue's storage and an on-disk seen-set both in STORE_DIR, so a second
// run fetches nothing, and a run killed half-way is finished by the next without a page fetched
// twice (except those in flight at the kill) or skipped. Prints one JSON line of counts.
// usage: node examples/crawl/crawlee.js [STORE_DIR] [PAGES] [PORT]   (npm run build first; the
// site's port is fixed, 48124 by default, so URLs and their keys are the same each run)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStorage } from "@crawlee/memory-storage";
import { CheerioCrawler, Configuration, log, RequestQueue } from "crawlee";
import { SieveRequestManager } from "../../build/js/crawlee/index.js";
import { startDocsSite } from "./site.js";

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), "crawlsieve-crawlee-"));
const site = await startDocsSite(Number(process.argv[3] ?? 2000), Number(process.argv[4] ?? 48124));
log.setLevel(log.LEVELS.WARNING);

// Crawlee's own storage on disk, kept between runs (a named queue is never purged at start).
const config = new Configuration({
  storageClient: new MemoryStorage({ localDataDirectory: join(dir, "storage") }),
  purgeOnStart: false,
});
const queue = await RequestQueue.open("docs", { config });
const sieve = await SieveRequestManager.open(queue, { config, seen: { backend: "disk", path: join(dir, "seen") } });

const crawler = new CheerioCrawler(
  {
    // As in the README: `requestManager: sieve` on Crawlee 3.15+ (SieveRequestManager.open makes
    // the option checks of 3.15 to 3.18.1, which forget that option, accept it).
    requestManager: sieve,
    minConcurrency: 8,
    maxConcurrency: 8,
    async requestHandler({ enqueueLinks }) {
      await enqueueLinks();
    },
  },
  config,
);
await crawler.run([site.start]);
const fetchedTwice = [...site.hits.values()].filter((n) => n > 1).length;
console.log(
  JSON.stringify({ store: dir, sitePages: site.pages, fetched: site.hits.size, fetchedTwice, ...sieve.stats }),
);
await sieve.close();
await site.close();
