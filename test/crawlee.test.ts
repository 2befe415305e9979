// crawlsieve/crawlee with the real crawlee package (3.18.1) against the local site, no network.
// What a page's count should be comes from the site's own model and Crawlee's Request class
// (which spellings share a uniqueKey), not from the sieve: every link target once, a redirect
// target twice when the client follows redirects (linked and redirected to), a failing page
// maxRequestRetries + 1 times. What reaches the queue storage is counted by a spy storage client.
import { spawnSync } from "node:child_process";
import { MemoryStorage } from "@crawlee/memory-storage";
import {
  CheerioCrawler,
  Configuration,
  KeyValueStore,
  log,
  Request,
  RequestList,
  RequestQueue,
  type CheerioCrawlerOptions,
  type CheerioCrawlingContext,
} from "crawlee";
import {
  BasicCrawler as BasicCrawler314,
  Configuration as Configuration314,
  RequestQueue as RequestQueue314,
} from "crawlee-basic-3.14";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ContentSieve,
  RedirectSieve,
  ResumeConflictError,
  SieveRequestManager,
  sieveRequestQueue,
  type SieveRequestManagerOptions,
} from "../build/js/crawlee/index.js";
import { init, openSeenSet, requestFingerprint } from "../build/js/index.node.js";
import { fromNodeRedis, RedisMinHashIndex } from "../build/js/redis/index.js";
import { articleText, startSite, type CrawlSite } from "./support/crawl-site.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";
import { spyStorage, type SpyFaults } from "./support/spy-storage.js";

