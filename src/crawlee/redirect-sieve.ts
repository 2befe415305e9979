// Redirects counted once: the crawler is told not to follow them (a pre-navigation hook), and
// each redirect response becomes a request for its target, added through the crawler and so
// through the sieve like any link. A target reached by ten redirects and three links is fetched
// once; the redirecting page itself stores and enqueues nothing. This is how Scrapy treats
// redirects (a new request that meets the dupefilter); following them inside the HTTP client,
// Crawlee's default, fetches the target again for every path that leads to it. The 3xx response
// still meets Crawlee's content-type check before any hook: a redirect sent without a
// Content-Type fails its request.
import { DEFAULT_SKIP, muteContext, type PageEffect } from "./page-effects.js";
import * as check from "../validate.js";

/** Options of redirectSieve. */
export interface RedirectSieveOptions {
  /** What a redirecting page loses (default ["pushData", "enqueueLinks"]). */
  readonly skip?: readonly PageEffect[];
}

/** The parts of a crawling context the helper reads. */
export interface RedirectContext {
  readonly request: {
    readonly url: string;
    readonly loadedUrl?: string;
    readonly label?: string;
    readonly userData?: Record<string, unknown>;
  };
  readonly response?: {
    readonly statusCode?: number;
    readonly headers?: Record<string, string | string[] | undefined>;
  };
  /** Crawlee's context.addRequests: the redirect's target goes back through the queue. */
  addRequests(requests: { url: string; label?: string; userData?: Record<string, unknown> }[]): Promise<unknown>;
}

/** Turns redirects into requests that meet the sieve; add both the hook and the middleware. */
export class RedirectSieve {
  /** Redirect responses turned into requests. */
  readonly stats = { redirects: 0 };
  private readonly marks = new WeakMap<object, string>();
  private readonly skip: readonly PageEffect[];

  constructor(options: RedirectSieveOptions = {}) {
    const opts = check.options<RedirectSieveOptions>("options", options);
    this.skip = opts.skip ?? DEFAULT_SKIP;
    for (const s of this.skip) check.oneOf<PageEffect>("skip", s, ["pushData", "enqueueLinks", "addRequests"]);
  }

  /** For preNavigationHooks: the HTTP client returns a redirect instead of following it. */
  readonly preNavigationHook = (_ctx: unknown, gotOptions: { followRedirect?: unknown }): void => {
    gotOptions.followRedirect = false;
  };

  /** Router middleware: a 3xx response with a Location becomes a request for its target. */
  readonly middleware = async (ctx: RedirectContext): Promise<void> => {
    const status = ctx.response?.statusCode ?? 0;
    const location = ctx.response?.headers?.location;
    const to = Array.isArray(location) ? location[0] : location;
    if (status < 300 || status > 399 || typeof to !== "string" || to === "") return;
    const target = new URL(to, ctx.request.loadedUrl ?? ctx.request.url).href;
    this.marks.set(ctx.request, target);
    this.stats.redirects += 1;
    await ctx.addRequests([{ url: target, label: ctx.request.label, userData: { ...ctx.request.userData } }]);
    muteContext(ctx as unknown as Record<string, unknown>, this.skip);
  };

  /** The target this request's response redirected to (after the middleware ran), or undefined. */
  redirectOf(ctx: Pick<RedirectContext, "request">): string | undefined {
    return this.marks.get(ctx.request);
  }
}
