// One Crawlee crawler process for the process tests: a CheerioCrawler over the local site, its
// queue in MemoryStorage (on disk in `storage`, kept between runs, or in memory), behind a
// SieveRequestManager over an lmdb or Redis seen-set. After each request the queue marked
// handled, its uniqueKey is appended to `doneLog` (synchronously, so a kill -9 cannot lose a
// line): the pages this process acknowledged. Before the queue is asked to mark it, the key goes
// to `doneLog` + ".marking": a kill that lands after the queue stored "handled" but before the
// acknowledgement was written leaves the key there alone. With `commitLog`, each group of handled
// keys the seen-set took is noted there (its size, a line). Options come as JSON in argv[2].
import { appendFileSync } from "node:fs";
import { MemoryStorage } from "@crawlee/memory-storage";
import { CheerioCrawler, Configuration, log, RequestQueue } from "crawlee";
import { createClient } from "redis";
import { openSeenSet } from "crawlsieve";
import { SieveRequestManager } from "crawlsieve/crawlee";

const opts = JSON.parse(process.argv[2]);
log.setLevel(log.LEVELS.OFF);

const storage = opts.storage ? new MemoryStorage({ localDataDirectory: opts.storage, persistStorage: true }) : new MemoryStorage({ persistStorage: false });
const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStateIntervalMillis: 3_600_000 });
let client;
let seen;
if (opts.seen.backend === "redis") {
  client = createClient({ url: opts.seen.url });
  await client.connect();
  seen = { backend: "redis", client, name: opts.seen.name };
} else {
  seen = opts.seen;
}
let opened;
if (opts.commitLog) {
  opened = await openSeenSet(seen);
  seen = {
    ...opened,
    addMany: async (keys) => {
      const fresh = await opened.addMany(keys);
      appendFileSync(opts.commitLog, `${keys.length}\n`);
      return fresh;
    },
  };
}
const queue = await RequestQueue.open(opts.queue ?? "crawl", { config });
const sieve = await SieveRequestManager.open(queue, { config, seen, commit: opts.commit, resume: opts.resume });
const mark = sieve.markRequestHandled.bind(sieve);
sieve.markRequestHandled = async (request) => {
  appendFileSync(`${opts.doneLog}.marking`, `${request.uniqueKey}\n`);
  const info = await mark(request);
  appendFileSync(opts.doneLog, `${request.uniqueKey}\n`);
  return info;
};

const crawler = new CheerioCrawler(
  {
    requestQueue: sieve,
    minConcurrency: opts.concurrency,
    maxConcurrency: opts.concurrency,
    maxRequestRetries: 1,
    async requestHandler({ enqueueLinks }) {
      await enqueueLinks();
    },
  },
  config,
);
// Requests a killed run had locked come back after the lock expires (Crawlee's default: at least 60 s).
queue.requestLockSecs = opts.lockSecs ?? 60;
await crawler.run(opts.start);
process.stdout.write(JSON.stringify(sieve.stats) + "\n");
await sieve.close();
await opened?.close();
await client?.quit();
