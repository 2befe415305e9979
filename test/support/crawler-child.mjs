// A node-crawler 2.x process crawling the local test site through crawlsieve/crawler: argv[2] is
// JSON { origin, seen, worker, maxConnections } (for redis, seen.url instead of a client). Every
// page's links are added back; once the sieve is idle it prints the sieve's stats as JSON and exits.
import Crawler from "crawler";
import { createClient } from "redis";
import { init } from "../../build/js/index.node.js";
import { sieveCrawler } from "../../build/js/crawler/index.js";

await init();
const { origin, seen, worker, maxConnections = 4 } = JSON.parse(process.argv[2]);
let client;
if (seen.backend === "redis") {
  client = createClient({ url: seen.url });
  await client.connect();
  seen.client = client;
  delete seen.url;
}
const crawler = new Crawler({
  maxConnections,
  retries: 0,
  silence: true,
  callback(error, res, done) {
    if (!error && res.$) {
      const links = res.$("a").map((_, a) => res.$(a).attr("href")).get();
      crawler.add(links.map((href) => new URL(href, res.options.url).href));
    }
    done();
  },
});
const sieve = await sieveCrawler(crawler, { seen, worker });
crawler.add(`${origin}/`);
await sieve.idle();
await sieve.close();
await client?.quit();
process.stdout.write(JSON.stringify(sieve.stats));
