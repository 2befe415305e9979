// crawlsieve/crawler with the real node-crawler 2.x against the local test site (no network):
// each distinct request fetched once, where node-crawler's own skipDuplicates fetches one URL
// once per synchronous add; a failed fetch forgotten so a later add retries it; a crawler killed
// mid-crawl and run again over the on-disk seen-set skips no page; two processes sharing Redis
// fetch each page once between them.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Crawler from "crawler";
import Crawler211 from "crawler-2.1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../build/js/index.node.js";
import { sieveCrawler } from "../build/js/crawler/index.js";
import { ready } from "./helpers.js";
import { startSite, type CrawlSite } from "./support/crawl-site.js";
import { freePorts } from "./support/local-servers.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const CHILD = new URL("./support/crawler-child.mjs", import.meta.url).pathname;
let redis: RedisServer;
let dir: string;

beforeAll(async () => {
  await ready();
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), "cs-crawler-"));
}, 120_000);
afterAll(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A node-crawler callback that only releases the slot. */
const release = (_error: unknown, _response: unknown, done?: unknown) => (done as () => void)();

/** Resolves at node-crawler's next "drain". */
const drained = (crawler: InstanceType<typeof Crawler>) =>
  new Promise<void>((resolve) => crawler.once("drain", () => resolve()));

/**
 * What the site's server must log for a whole crawl, worked out from the site's own link list
 * with HTTP's rules, not crawlsieve's: a fragment is never sent, host case is not in the path;
 * the two orders of one query are one request (one of the pair is fetched); a redirect's target
 * is fetched once more by the redirect (node-crawler's HTTP client follows it).
 */
function expectation(site: CrawlSite) {
  const entries = new Set<string>();
  for (const slot of ["/", ...site.slots()]) {
    const url = new URL(slot, site.origin);
    entries.add(`GET ${url.pathname}${url.search}`);
  }
  const pairs = site.queryPages.map((i) => [`GET /q/${i}?a=1&b=2`, `GET /q/${i}?b=2&a=1`]);
  const twice = new Set(site.redirects.map((i) => `GET /p/${i}`));
  return { entries, pairs, twice };
}

/** Checks a crawl's hits against the expectation: every request once (redirect targets twice), nothing missed. */
function checkCrawl(site: CrawlSite, hits: ReadonlyMap<string, number>, slack = 0) {
  const { entries, pairs, twice } = expectation(site);
  const paired = new Set(pairs.flat());
  const extra: string[] = [];
  for (const [entry, count] of hits) {
    if (!entries.has(entry)) throw new Error(`fetched ${entry}, which no page links`);
    if (count > (twice.has(entry) ? 2 : 1)) extra.push(`${entry} x${count}`);
  }
  expect(extra.length, extra.join(", ")).toBeLessThanOrEqual(slack);
  for (const entry of entries) if (!paired.has(entry)) expect(hits.has(entry), `${entry} was never fetched`).toBe(true);
  for (const [a, b] of pairs) expect((hits.get(a) ?? 0) + (hits.get(b) ?? 0), `${a} and ${b}`).toBe(1);
}

// The oldest and the newest node-crawler 2.x (2.1.1 wants Node 22 by its engines field, and runs here on 20).
describe.each([
  ["crawler 2.0.2", Crawler],
  ["crawler 2.1.1", Crawler211],
] as const)("crawlsieve/crawler with %s", (_, Crawler) => {
  it("five synchronous adds of one URL: one fetch with the sieve, five with skipDuplicates alone", async () => {
    const site = await startSite({ pages: 5, navLinks: 10 });
    const url = `${site.origin}/p/1`;
    const run = async (sieved: boolean) => {
      site.reset();
      const crawler = new Crawler({ skipDuplicates: true, silence: true, callback: release });
      const sieve = sieved ? await sieveCrawler(crawler, {}) : undefined;
      for (let i = 0; i < 5; i++) crawler.add(url);
      await (sieve === undefined ? drained(crawler) : sieve.idle());
      await sieve?.close();
      return site.hits.get("GET /p/1") ?? 0;
    };
    expect(await run(false)).toBe(5);
    expect(await run(true)).toBe(1);
    await site.close();
  });

  it("crawls a link-dense site fetching every distinct request exactly once", async () => {
    const site = await startSite({ pages: 20 });
    const crawler = new Crawler({
      maxConnections: 8,
      retries: 0,
      silence: true,
      callback(error: unknown, res: { $?: import("cheerio").CheerioAPI; options: { url: string } }, done?: unknown) {
        const $ = res.$;
        if (!error && $ !== undefined)
          crawler.add(
            $("a")
              .map((_, a) => ({ url: new URL($(a).attr("href")!, res.options.url).href }))
              .get(),
          );
        (done as () => void)();
      },
    });
    const sieve = await sieveCrawler(crawler, { seen: { backend: "memory" } });
    crawler.add(`${site.origin}/`);
    await sieve.idle();
    checkCrawl(site, site.hits);
    expect(sieve.stats.dropped).toBeGreaterThan(20 * 1000);
    await sieve.close();
    await site.close();
  }, 180_000);

  it("identical POST bodies are one request, different bodies two", async () => {
    const site = await startSite({ pages: 2, navLinks: 4 });
    const crawler = new Crawler({ silence: true, callback: release });
    const sieve = await sieveCrawler(crawler);
    const post = (q: string) => ({
      url: `${site.origin}/submit`,
      method: "POST",
      body: `q=${q}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    crawler.add([post("1"), post("1"), post("2")]);
    await sieve.idle();
    expect([site.hits.get("POST /submit q=1"), site.hits.get("POST /submit q=2")]).toEqual([1, 1]);
    await sieve.close();
    await site.close();
  });

  it("forgetOnFailure: a URL whose fetch finally failed is fetched again by a later add; without it, never", async () => {
    const site = await startSite({ pages: 3, navLinks: 4 });
    const url = `${site.origin}/fail/1`;
    for (const forgetOnFailure of [true, false]) {
      site.reset();
      const crawler = new Crawler({ retries: 1, retryInterval: 10, silence: true, callback: release });
      const sieve = await sieveCrawler(crawler, {
        seen: { backend: "lmdb", path: join(dir, `forget-${forgetOnFailure}`) },
        forgetOnFailure,
      });
      crawler.add(url);
      await sieve.idle();
      expect(site.hits.get("GET /fail/1")).toBe(2); // the first try and node-crawler's one retry
      crawler.add(url);
      await sieve.idle();
      expect(site.hits.get("GET /fail/1")).toBe(forgetOnFailure ? 4 : 2);
      expect(sieve.stats.forgotten).toBe(forgetOnFailure ? 2 : 0);
      await sieve.close();
    }
    await site.close();
  });

  it("refuses forgetOnFailure over a seen-set that cannot forget, naming it", async () => {
    const crawler = new Crawler({ silence: true });
    await expect(
      sieveCrawler(crawler, { seen: { backend: "memory", exact: false }, forgetOnFailure: true }),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(sieveCrawler({} as never)).rejects.toThrow(/crawler/);
    await expect(sieveCrawler(crawler, { key: "sha" as never })).rejects.toThrow(/key.*sha/s);
  });
});

describe("crawlsieve/crawler across processes", () => {
  /** Runs the crawler child; resolves with its stats, or undefined when it was killed. */
  const child = (config: object, killAfterHits?: { site: CrawlSite; hits: number }) =>
    new Promise<Record<string, number> | undefined>((resolve, reject) => {
      const proc = spawn(process.execPath, [CHILD, JSON.stringify(config)], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      proc.stdout.on("data", (d) => (out += d));
      if (killAfterHits !== undefined) {
        const timer = setInterval(() => {
          if (killAfterHits.site.log.length >= killAfterHits.hits) {
            clearInterval(timer);
            proc.kill("SIGKILL");
          }
        }, 2);
        proc.on("exit", () => clearInterval(timer));
      }
      proc.on("exit", (code, signal) => {
        if (signal === "SIGKILL") resolve(undefined);
        else if (code === 0) resolve(JSON.parse(out));
        else reject(new Error(`crawler child exited ${code}`));
      });
    });

  it("kill -9 mid-crawl, then a rerun over the lmdb seen-set: no page skipped, none fetched twice but those in flight", async () => {
    const site = await startSite({ pages: 20, delayMs: 5 });
    const config = {
      origin: site.origin,
      seen: { backend: "lmdb", path: join(dir, "killed") },
      worker: "w1",
      maxConnections: 4,
    };
    expect(await child(config, { site, hits: 40 })).toBeUndefined();
    const before = site.log.length;
    expect(before).toBeLessThan(90);
    const stats = await child(config);
    expect(stats!.resumed).toBeGreaterThan(0);
    // At most the requests in flight at the kill (maxConnections) are fetched again.
    checkCrawl(site, site.hits, 4);
    await site.close();
  }, 240_000);

  it("two processes sharing one Redis seen-set fetch each request once between them", async () => {
    const site = await startSite({ pages: 20, delayMs: 2 });
    const seen = { backend: "redis", url: redis.url, name: "fleet-crawl" };
    const [a, b] = await Promise.all([
      child({ origin: site.origin, seen, worker: "a" }),
      child({ origin: site.origin, seen, worker: "b" }),
    ]);
    checkCrawl(site, site.hits);
    expect(a!.scheduled + b!.scheduled).toBe(expectation(site).entries.size - site.queryPages.length);
    await site.close();
  }, 240_000);

  it("a 12 s Redis stall mid-crawl: the crawl goes on after it, every page fetched, none skipped", async () => {
    const site = await startSite({ pages: 40, delayMs: 10 });
    let stalled = false;
    const timer = setInterval(() => {
      if (!stalled && site.log.length >= 20) {
        stalled = true;
        redis.pause();
        setTimeout(() => redis.resume(), 12_000);
      }
    }, 2);
    try {
      const stats = await child({
        origin: site.origin,
        seen: { backend: "redis", url: redis.url, name: "stalled-crawl" },
        worker: "w1",
      });
      expect(stalled).toBe(true);
      expect(stats!.retries).toBeGreaterThan(0);
      // A batch whose failed flush may have committed it is let through once more (at least once):
      // at most the links of the pages in flight, never a page skipped.
      checkCrawl(site, site.hits, 0);
    } finally {
      clearInterval(timer);
      redis.resume();
      await site.close();
    }
  }, 120_000);

  it("the example crawler (examples/crawl/node-crawler.js) fetches every page of the offline docs site once, and nothing on a second run", async () => {
    const example = new URL("../examples/crawl/node-crawler.js", import.meta.url).pathname;
    const store = join(dir, "example");
    // One port for both runs, so the URLs (and their keys in the store) are the same.
    const [port] = await freePorts(1);
    const run = () =>
      new Promise<Record<string, number>>((resolve, reject) => {
        const proc = spawn(process.execPath, [example, store, "300", String(port)], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        let out = "";
        proc.stdout.on("data", (d) => (out += d));
        proc.on("exit", (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`example exited ${code}`)),
        );
      });
    const first = await run();
    expect([first.sitePages, first.fetched, first.fetchedTwice, first.scheduled]).toEqual([300, 300, 0, 300]);
    const second = await run();
    expect([second.fetched, second.scheduled, second.dropped]).toEqual([0, 0, 1]);
  }, 240_000);
});