log.setLevel(log.LEVELS.OFF);
const RETRIES = 1;
// dense: every page repeats 1,250 links (the shape the sieve is for); light: 200 links, for the
// tests where the number of links does not matter (Crawlee builds a Request per link: ~0.1 ms).
let dense: CrawlSite;
let site: CrawlSite;
let redis: RedisServer;
let client: ReturnType<typeof createClient>;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-crawlee-"));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  await init();
  [dense, site, redis] = await Promise.all([
    startSite({ pages: 12, navLinks: 1250 }),
    startSite({ pages: 20, navLinks: 200 }),
    startRedis(),
  ]);
  client = createClient({ url: redis.url });
  await client.connect();
}, 120_000);
afterAll(async () => {
  await client?.quit();
  await Promise.all([dense?.close(), site?.close(), redis?.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Crawlee's key of a URL (the reference: Crawlee's own Request). */
const crawleeKey = (url: string) => new Request({ url }).uniqueKey;
const urlOfHit = (entry: string, on = site) => `${on.origin}${entry.split(" ")[1]}`;

/** A site's hits summed by a key of the URL. */
function hitsBy(key: (url: string) => string, on = site): Map<string, number> {
  const out = new Map<string, number>();
  for (const [entry, count] of on.hits) {
    const k = key(urlOfHit(entry, on));
    out.set(k, (out.get(k) ?? 0) + count);
  }
  return out;
}

/** What a crawl from "/" must fetch: each link target once, followed redirect targets twice, failing pages RETRIES + 1 times. */
function expectedHits(followRedirects: boolean, on = site): Map<string, number> {
  const out = new Map<string, number>();
  for (const slot of on.slots()) out.set(crawleeKey(new URL(slot, `${on.origin}/`).href), 1);
  for (const i of on.failing) out.set(crawleeKey(`${on.origin}/fail/${i}`), RETRIES + 1);
  if (followRedirects) for (const i of on.redirects) out.set(crawleeKey(`${on.origin}/p/${i}`), 2);
  return out;
}

const sorted = (m: Map<string, number>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

interface CrawlOptions {
  /** Sieve options (none: plain Crawlee). */
  readonly sieve?: SieveRequestManagerOptions;
  readonly crawler?: Partial<CheerioCrawlerOptions>;
  readonly faults?: SpyFaults;
  readonly start?: string[];
  readonly handler?: (ctx: CheerioCrawlingContext) => Promise<void>;
  /** The site (default: the light one). */
  readonly on?: CrawlSite;
}

/** One crawl of the site from "/" with a fresh in-memory storage behind a spy. */
async function crawl(options: CrawlOptions = {}) {
  const on = options.on ?? site;
  on.reset();
  const { storage, counts } = spyStorage(new MemoryStorage({ persistStorage: false }), options.faults);
  const config = new Configuration({ storageClient: storage, persistStateIntervalMillis: 3_600_000 });
  let sieve: SieveRequestManager | undefined;
  const crawlerOptions: CheerioCrawlerOptions = {
    maxRequestRetries: RETRIES,
    minConcurrency: 4,
    maxConcurrency: 8,
    async requestHandler(ctx) {
      if (options.handler) await options.handler(ctx);
      else await ctx.enqueueLinks();
    },
    ...options.crawler,
  };
  if (options.sieve !== undefined) {
    sieve = await SieveRequestManager.open(await RequestQueue.open(null, { config }), { config, ...options.sieve });
    // The usage; Crawlee 3.15 to 3.18.1 accept it once a sieve is open (see the test below).
    crawlerOptions.requestManager = sieve;
  }
  const crawler = new CheerioCrawler(crawlerOptions, config);
  await crawler.run(options.start ?? [`${on.origin}/`]);
  const stats = sieve ? { ...sieve.stats } : undefined;
  await sieve?.close();
  return { counts, stats, crawler, hits: hitsBy(crawleeKey, on) };
}

describe("a crawl through SieveRequestManager against plain Crawlee", () => {
  it("plain Crawlee 3.18.1 fetches what the site model says (the baseline is right)", async () => {
    const { hits, counts } = await crawl({ on: dense });
    expect(sorted(hits)).toEqual(sorted(expectedHits(true, dense)));
    // Crawlee 3.18's own caches already keep a single run from re-submitting; the sieve must match that.
    expect(counts.sent.length).toBe(new Set(counts.sent).size);
  }, 180_000);

  // The page shape the sieve is for (1,250 links a page) with the default seen-set; every backend on the lighter site.
  it.each([
    ["memory, exact", { backend: "memory" }, "dense"],
    ["memory, exact", { backend: "memory" }, "light"],
    ["memory, Bloom at 1e-6", { backend: "memory", exact: false, fpRate: 1e-6 }, "light"],
    ["lmdb", "lmdb", "light"],
    ["redis, exact", "redis", "light"],
  ] as const)(
    "with the %s seen-set (%s site): the same pages, each as often; storage adds = distinct keys",
    async (_, spec, which) => {
      const on = which === "dense" ? dense : site;
      const seen =
        spec === "lmdb"
          ? { backend: "lmdb" as const, path: join(tempDir(), "seen") }
          : spec === "redis"
            ? { backend: "redis" as const, client, name: `crawl-${Math.random()}` }
            : spec;
      const { hits, counts, stats } = await crawl({ sieve: { seen }, on });
      expect(sorted(hits)).toEqual(sorted(expectedHits(true, on)));
      expect(counts.sent.length).toBe(new Set(counts.sent).size);
      expect(new Set(counts.sent)).toEqual(new Set(expectedHits(true, on).keys()));
      // Every page repeats the navigation block: nearly everything checked was dropped before the queue.
      expect(stats!.forwarded).toBe(counts.sent.length);
      expect(stats!.dropped).toBeGreaterThan(on.pages * (on.navLinks - 10));
    },
    180_000,
  );

  it("a maxRequestsPerCrawl budget is spent on new pages only: the first 15 distinct links of the start page", async () => {
    // One page at a time, so the start page's links are enqueued in their order. Plain Crawlee 3.18.1
    // does the same here, but takes about 14 s for it (it sleeps 1 s between budget-sized chunks of
    // links, most of them duplicates); through the sieve it takes under 1 s.
    const budget = 15;
    const { crawler, hits } = await crawl({
      sieve: {},
      crawler: { maxRequestsPerCrawl: budget, minConcurrency: 1, maxConcurrency: 1 },
    });
    expect(crawler.stats.state.requestsFinished + crawler.stats.state.requestsFailed).toBe(budget);
    const firstKeys = [...new Set(site.slots().map((s) => crawleeKey(new URL(s, `${site.origin}/`).href)))].slice(
      0,
      budget,
    );
    // /old/0 is among them: following it fetches /p/0 a second time, as Crawlee does.
    expect(new Set(hits.keys())).toEqual(new Set(firstKeys));
  }, 180_000);

  it("the budget, directly: dropped duplicates are reported present and never counted against maxNewRequests", async () => {
    const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
    const queue = await RequestQueue.open(null, { config });
    const sieve = await SieveRequestManager.open(queue, { config });
    await sieve.addRequestsBatched(["https://a.example/1", "https://a.example/2"], {
      waitForAllRequestsToBeAdded: true,
    });
    const result = await sieve.addRequestsBatched(
      [
        "https://a.example/1/",
        "https://a.example/2?utm_source=x",
        "https://a.example/3",
        "https://a.example/1",
        "https://a.example/4",
        "https://a.example/5",
        "https://a.example/6",
      ],
      { maxNewRequests: 3, batchSize: 2, waitBetweenBatchesMillis: 0 },
    );
    expect(result.addedRequests.filter((r) => !r.wasAlreadyPresent).map((r) => r.uniqueKey)).toEqual([
      "https://a.example/3",
      "https://a.example/4",
      "https://a.example/5",
    ]);
    const present = result.addedRequests.filter((r) => r.wasAlreadyPresent);
    expect(present.map((r) => r.uniqueKey)).toEqual([
      "https://a.example/1",
      "https://a.example/2",
      "https://a.example/1",
    ]);
    // The id Crawlee's queue gives the key (what its own cache would report).
    expect(present[1].requestId).toBe((await queue.getRequest(present[1].requestId))?.id);
    expect(result.requestsOverLimit).toEqual([{ url: "https://a.example/6" }]);
    expect(queue.getTotalCount()).toBe(5);
    await sieve.close();
  });

  it("failed and refused adds lose nothing: storage throws on two batches and leaves some requests unprocessed", async () => {
    // Call 1 adds the start URL; calls 2 and 4 (enqueueLinks in handlers) throw; call 3 leaves pages ending in 7 unprocessed.
    const faults: SpyFaults = {
      throwOnBatch: (call) => call === 2 || call === 4,
      unprocessed: (key, call) => call === 3 && key.endsWith("7"),
    };
    let thrown = 0;
    const { hits, counts } = await crawl({
      sieve: {},
      faults,
      // A handler that retries its enqueueLinks (so no page is fetched again because its handler failed).
      handler: async (ctx) => {
        for (;;) {
          try {
            await ctx.enqueueLinks({ waitForAllRequestsToBeAdded: true });
            return;
          } catch {
            thrown += 1;
          }
        }
      },
    });
    expect(thrown).toBe(2);
    const expected = expectedHits(true);
    expect(sorted(hits)).toEqual(sorted(expected));
    // Everything was taken once in the end, although some keys were sent more than once.
    expect(counts.accepted.length).toBe(new Set(counts.accepted).size);
    expect(new Set(counts.accepted)).toEqual(new Set(expected.keys()));
    expect(counts.sent.length).toBeGreaterThan(counts.accepted.length);
  }, 180_000);

  it("on-check (fleet) mode gives keys back to an exact seen-set when the queue fails", async () => {
    const { storage } = spyStorage(new MemoryStorage({ persistStorage: false }), {
      throwOnBatch: (call) => call === 1,
    });
    const config = new Configuration({ storageClient: storage });
    const seen = await openSeenSet({ backend: "memory" });
    const sieve = await SieveRequestManager.open(await RequestQueue.open(null, { config }), {
      config,
      seen,
      commit: "on-check",
    });
    const urls = ["https://b.example/1", "https://b.example/2"];
    await expect(sieve.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true })).rejects.toThrow(
      /injected failure/,
    );
    expect(Array.from(await seen.hasMany(urls))).toEqual([0, 0]);
    const again = await sieve.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
    expect(again.addedRequests.map((r) => r.wasAlreadyPresent)).toEqual([false, false]);
    expect(Array.from(await seen.hasMany(urls))).toEqual([1, 1]);
    await sieve.close();
  });

  describe("a Redis stall past the command deadline (a real redis-server, stopped with SIGSTOP; 500 ms deadline)", () => {
    // Short enough to run out in a stall, long enough that a loaded machine does not run out of it otherwise.
    const DEADLINE_MS = 500;
    /** A Redis seen-set whose commands give up after DEADLINE_MS, with `present` in it already. */
    const stallingSet = async (present: string[]) => {
      const seen = await openSeenSet({
        backend: "redis",
        client: fromNodeRedis(client, { timeoutMs: DEADLINE_MS }),
        name: `stall-${Math.random()}`,
      });
      await seen.addMany(present.map(crawleeKey));
      return seen;
    };
    /** Stops redis-server for `ms`: every command sent meanwhile is answered only after it. */
    const stall = (ms: number) => {
      redis.pause();
      return new Promise<void>((resolve) => setTimeout(() => (redis.resume(), resolve()), ms));
    };

    it("after-enqueue: the read that got no reply is asked again, and the add goes through once Redis answers", async () => {
      const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
      const seen = await stallingSet(["https://s.example/old"]);
      const errors: unknown[] = [];
      const sieve = await SieveRequestManager.open(await RequestQueue.open(null, { config }), {
        config,
        seen,
        resume: "keep",
        onError: (e) => errors.push(e),
      });
      const stalled = stall(2_000);
      try {
        const added = await sieve.addRequestsBatched(["https://s.example/old", "https://s.example/new"], {
          waitForAllRequestsToBeAdded: true,
        });
        expect(added.addedRequests.map((r) => [r.uniqueKey, r.wasAlreadyPresent])).toEqual([
          ["https://s.example/new", false],
          ["https://s.example/old", true],
        ]);
      } finally {
        await stalled;
      }
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.every((e) => (e as { code?: string }).code === "ERR_REDIS_UNAVAILABLE")).toBe(true);
      expect(sieve.stats.uncertain).toBe(0);
      await sieve.close();
    }, 120_000);

    it("on-check: a claim whose reply timed out but which Redis carried out is not lost: its keys are enqueued here, counted uncertain", async () => {
      const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
      const real = await stallingSet(["https://s.example/old"]);
      // The stall starts between the read and the claim: the claim is sent, Redis carries it out
      // when it wakes, but its reply comes after the deadline.
      let stalled: Promise<void> | undefined;
      const seen = {
        ...real,
        hasMany: async (keys: readonly (string | Uint8Array)[]) => {
          const found = await real.hasMany(keys);
          stalled ??= stall(2_000);
          return found;
        },
      };
      const sieve = await SieveRequestManager.open(await RequestQueue.open(null, { config }), {
        config,
        seen,
        commit: "on-check",
        resume: "keep",
        onError: () => undefined,
      });
      const urls = ["https://s.example/old", "https://s.example/a", "https://s.example/b"];
      try {
        const added = await sieve.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
        expect(added.addedRequests.map((r) => [r.uniqueKey, r.wasAlreadyPresent])).toEqual([
          ["https://s.example/a", false],
          ["https://s.example/b", false],
          ["https://s.example/old", true],
        ]);
      } finally {
        await stalled;
      }
      // Both claimed keys were in Redis when the claim was asked again (the first attempt had
      // landed): this process cannot tell its own claim from another's, so it enqueues them.
      expect(sieve.stats.uncertain).toBe(2);
      expect(Array.from(await real.hasMany(urls))).toEqual([1, 1, 1]);
      const queued = [
        (await sieve.fetchNextRequest())?.url,
        (await sieve.fetchNextRequest())?.url,
        await sieve.fetchNextRequest(),
      ];
      expect(queued).toEqual(["https://s.example/a", "https://s.example/b", null]);
      await sieve.close();
    }, 120_000);

    it("close() in a stall commits the handled keys once Redis answers; past retryForMs it throws rather than close without them", async () => {
      const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
      const seen = await stallingSet([]);
      const handled = async (sieve: SieveRequestManager, url: string) => {
        await sieve.addRequestsBatched([url], { waitForAllRequestsToBeAdded: true });
        await sieve.markRequestHandled((await sieve.fetchNextRequest())!);
      };
      const patient = await SieveRequestManager.open(await RequestQueue.open(null, { config }), {
        config,
        seen,
        resume: "keep",
        onError: () => undefined,
      });
      await handled(patient, "https://s.example/done");
      let stalled = stall(2_000);
      try {
        await patient.close();
      } finally {
        await stalled;
      }
      expect(patient.stats.committed).toBe(1);
      expect(Array.from(await seen.hasMany([crawleeKey("https://s.example/done")]))).toEqual([1]);

      const hasty = await SieveRequestManager.open(await RequestQueue.open("hasty", { config }), {
        config,
        seen,
        resume: "keep",
        retryForMs: 300,
        onError: () => undefined,
      });
      await handled(hasty, "https://s.example/late");
      stalled = stall(2_000);
      try {
        await expect(hasty.close()).rejects.toMatchObject({ code: "ERR_REDIS_UNAVAILABLE" });
      } finally {
        await stalled;
      }
      expect(hasty.stats.committed).toBe(0);
    }, 120_000);

    it("ContentSieve over a shared RedisMinHashIndex: the page checked in the stall is stored once Redis answers, and its copy is found", async () => {
      const shared = await RedisMinHashIndex.open(fromNodeRedis(client, { timeoutMs: DEADLINE_MS }), {
        name: `near-${Math.random()}`,
        threshold: 0.8,
      });
      const errors: unknown[] = [];
      const content = await ContentSieve.open({ shared, text: () => articleText(3), onError: (e) => errors.push(e) });
      const page = (url: string) => ({ request: { url, uniqueKey: url } });
      const stalled = stall(2_000);
      try {
        expect(await content.check(page("https://n.example/a"))).toBeUndefined();
      } finally {
        await stalled;
      }
      expect(errors.length).toBeGreaterThan(0);
      expect((await content.check(page("https://n.example/b")))?.url).toBe("https://n.example/a");
      expect(content.stats).toEqual({ pages: 2, duplicates: 1 });
    }, 120_000);
  });

  it("concurrent adds of one key: the storage sees it once, and a failed first add is retried by the second", async () => {
    const { storage, counts } = spyStorage(new MemoryStorage({ persistStorage: false }), {
      throwOnBatch: (call) => call === 1,
    });
    const config = new Configuration({ storageClient: storage });
    const sieve = await SieveRequestManager.open(await RequestQueue.open(null, { config }), { config });
    const adds = Array.from({ length: 5 }, () =>
      sieve.addRequestsBatched(["https://c.example/x", "https://c.example/y"], { waitForAllRequestsToBeAdded: true }),
    );
    const outcomes = await Promise.allSettled(adds);
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(1);
    const added = outcomes.flatMap((o) => (o.status === "fulfilled" ? o.value.addedRequests : []));
    expect(
      added
        .filter((r) => !r.wasAlreadyPresent)
        .map((r) => r.uniqueKey)
        .sort(),
    ).toEqual(["https://c.example/x", "https://c.example/y"]);
    expect(counts.accepted.sort()).toEqual(["https://c.example/x", "https://c.example/y"]);
    await sieve.close();
  });

  it("request-list moves (a RequestManagerTandem over the sieve) are filtered too", async () => {
    const list = await RequestList.open(null, [
      `${site.origin}/p/1`,
      `${site.origin}/p/1/`,
      `${site.origin}/p/2?utm_source=list`,
      `${site.origin}/p/2`,
      `${site.origin}/p/3#x`,
    ]);
    site.reset();
    const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
    const sieve = await SieveRequestManager.open(await RequestQueue.open(null, { config }), { config });
    // Pages 1 and 3 are seen before the crawl (a previous run, a sitemap already done).
    await sieve.seen.addMany([crawleeKey(`${site.origin}/p/1`), crawleeKey(`${site.origin}/p/3`)]);
    const crawler = new CheerioCrawler(
      { requestList: list, requestQueue: sieve as unknown as RequestQueue, async requestHandler() {} },
      config,
    );
    await crawler.run();
    expect([...site.hits]).toEqual([["GET /p/2?utm_source=list", 1]]);
    await sieve.close();
  }, 120_000);

  it("a key is kept in the seen-set only once its request is handled: a request a crashed queue lost is added again", async () => {
    const path = join(tempDir(), "lost");
    const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
    const first = await SieveRequestManager.open(await RequestQueue.open("before", { config }), {
      config,
      seen: { backend: "lmdb", path },
    });
    await first.addRequestsBatched(["https://e.example/handled", "https://e.example/pending"], {
      waitForAllRequestsToBeAdded: true,
    });
    const request = (await first.fetchNextRequest())!;
    expect(request.url).toBe("https://e.example/handled");
    await first.markRequestHandled(request);
    await first.close();
    // The queue lost everything (as Crawlee's storage loses a request whose file a kill -9 cut short); the seen-set survived.
    const second = await SieveRequestManager.open(await RequestQueue.open("after", { config }), {
      config,
      seen: { backend: "lmdb", path },
      resume: "keep",
    });
    const again = await second.addRequestsBatched(["https://e.example/handled", "https://e.example/pending"], {
      waitForAllRequestsToBeAdded: true,
    });
    expect(again.addedRequests.map((r) => [r.uniqueKey, r.wasAlreadyPresent])).toEqual([
      ["https://e.example/pending", false],
      ["https://e.example/handled", true],
    ]);
    expect(second.stats.committed).toBe(0);
    await second.close();
  });

  it("requestManager: Crawlee 3.18.1 alone refuses the option it types; with a sieve open its crawlers take it, and still refuse a non-queue", async () => {
    // Crawlee alone, in a fresh process: its own option check forgets requestManager (a Crawlee bug).
    const alone = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import { CheerioCrawler } from "crawlee"; try { new CheerioCrawler({ requestManager: { fetchNextRequest() {}, addRequest() {} }, async requestHandler() {} }); console.log("accepted"); } catch (e) { console.log(e.message); }',
      ],
      { encoding: "utf8" },
    );
    expect(alone.stdout).toMatch(/Did not expect property `requestManager` to exist/);
    const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
    const sieve = await SieveRequestManager.open(await RequestQueue.open(null, { config }), { config });
    const crawler = new CheerioCrawler({ requestManager: sieve, async requestHandler() {} }, config);
    expect((crawler as unknown as { requestManager: unknown }).requestManager).toBe(sieve);
    expect(() => new CheerioCrawler({ requestManager: {} as never, async requestHandler() {} }, config)).toThrow(
      /requestManager/,
    );
    await sieve.close();
  });
});

