// crawlsieve/crawler: node-crawler 2.x integration.
/**
 * `crawlsieve/crawler`: node-crawler 2.x with an atomic, optionally persistent seen-set.
 * @module crawlsieve/crawler
 */
export {
  sieveCrawler,
  type CrawlerLike,
  type CrawlerSieve,
  type CrawlerSieveStats,
  type PendingSpec,
  type SieveCrawlerOptions,
} from "./sieve-crawler.js";
export type { CrawlerKey, CrawlerRequestLike } from "./request-key.js";
export type { RecrawlAfter } from "../seen/recrawl-spec.js";
export {
  skipNearDuplicates,
  type CrawlerCallback,
  type CrawlerResponseLike,
  type NearDupCallbackOptions,
  type NearDupCallbackStats,
} from "./near-dup-callback.js";
