// Near-duplicate pages (one article in two templates, a print view, a session-id copy) found by
// the SimHash of the page's text: each page's 64-bit fingerprint is looked up in a NearDupIndex
// (every stored fingerprint within maxDistance bits, exactly) and then stored. A page near one
// seen before is marked, and its pushData and enqueueLinks become no-ops (configurable). Use it
// as router middleware: router.use(sieve.middleware). With `shared` (a RedisMinHashIndex, or any
// index of the same shape) the pages are kept there instead, by MinHash, so a fleet of crawlers
// finds the near copies of pages any of them fetched. With `filter` (a NearDupFilter, or a
// RedisNearDupFilter for a fleet) a page only asks "is a page like this one recorded?" at tens of
// bytes a page: no page is kept, so the mark names none.
import { log as crawleeLog } from "./core.js";
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";
import { htmlToText } from "../html/html-to-text.js";
import { init, NearDupIndex, simhash } from "../index.node.js";
import type { NearDupTextFilter } from "../near-dup/near-dup-filter.js";
import { retryOptions, retryTransient, type RetryOptions } from "../seen/transient.js";
import * as check from "../validate.js";
import { DEFAULT_SKIP, muteContext, type PageEffect } from "./page-effects.js";

/** The page a near-duplicate resembles. */
export interface NearDuplicate {
  /** URL of the page seen first (absent when a `filter` answered: it keeps no pages). */
  readonly url?: string;
  /** Hamming distance of the two SimHash fingerprints (the sieve's own index). */
  readonly distance?: number;
  /** Estimated Jaccard similarity of the two texts (a `shared` index). */
  readonly similarity?: number;
}

/** A near-duplicate index shared by a fleet (RedisMinHashIndex): stores pages and answers each one's most similar earlier page, or null. */
export interface SharedNearDupIndex {
  /** Stores pages (ids[i] for texts[i]); for each, the most similar page stored earlier, or null. */
  addMany(
    ids: string[],
    texts: string[],
  ): Promise<readonly ({ readonly id: string; readonly similarity: number } | null)[]>;
}

export type { NearDupTextFilter } from "../near-dup/near-dup-filter.js";

/** Options of ContentSieve.open. */
export interface ContentSieveOptions {
  /** Largest Hamming distance that counts as near (0 to 8, default 3). */
  readonly maxDistance?: number;
  /** The page's text (default: htmlToText of the response body, boilerplate removed). */
  readonly text?: (ctx: PageContext) => string | Promise<string>;
  /** What a near-duplicate page loses (default ["pushData", "enqueueLinks"]). */
  readonly skip?: readonly PageEffect[];
  /** Pages with fewer words are never called near-duplicates: short texts collide (default 20). */
  readonly minWords?: number;
  /**
   * Keep the pages in this index instead of the sieve's own (`await RedisMinHashIndex.open(redis,
   * { name, threshold })` from `crawlsieve/redis`): a page is stored under its URL, and a page near
   * one any process stored is a near-duplicate (maxDistance does not apply; the index's threshold does).
   */
  readonly shared?: SharedNearDupIndex;
  /**
   * Ask this filter instead of keeping pages (`new NearDupFilter({ items, fpRate })`, or `await
   * RedisNearDupFilter.open(redis, { name, items, fpRate })`): a page is a near-duplicate when the
   * filter has recorded a near-duplicate of its text (its threshold applies, maxDistance does not).
   */
  readonly filter?: NearDupTextFilter;
  /** How long a `shared` index or `filter` call that fails for a while (a Redis stall) is asked again before the page fails (default 300,000 ms). */
  readonly retryForMs?: number;
  /** Hears each such failure before the call is asked again (default: a Crawlee warning). */
  readonly onError?: (error: unknown) => void;
}

/** The parts of a crawling context the sieve reads. */
export interface PageContext {
  readonly request: { readonly url: string; readonly loadedUrl?: string; readonly uniqueKey: string };
  readonly body?: unknown;
}

/** Marks pages whose text is near a page seen before; a router middleware. */
export class ContentSieve {
  /** Pages looked at, and those found near an earlier one (whose effects in `skip` were muted). */
  readonly stats = { pages: 0, duplicates: 0 };
  private readonly index: NearDupIndex;
  private readonly seen: { url: string; uniqueKey: string }[] = [];
  private readonly stored = new Set<string>();
  private readonly marks = new WeakMap<object, NearDuplicate>();
  /** A `filter`'s answer for each page asked (by unique key): a retried page gets its first answer, not its own copy. */
  private readonly answered = new Map<string, boolean>();

  private constructor(
    private readonly opts: Required<Pick<ContentSieveOptions, "skip" | "minWords">> & ContentSieveOptions,
    private readonly retry: RetryOptions,
  ) {
    this.index = new NearDupIndex({ maxDistance: opts.maxDistance ?? 3 });
  }

