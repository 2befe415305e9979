// A page due again under a windowed seen-set must reach the queue again, but a Crawlee queue keeps
// every handled request and answers "already handled" for its uniqueKey forever. So a due request
// the queue calls handled is added once more under a uniqueKey of its own for this recrawl: the
// key, then "#crawlsieve-recrawl-" and the second of the decision. The seen-set key stays the
// page's (the suffix is taken off again when the request is handled), so the window keeps one
// time a page. A later recrawl is decided at a later second than the fetch before it, so its
// uniqueKey is always one the queue has not seen.
import type { Source } from "@crawlee/core";
import { Request as CrawleeRequest } from "./core.js";
import { isRequest, type Keyed } from "./keys.js";

const MARK = "#crawlsieve-recrawl-";
const MARKED = /#crawlsieve-recrawl-\d+$/;

/** The request of `keyed` under the uniqueKey of a recrawl decided at `second` (s since the epoch). */
export function recrawlOf(keyed: Keyed, second: number): Keyed {
  const uniqueKey = `${keyed.uniqueKey.replace(MARKED, "")}${MARK}${second}`;
  return { source: withUniqueKey(keyed.source, uniqueKey), key: keyed.key, uniqueKey };
}

/** The seen-set key of a handled request's key: without the recrawl suffix its uniqueKey may carry. */
export function pageKey(key: string): string {
  return key.replace(MARKED, "");
}

/**
 * A fresh source under another uniqueKey. A Request the queue has met carries its id, which the
 * queue refuses on a new add, so a Request is rebuilt from its JSON form (the one the queue stores).
 */
function withUniqueKey(source: Source, uniqueKey: string): Source {
  if (!isRequest(source)) return { ...(source as object), uniqueKey } as Source;
  const { id: _, ...fields } = JSON.parse(JSON.stringify(source)) as Record<string, unknown>;
  return new CrawleeRequest({ ...fields, uniqueKey } as ConstructorParameters<typeof CrawleeRequest>[0]);
}
