// Near-duplicate pages in node-crawler: a wrapper of the crawler's callback that asks a yes/no
// near-duplicate filter (NearDupFilter, or RedisNearDupFilter for a fleet) about each fetched
// page's text, and does not call the callback for a page whose near-duplicate was recorded
// before, so the page is neither stored nor followed; the slot is released all the same.
// node-crawler calls a request's callback once, after its own retries, so each page is asked once.
import { InvalidArgumentError } from "../errors.js";
import { htmlToText } from "../html/html-to-text.js";
import type { NearDupTextFilter } from "../near-dup/near-dup-filter.js";
import { retryOptions, retryTransient } from "../seen/transient.js";

/** The parts of node-crawler's response the wrapper reads. */
export interface CrawlerResponseLike {
  readonly body?: unknown;
  readonly options?: { readonly url?: unknown; readonly uri?: unknown };
}

/** A node-crawler callback: `done` releases the request's slot. */
export type CrawlerCallback = (error: unknown, response: CrawlerResponseLike, done?: unknown) => void;

/** Options of skipNearDuplicates. */
export interface NearDupCallbackOptions {
  /** The filter asked about each page (its threshold applies): `new NearDupFilter({ items, fpRate })` or a RedisNearDupFilter. */
  readonly filter: NearDupTextFilter;
  /** The page's text (default: htmlToText of the response body, boilerplate removed). */
  readonly text?: (response: CrawlerResponseLike) => string | Promise<string>;
  /** Pages with fewer words are never called near-duplicates: short texts collide (default 20). */
  readonly minWords?: number;
  /** Hears each skipped page (the callback is not called for it). */
  readonly onDuplicate?: (response: CrawlerResponseLike) => void;
  /** How long a filter call that fails for a while (a Redis stall) is asked again before the page is passed on unchecked (default 300,000 ms). */
  readonly retryForMs?: number;
  /** Hears each such failure (default: one line on stderr). */
  readonly onError?: (error: unknown) => void;
}

/** Counts of the wrapper: pages asked about, and those skipped as near-duplicates. */
export interface NearDupCallbackStats {
  pages: number;
  duplicates: number;
  /** Pages passed on unchecked because the filter kept failing past retryForMs. */
  unchecked: number;
}

/** Wraps a node-crawler callback so pages whose near-duplicate was recorded before skip it. */
export function skipNearDuplicates(
  callback: CrawlerCallback,
  options: NearDupCallbackOptions,
): { readonly callback: CrawlerCallback; readonly stats: Readonly<NearDupCallbackStats> } {
  if (typeof callback !== "function") throw new InvalidArgumentError("callback", callback, "a node-crawler callback");
  if (options === null || typeof options !== "object" || typeof options.filter?.addMany !== "function")
    throw new InvalidArgumentError("filter", options?.filter, "a NearDupFilter or a RedisNearDupFilter");
  if (options.text !== undefined && typeof options.text !== "function")
    throw new InvalidArgumentError("text", options.text, "a function of the response");
  const minWords = options.minWords ?? 20;
  if (!Number.isSafeInteger(minWords) || minWords < 0)
    throw new InvalidArgumentError("minWords", minWords, "a whole number, 0 or more");
  const retry = retryOptions(options, (error) =>
    process.stderr.write(`crawlsieve/crawler: the near-duplicate filter failed, asked again: ${String(error)}\n`),
  );
  const stats: NearDupCallbackStats = { pages: 0, duplicates: 0, unchecked: 0 };
  const wrapped: CrawlerCallback = (error, response, done) => {
    if (error !== null && error !== undefined) {
      callback(error, response, done);
      return;
    }
    void (async () => {
      let near = false;
      try {
        const text = options.text !== undefined ? await options.text(response) : bodyText(response);
        stats.pages += 1;
        if (text.split(/\s+/).filter(Boolean).length >= minWords)
          near = (await retryTransient(async () => options.filter.addMany([text]), retry))[0] === 1;
      } catch (failure) {
        // A page is never dropped unseen: past retryForMs (or with no text) it goes on unchecked.
        stats.unchecked += 1;
        retry.onError(failure);
      }
      if (!near) {
        callback(error, response, done);
        return;
      }
      stats.duplicates += 1;
      options.onDuplicate?.(response);
      if (typeof done === "function") done();
    })();
  };
  return { callback: wrapped, stats };
}

/** htmlToText of node-crawler's response body (a string or a Buffer). */
function bodyText(response: CrawlerResponseLike): string {
  const body = response?.body;
  if (typeof body === "string") return htmlToText(body);
  if (body instanceof Uint8Array) return htmlToText(new TextDecoder().decode(body));
  throw new InvalidArgumentError("response.body", typeof body, "a string or a Buffer (or pass options.text)");
}