describe("keys, resume and persistence", () => {
  it('key: "scrapy" writes Scrapy-Redis fingerprints as uniqueKey and shares a Scrapy-Redis dupefilter SET', async () => {
    const dupefilter = `spider-${Math.random()}:dupefilter`;
    const fp = (url: string) => requestFingerprint({ url }, { algorithm: "scrapy-redis" });
    // A Python fleet already crawled pages 0 to 9, spelled plainly.
    const before = Array.from({ length: 10 }, (_, i) => fp(`${site.origin}/p/${i}`));
    await client.sAdd(dupefilter, before);
    const keys: string[] = [];
    const { hits } = await crawl({
      sieve: { key: "scrapy", seen: { backend: "redis", client, dupefilter }, resume: "keep" },
      handler: async (ctx) => {
        keys.push(ctx.request.uniqueKey);
        await ctx.enqueueLinks();
      },
    });
    const byFingerprint = new Map<string, number>();
    for (const [entry, count] of site.hits)
      if (!entry.startsWith("GET /fail/"))
        byFingerprint.set(fp(urlOfHit(entry)), (byFingerprint.get(fp(urlOfHit(entry))) ?? 0) + count);
    const wanted = new Set(site.slots().map((s) => fp(new URL(s, `${site.origin}/`).href)));
    for (const f of before) wanted.delete(f);
    // Redirect targets are also reached by following: count what was requested, not followed.
    const requested = new Set(keys);
    expect(requested).toEqual(
      new Set([...wanted].filter((f) => !site.failing.some((i) => fp(`${site.origin}/fail/${i}`) === f))),
    );
    for (const f of before)
      expect(byFingerprint.has(f) && !site.redirects.some((i) => fp(`${site.origin}/p/${i}`) === f), f).toBe(false);
    expect(keys.length).toBe(requested.size);
    expect(hits.size).toBeGreaterThan(0);
    // The fleet's SET now holds every page this crawl enqueued.
    const inSet = await client.smIsMember(dupefilter, [...wanted]);
    expect(inSet.every(Boolean)).toBe(true);
  }, 180_000);

  it('resume "auto": an empty queue clears a private seen-set left by an earlier crawl, and refuses a shared Redis one', async () => {
    const path = join(tempDir(), "resume");
    const left = await openSeenSet({ backend: "lmdb", path });
    await left.addMany([crawleeKey(`${site.origin}/`)]);
    await left.close();
    const { hits } = await crawl({ sieve: { seen: { backend: "lmdb", path } } });
    expect(sorted(hits)).toEqual(sorted(expectedHits(true)));

    const name = `resume-${Math.random()}`;
    const shared = await openSeenSet({ backend: "redis", client, name });
    await shared.addMany(["https://elsewhere.example/"]);
    const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
    await expect(
      SieveRequestManager.open(await RequestQueue.open(null, { config }), {
        config,
        seen: { backend: "redis", client, name },
      }),
    ).rejects.toThrow(ResumeConflictError);
    const kept = await SieveRequestManager.open(await RequestQueue.open(null, { config }), {
      config,
      seen: { backend: "redis", client, name },
      resume: "keep",
    });
    expect(await kept.seen.size()).toBe(1);
    await kept.close();
  }, 180_000);

  it("an in-memory seen-set is saved into the key-value store on persist-state events and read back with the queue", async () => {
    const config = new Configuration({ storageClient: new MemoryStorage({ persistStorage: false }) });
    const queue = await RequestQueue.open("named", { config });
    const first = await SieveRequestManager.open(queue, { config });
    await first.addRequestsBatched(["https://d.example/1", "https://d.example/2", "https://d.example/3"], {
      waitForAllRequestsToBeAdded: true,
    });
    // Two of the three handled: their keys go to the seen-set; the third stays pending in this process.
    for (let i = 0; i < 2; i++) await first.markRequestHandled((await first.fetchNextRequest())!);
    const store = await KeyValueStore.open(null, { config });
    expect(await store.getValue("CRAWLSIEVE-SEEN-named")).toBe(null);
    config.getEventManager().emit("persistState", { isMigrating: false });
    for (let i = 0; i < 100 && (await store.getValue("CRAWLSIEVE-SEEN-named")) === null; i++)
      await new Promise((r) => setTimeout(r, 20));
    const saved = await store.getValue<Buffer>("CRAWLSIEVE-SEEN-named");
    const restored = await openSeenSet({ backend: "memory", bytes: saved! });
    expect(
      Array.from(await restored.hasMany(["https://d.example/1", "https://d.example/2", "https://d.example/3"])),
    ).toEqual([1, 1, 0]);
    expect(
      Array.from(
        (await first.addRequestsBatched(["https://d.example/3"])).addedRequests.map((r) => r.wasAlreadyPresent),
      ),
    ).toEqual([true]);
    await first.close();
    // A new sieve over the same (non-empty) queue starts from the saved bytes.
    const second = await SieveRequestManager.open(queue, { config });
    expect(
      Array.from(await second.seen.hasMany(["https://d.example/1", "https://d.example/2", "https://d.example/3"])),
    ).toEqual([1, 1, 0]);
    await second.close();
    // Over a purged (empty) queue, the same saved bytes are cleared by resume "auto".
    await queue.drop();
    // ... and said at WARNING (the level a crawl that hides INFO still shows), naming what was cleared.
    const warnings: string[] = [];
    const warning = log.warning;
    log.warning = (message: string) => void warnings.push(message);
    let third: SieveRequestManager;
    try {
      third = await SieveRequestManager.open(await RequestQueue.open("named", { config }), { config });
    } finally {
      log.warning = warning;
    }
    expect(warnings).toEqual([
      'crawlsieve: the request queue is empty, so the memory seen-set was cleared (resume: "auto")',
    ]);
    expect(await third.seen.size()).toBe(0);
    await third.close();
  });
});

