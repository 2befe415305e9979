// The Crawlee entry (`crawlsieve/crawlee`): a request manager that filters every request a
// Crawlee 3.x crawler adds through a SeenSet, and the helpers around it. Crawlee (or
// @crawlee/core) is an optional peer dependency; only this entry loads it.
export { crawleeUniqueKey, type CrawleeKeyOptions } from "./unique-key.js";
