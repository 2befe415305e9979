// recrawlAfter in SieveRequestManager (the real crawlee 3.18.1) and sieveCrawler (the real
// node-crawler 2.x) against the local site, with an injected clock: at every step of a replayed
// fortnight each page is fetched exactly when a hand-written model says it is due (the time of its
// last fetch plus its TTL: 1 day under the /q/ prefix, 7 days elsewhere), once, and never
// otherwise; across restarts of the sieve and of the storage, with a kept and a purged queue.
// Which spellings are one page comes from Crawlee's own Request class, not from the sieve.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStorage } from "@crawlee/memory-storage";
import Crawler from "crawler";
import { CheerioCrawler, Configuration, log, Request, RequestQueue } from "crawlee";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SieveRequestManager, type SieveRequestManagerOptions } from "../build/js/crawlee/index.js";
import { sieveCrawler } from "../build/js/crawler/index.js";
import { InvalidArgumentError, init, openSeenSet } from "../build/js/index.node.js";
import { startSite, type CrawlSite } from "./support/crawl-site.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

log.setLevel(log.LEVELS.OFF);
const DAY = 86_400_000;
const T0 = Date.parse("2026-01-05T00:00:00Z");
let site: CrawlSite;
let redis: RedisServer;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-recrawl-"));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  await init();
  [site, redis] = await Promise.all([
    startSite({ pages: 10, navLinks: 80, redirects: false, failing: false }),
    startRedis(),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([site?.close(), redis?.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The replayed days: each step's time, after T0. */
const STEPS = [0, DAY - 1000, DAY, 2 * DAY - 1000, 7 * DAY - 1000, 7 * DAY, 8 * DAY, 14 * DAY];

/** The model: each page's last fetch (ms), and its TTL by hand: 1 day under /q/, else 7 days. */
class Schedule {
  readonly last = new Map<string, number>();
  constructor(private readonly qPrefix: string) {}
  ttl(page: string): number {
    return page.startsWith(this.qPrefix) ? DAY : 7 * DAY;
  }
  /** The pages due at `t`, among `pages`. */
  due(pages: Iterable<string>, t: number): Set<string> {
    const out = new Set<string>();
    for (const p of pages) {
      const at = this.last.get(p);
      if (at === undefined || t >= at + this.ttl(p)) out.add(p);
    }
    return out;
  }
  fetched(pages: Iterable<string>, t: number): void {
    for (const p of pages) this.last.set(p, t);
  }
}

const RULES = (origin: string) => ({ default: "7d", [`${origin}/q/`]: "1d" }) as const;

describe("SieveRequestManager recrawlAfter", () => {
  /** Crawlee's key of a URL (the reference: Crawlee's own Request). */
  const crawleeKey = (url: string) => new Request({ url }).uniqueKey;
  /** Every page of the site by Crawlee's key, and a URL to fetch it by (the sitemap a recrawl starts from). */
  const sitemap = () => {
    const out = new Map<string, string>();
    for (const slot of site.slots()) {
      const url = new URL(slot, `${site.origin}/`).href;
      if (!out.has(crawleeKey(url))) out.set(crawleeKey(url), url);
    }
    return out;
  };
  /** Fetches this run, by Crawlee's key (every count must be 1). */
  const fetchedByKey = () => {
    const out = new Map<string, number>();
    for (const [entry, n] of site.hits) {
      const k = crawleeKey(`${site.origin}${entry.split(" ")[1]}`);
      out.set(k, (out.get(k) ?? 0) + n);
    }
    return out;
  };

  /**
   * Replays STEPS: the first crawl follows links from "/", every later one starts from the whole
   * sitemap (what a recrawl scheduler feeds) and follows links too. `storage` gives each run's
   * storage client: one kept across runs (the queue keeps its handled requests), or a fresh one.
   */
  async function replay(
    sieve: (now: () => number) => SieveRequestManagerOptions,
    configOf: () => Configuration,
  ): Promise<{ recrawled: number }> {
    const pages = sitemap();
    const model = new Schedule(`${site.origin}/q/`);
    let recrawled = 0;
    const sizes: number[] = [];
    for (const step of STEPS) {
      const t = T0 + step;
      const due = model.due(pages.keys(), t);
      site.reset();
      const config = configOf();
      const manager = await SieveRequestManager.open(await RequestQueue.open(null, { config }), {
        config,
        ...sieve(() => t),
      });
      const crawler = new CheerioCrawler(
        {
          requestManager: manager,
          maxConcurrency: 4,
          async requestHandler(ctx) {
            await ctx.enqueueLinks();
          },
        },
        config,
      );
      await crawler.run(step === 0 ? [`${site.origin}/`] : [...pages.values()]);
      recrawled += manager.stats.recrawled;
      await manager.close();
      const fetched = fetchedByKey();
      const twice = [...fetched].filter(([, n]) => n !== 1);
      expect(twice, `day ${step / DAY}: fetched more than once`).toEqual([]);
      expect(new Set(fetched.keys()), `day ${step / DAY}: fetched against due`).toEqual(due);
      sizes.push(due.size);
      model.fetched(due, t);
    }
    // The replay has steps with nothing due and steps with some of the pages due.
    expect(sizes).toContain(0);
    expect(sizes.some((n) => n > 0 && n < pages.size)).toBe(true);
    return { recrawled };
  }

  /** A configuration over `storage`, the queue kept at start. */
  const configOver = (storage: MemoryStorage) =>
    new Configuration({ storageClient: storage, purgeOnStart: false, persistStateIntervalMillis: 3_600_000 });

  it("one queue object kept across runs, the in-memory window saved in its key-value store: due pages are added again under a recrawl uniqueKey", async () => {
    // The same Configuration, so the same RequestQueue object: its cache calls a handled request
    // unhandled (Crawlee caches markRequestHandled's "was it handled before" answer).
    const config = configOver(new MemoryStorage({ persistStorage: false }));
    const { recrawled } = await replay(
      (now) => ({ recrawlAfter: RULES(site.origin), now }),
      () => config,
    );
    // Every fetch after the first day went through the queue's "already handled" answer.
    expect(recrawled).toBeGreaterThan(0);
  }, 180_000);

  it("a purged queue each run (fresh storage), the window on disk: the store outlives the queue under resume auto", async () => {
    const path = tempDir();
    const { recrawled } = await replay(
      (now) => ({ seen: { backend: "disk", path }, recrawlAfter: RULES(site.origin), now }),
      () => configOver(new MemoryStorage({ persistStorage: false })),
    );
    expect(recrawled).toBe(0);
  }, 180_000);

  it("on-check (a fleet member) over the exact Redis window, the queue kept", async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const kept = new MemoryStorage({ persistStorage: false });
      const { recrawled } = await replay(
        (now) => ({
          seen: { backend: "redis", client, name: "recrawl" },
          commit: "on-check",
          resume: "keep",
          recrawlAfter: RULES(site.origin),
          now,
        }),
        () => configOver(kept),
      );
      expect(recrawled).toBeGreaterThan(0);
    } finally {
      await client.quit();
    }
  }, 180_000);

  it("a page still pending in a kept queue (its sieve closed before it was handled) is not added again; a handled one is, once due", async () => {
    const config = configOver(new MemoryStorage({ persistStorage: false }));
    const queue = await RequestQueue.open("pending", { config });
    const [a, b] = ["https://d.example/a", "https://d.example/b"];
    const open = (t: number) => SieveRequestManager.open(queue, { config, recrawlAfter: "1d", now: () => t });
    const first = await open(T0);
    await first.addRequestsBatched([a, b], { waitForAllRequestsToBeAdded: true });
    await first.markRequestHandled((await first.fetchNextRequest())!);
    await first.close();
    const present = async (t: number) => {
      const sieve = await open(t);
      const { addedRequests } = await sieve.addRequestsBatched([a, b], { waitForAllRequestsToBeAdded: true });
      const out = {
        present: addedRequests.map((r) => [r.uniqueKey, r.wasAlreadyPresent]).sort(),
        recrawled: sieve.stats.recrawled,
      };
      await sieve.close();
      return out;
    };
    const recrawlKey = `${a}#crawlsieve-recrawl-${(T0 + DAY) / 1000}`;
    expect(await present(T0 + 1000)).toEqual({
      present: [
        [a, true],
        [b, true],
      ],
      recrawled: 0,
    });
    expect(queue.getTotalCount()).toBe(2);
    expect(await present(T0 + DAY)).toEqual({
      present: [
        [recrawlKey, false],
        [b, true],
      ],
      recrawled: 1,
    });
    expect(queue.getTotalCount()).toBe(3);
    const next = await queue.fetchNextRequest();
    expect([next?.url, next?.uniqueKey]).toEqual([b, b]);
    const again = await queue.fetchNextRequest();
    expect([again?.url, again?.uniqueKey]).toEqual([a, recrawlKey]);
  });

  it("refuses what it cannot honour, naming the value", async () => {
    const open = (options: SieveRequestManagerOptions) => SieveRequestManager.open(null, options);
    const cases: [SieveRequestManagerOptions, RegExp][] = [
      [{ recrawlAfter: "7x" as never }, /recrawlAfter.*7x/],
      [{ recrawlAfter: 1500 }, /recrawlAfter.*whole number of seconds.*1500/],
      [{ recrawlAfter: { "a.example": "1d" } as never }, /recrawlAfter\.default/],
      [{ recrawlAfter: { default: "1d", "not a host": "1h" } }, /not a host/],
      [{ recrawlAfter: { default: "1d", "a.example": "1h" }, key: "scrapy" }, /fingerprints/],
      [{ recrawlAfter: "1d", seen: { backend: "window", window: "2d" } }, /already has a window/],
      [{ recrawlAfter: "1d", seen: { backend: "memory", exact: false } }, /seen\.exact/],
      [{ now: () => 0 }, /now.*only with recrawlAfter/],
    ];
    for (const [options, message] of cases) {
      const error = await open(options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, String(message)).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(message);
    }
    const ready = await openSeenSet({ backend: "memory" });
    await expect(open({ recrawlAfter: "1d", seen: ready })).rejects.toThrow(/a spec/);
    await ready.close();
  });
});

/** A node-crawler callback that only releases the slot. */
const release = (_error: unknown, _response: unknown, done?: unknown) => (done as () => void)();

describe("sieveCrawler recrawlAfter", () => {
  /** The pages scheduled every run: the article pages and the query pages, each by one URL. */
  const urls = () => [
    ...Array.from({ length: site.pages }, (_, i) => `${site.origin}/p/${i}`),
    ...site.queryPages.map((i) => `${site.origin}/q/${i}?a=1&b=2`),
  ];
  const entryOf = (url: string) => {
    const u = new URL(url);
    return `GET ${u.pathname}${u.search}`;
  };

  it.each(["rules", "one TTL"] as const)(
    "a disk window, reopened every run: each URL is scheduled exactly when due (%s)",
    async (kind) => {
      const path = tempDir();
      const model = new Schedule(kind === "rules" ? `${site.origin}/q/` : "none:");
      for (const step of STEPS) {
        const t = T0 + step;
        const due = model.due(urls(), t);
        site.reset();
        const crawler = new Crawler({ maxConnections: 4, retries: 0, silence: true, callback: release });
        const sieve = await sieveCrawler(crawler, {
          seen: { backend: "disk", path },
          recrawlAfter: kind === "rules" ? RULES(site.origin) : "7d",
          now: () => t,
        });
        crawler.add(urls().map((url) => ({ url })));
        // A second sighting in the same run is never due again.
        crawler.add(
          urls()
            .slice(0, 3)
            .map((url) => ({ url })),
        );
        await sieve.idle();
        await sieve.close();
        const fetched = new Set([...site.hits.keys()]);
        expect([...site.hits.values()].every((n) => n === 1)).toBe(true);
        expect(fetched, `day ${step / DAY}`).toEqual(new Set([...due].map(entryOf)));
        model.fetched(due, t);
      }
    },
    120_000,
  );
});