describe("page helpers", () => {
  it("RedirectSieve: a redirect target is fetched once; ContentSieve: one page of each near-duplicate pair is pushed", async () => {
    const redirects = new RedirectSieve();
    // One word of 400 changed moves the SimHash of this site's texts by 1 to 6 bits; unrelated pages differ by about 30.
    const content = await ContentSieve.open({ maxDistance: 6 });
    const pushed: string[] = [];
    const { hits } = await crawl({
      sieve: {},
      crawler: { preNavigationHooks: [redirects.preNavigationHook] },
      handler: async (ctx) => {
        const url = new URL(ctx.request.url);
        ctx.pushData = async () => void pushed.push(url.pathname + url.search);
        await redirects.middleware(ctx);
        if (redirects.redirectOf(ctx) === undefined) await content.middleware(ctx);
        await ctx.pushData({ url: ctx.request.url });
        await ctx.enqueueLinks();
      },
    });
    // Nothing fetched twice, redirect targets included.
    expect(sorted(hits)).toEqual(sorted(expectedHits(false)));
    expect(redirects.stats.redirects).toBe(site.redirects.length);
    expect(pushed.filter((p) => p.startsWith("/old/"))).toEqual([]);
    expect(pushed.length).toBe(new Set(pushed).size);
    // Pages with one text: /p/i, its other spellings Crawlee keeps apart (?gclid=, ?a=2&a=1) and its template copy /t/i. One of each group is pushed.
    let duplicates = 0;
    for (let i = 0; i < site.pages; i++) {
      const group = [`/p/${i}`];
      if (site.extras.includes(i)) group.push(`/p/${i}?gclid=g${i}`, `/p/${i}?a=2&a=1`);
      if (site.templates.includes(i)) group.push(`/t/${i}`);
      expect(
        group.filter((p) => pushed.includes(p)),
        `page ${i}`,
      ).toHaveLength(1);
      duplicates += group.length - 1;
    }
    expect(content.stats.duplicates).toBe(duplicates);
    content.dispose();
  }, 180_000);
});

