// skipNearDuplicates with the real node-crawler 2.x against the local site: each article page
// /p/i and its copy in another template /t/i (one word changed, the site's own model says which)
// are one page, so exactly one of each pair reaches the callback; every other article does.
import Crawler from "crawler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipNearDuplicates } from "../build/js/crawler/index.js";
import { InvalidArgumentError, NearDupFilter } from "../build/js/index.node.js";
import { ready } from "./helpers.js";
import { startSite, type CrawlSite } from "./support/crawl-site.js";

let site: CrawlSite;
beforeAll(async () => {
  await ready();
  site = await startSite({ pages: 30, navLinks: 40, redirects: false, failing: false });
}, 60_000);
afterAll(async () => {
  await site?.close();
});

describe("skipNearDuplicates (node-crawler)", () => {
  it("a page whose near-duplicate was fetched before skips the callback: one of /p/i and /t/i, every other article", async () => {
    const stored: string[] = [];
    const skipped: string[] = [];
    const pathOf = (res: { options?: { url?: unknown } }) => new URL(String(res.options?.url)).pathname;
    const { callback, stats } = skipNearDuplicates(
      (_error, res, done) => {
        stored.push(pathOf(res));
        (done as () => void)();
      },
      { filter: new NearDupFilter({ items: 1_000, fpRate: 1e-4 }), onDuplicate: (res) => skipped.push(pathOf(res)) },
    );
    const crawler = new Crawler({ maxConnections: 4, retries: 0, silence: true, callback });
    const drained = new Promise<void>((resolve) => crawler.once("drain", () => resolve()));
    const urls = [
      ...Array.from({ length: site.pages }, (_, i) => `${site.origin}/p/${i}`),
      ...site.templates.map((i) => `${site.origin}/t/${i}`),
    ];
    crawler.add(urls.map((url) => ({ url })));
    await drained;
    expect(stats.pages).toBe(urls.length);
    expect(stats.duplicates).toBe(site.templates.length);
    expect(skipped.length).toBe(site.templates.length);
    for (const i of site.templates)
      expect([stored.includes(`/p/${i}`), stored.includes(`/t/${i}`)].filter(Boolean).length, `pair ${i}`).toBe(1);
    for (let i = 0; i < site.pages; i++)
      if (!site.templates.includes(i)) expect(stored, `/p/${i}`).toContain(`/p/${i}`);
    expect(stored.length + skipped.length).toBe(urls.length);
  }, 60_000);

  it("a filter that keeps failing passes the page on unchecked (never dropped unseen); bad options are named", async () => {
    const failing = {
      addMany: () => {
        throw new Error("down");
      },
    };
    const errors: unknown[] = [];
    const seen: string[] = [];
    let reached!: () => void;
    const called = new Promise<void>((resolve) => (reached = resolve));
    const { callback, stats } = skipNearDuplicates(
      (_e, res) => {
        seen.push(String(res.options?.url));
        reached();
      },
      { filter: failing, retryForMs: 0, onError: (e) => errors.push(e) },
    );
    const body = `<p>${"word ".repeat(50)}</p>`;
    callback(null, { body, options: { url: "https://a.example/" } }, () => undefined);
    // The page reaches the callback (unchecked), however long the failed call took.
    await called;
    expect({ seen, unchecked: stats.unchecked, errors: errors.length }).toEqual({
      seen: ["https://a.example/"],
      unchecked: 1,
      errors: 1,
    });
    expect(() => skipNearDuplicates(() => undefined, { filter: {} as never })).toThrow(InvalidArgumentError);
    expect(() =>
      skipNearDuplicates(() => undefined, { filter: new NearDupFilter({ items: 10, fpRate: 0.01 }), minWords: -1 }),
    ).toThrow(/minWords/);
  });
});