  /** A sieve with its own index (the WebAssembly module is loaded first). */
  static async open(options: ContentSieveOptions = {}): Promise<ContentSieve> {
    await init();
    const opts = check.options<ContentSieveOptions>("options", options);
    if (opts.text !== undefined && typeof opts.text !== "function")
      throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "text must be a function of the crawling context");
    if (opts.shared !== undefined && typeof opts.shared?.addMany !== "function")
      throw new InvalidArgumentError(
        "shared",
        opts.shared,
        "an index with addMany(ids, texts), such as a RedisMinHashIndex",
      );
    if (opts.filter !== undefined && typeof opts.filter?.addMany !== "function")
      throw new InvalidArgumentError(
        "filter",
        opts.filter,
        "a filter with addMany(texts), such as a NearDupFilter or a RedisNearDupFilter",
      );
    if (opts.filter !== undefined && opts.shared !== undefined)
      throw new InvalidArgumentError("filter", opts.filter, "given without shared (a page is kept in one of them)");
    const skip = opts.skip ?? DEFAULT_SKIP;
    for (const s of skip) check.oneOf<PageEffect>("skip", s, ["pushData", "enqueueLinks", "addRequests"]);
    const retry = retryOptions(opts, (error) =>
      crawleeLog.warning(`crawlsieve: the shared near-duplicate index failed and is asked again: ${String(error)}`),
    );
    return new ContentSieve(
      { ...opts, skip, minWords: check.integerInRange("minWords", opts.minWords ?? 20, 0, 1e9) },
      retry,
    );
  }

  /** Router middleware: checks the page, and mutes it when it is a near-duplicate. */
  readonly middleware = async (ctx: PageContext): Promise<void> => {
    const near = await this.check(ctx);
    if (near !== undefined) muteContext(ctx as unknown as Record<string, unknown>, this.opts.skip);
  };

  /** Checks a page and remembers it; returns the earlier page it is near, if any. */
  async check(ctx: PageContext): Promise<NearDuplicate | undefined> {
    const text = this.opts.text !== undefined ? await this.opts.text(ctx) : defaultText(ctx);
    this.stats.pages += 1;
    if (text.split(/\s+/).filter(Boolean).length < this.opts.minWords) return undefined;
    if (this.opts.shared !== undefined) return this.checkShared(ctx, text);
    if (this.opts.filter !== undefined) return this.checkFiltered(ctx, text);
    // From here to the end nothing awaits: the lookup and the insert are one step for concurrent pages.
    const fp = simhash(text);
    const { uniqueKey } = ctx.request;
    const matches = this.index.query(fp).filter((m) => this.seen[m.id].uniqueKey !== uniqueKey);
    if (matches.length > 0) {
      const best = matches.reduce((a, b) => (b.distance < a.distance ? b : a));
      const mark = { url: this.seen[best.id].url, distance: best.distance };
      this.marks.set(ctx.request, mark);
      this.stats.duplicates += 1;
      return mark;
    }
    // A retried page (its handler failed after this ran) is stored once and never matches itself.
    if (!this.stored.has(uniqueKey)) {
      this.stored.add(uniqueKey);
      this.index.add(this.seen.length, fp);
      this.seen.push({ url: ctx.request.loadedUrl ?? ctx.request.url, uniqueKey });
    }
    return undefined;
  }

  /**
   * Stores the page in the shared index under its URL; the index stores an id once and never
   * reports a page as its own copy, so a retried page is not marked, and a call whose reply was
   * lost in a Redis stall is asked again (a failed page would be fetched again).
   */
  private async checkShared(ctx: PageContext, text: string): Promise<NearDuplicate | undefined> {
    const shared = this.opts.shared!;
    const [match] = await retryTransient(
      () => shared.addMany([ctx.request.loadedUrl ?? ctx.request.url], [text]),
      this.retry,
    );
    if (match === null || match === undefined) return undefined;
    const mark = { url: match.id, similarity: match.similarity };
    this.marks.set(ctx.request, mark);
    this.stats.duplicates += 1;
    return mark;
  }

  /**
   * Asks the filter once per page: a retried page (its handler failed after this ran) is answered
   * as the first time, since the filter recorded its text then. A call that fails for a while (a
   * Redis stall) is asked again; one whose reply was lost after Redis recorded the text then
   * finds it, and the page is marked: the filter cannot tell a page from its own copy.
   */
  private async checkFiltered(ctx: PageContext, text: string): Promise<NearDuplicate | undefined> {
    const { uniqueKey } = ctx.request;
    let near = this.answered.get(uniqueKey);
    if (near === undefined) {
      const [answer] = await retryTransient(async () => this.opts.filter!.addMany([text]), this.retry);
      near = this.answered.get(uniqueKey) ?? answer === 1;
      this.answered.set(uniqueKey, near);
    }
    if (!near) return undefined;
    const mark = {};
    this.marks.set(ctx.request, mark);
    this.stats.duplicates += 1;
    return mark;
  }

  /** The earlier page this request's page was found near (after the middleware ran), or undefined. */
  duplicateOf(ctx: Pick<PageContext, "request">): NearDuplicate | undefined {
    return this.marks.get(ctx.request);
  }

  /** Frees the index. */
  dispose(): void {
    this.index.dispose();
  }
}

/** htmlToText of the body Crawlee's HTTP crawlers put on the context (a string or a Buffer). */
function defaultText(ctx: PageContext): string {
  const body = ctx.body;
  if (typeof body === "string") return htmlToText(body);
  if (body instanceof Uint8Array) return htmlToText(new TextDecoder().decode(body));
  throw new CrawlsieveError(
    "ERR_NO_BODY",
    `the crawling context of ${ctx.request.url} has no body: pass options.text (e.g. for a browser crawler, (ctx) => ctx.page.content())`,
  );
}