describe("Crawlee 3.14 (no requestManager option): the sieve as a RequestQueue proxy", () => {
  it("BasicCrawler 3.14.1 with requestQueue: sieveRequestQueue(queue) fetches each page once", async () => {
    site.reset();
    const config = new Configuration314({
      storageClient: new MemoryStorage({ persistStorage: false }) as never,
      persistStateIntervalMillis: 3_600_000,
    });
    const queue = await RequestQueue314.open(null, { config });
    const sieved = await sieveRequestQueue(queue, { persist: false });
    expect(sieved).toBeInstanceOf(RequestQueue314);
    const crawler = new BasicCrawler314(
      {
        requestQueue: sieved,
        maxRequestRetries: RETRIES,
        async requestHandler({ request, sendRequest, enqueueLinks }) {
          const response = await sendRequest();
          if (response.statusCode >= 500) throw new Error(`status ${response.statusCode}`);
          const hrefs = [...String(response.body).matchAll(/<a href="([^"]*)"/g)].map(
            (m) => new URL(m[1].replaceAll("&amp;", "&"), request.url).href,
          );
          await enqueueLinks({ urls: hrefs });
        },
      },
      config,
    );
    await crawler.run([`${site.origin}/`, `${site.origin}/?utm_source=again`]);
    expect(sorted(hitsBy(crawleeKey))).toEqual(sorted(expectedHits(true)));
    expect(sieved.sieve.stats.dropped).toBeGreaterThan(20 * 190);
    await sieved.sieve.close();
  }, 180_000);
});
