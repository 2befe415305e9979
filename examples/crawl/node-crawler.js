// node-crawler 2.x crawling the offline docs site through crawlsieve/crawler, with the seen-set
// on disk: run it twice and the second run fetches nothing (every page is seen); kill it
// half-way and the next run finishes the crawl without fetching a page twice.
// usage: node examples/crawl/node-crawler.js [STORE_DIR] [PAGES] [PORT]   (npm run build first;
// the site's port is fixed, 48123 by default, so the URLs and their keys are the same each run)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Crawler from "crawler";
import { init } from "../../build/js/index.node.js";
import { sieveCrawler } from "../../build/js/crawler/index.js";
import { startDocsSite } from "./site.js";

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), "crawlsieve-example-"));
const site = await startDocsSite(Number(process.argv[3] ?? 2000), Number(process.argv[4] ?? 48123));
await init();
const crawler = new Crawler({
  maxConnections: 8,
  retries: 0,
  silence: true,
  callback(error, res, done) {
    if (!error)
      crawler.add(
        res
          .$("a")
          .map((_, a) => new URL(res.$(a).attr("href"), res.options.url).href)
          .get(),
      );
    done();
  },
});
const sieve = await sieveCrawler(crawler, {
  seen: process.env.MEMORY ? { backend: "memory" } : { backend: "disk", path: dir },
});
crawler.add(site.start);
await sieve.idle();
const fetchedTwice = [...site.hits.values()].filter((n) => n > 1).length;
console.log(
  JSON.stringify({ store: dir, sitePages: site.pages, fetched: site.hits.size, fetchedTwice, ...sieve.stats }),
);
await sieve.close();
await site.close();
