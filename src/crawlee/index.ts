// The Crawlee entry (`crawlsieve/crawlee`): a request manager that filters every request a
// Crawlee 3.x crawler adds through a SeenSet, and the helpers around it. Crawlee (or
// @crawlee/core) is an optional peer dependency; only this entry loads it.
/**
 * `crawlsieve/crawlee`: a Crawlee request manager that filters every added request through a seen-set, and its helpers.
 * @module crawlsieve/crawlee
 */
export { crawleeUniqueKey, type CrawleeKeyOptions } from "./unique-key.js";
export {
  SieveRequestManager,
  type SieveRequestManagerOptions,
  type SieveStats,
  type CommitMode,
} from "./request-manager.js";
export { type SieveKey, type ScrapyKeyOptions } from "./keys.js";
export { ResumeConflictError, type ResumePolicy } from "./resume.js";
export { sieveRequestQueue, type SievedQueue } from "./request-queue-proxy.js";
export {
  ContentSieve,
  type ContentSieveOptions,
  type NearDuplicate,
  type NearDupTextFilter,
  type PageContext,
  type SharedNearDupIndex,
} from "./content-sieve.js";
export { RedirectSieve, type RedirectSieveOptions, type RedirectContext } from "./redirect-sieve.js";
export type { PageEffect } from "./page-effects.js";
export type { RecrawlAfter } from "../seen/recrawl-spec.js";
