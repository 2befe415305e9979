// What the page helpers do to a crawling context they decide to skip: the handler still runs
// (Crawlee's router middlewares cannot stop it), but what it would store or enqueue from the
// page goes nowhere. The decision is kept per request for the handler to read.

/** The context members a skipped page loses. */
export type PageEffect = "pushData" | "enqueueLinks" | "addRequests";

/** The effects skipped by default: the page's data and its links. */
export const DEFAULT_SKIP: readonly PageEffect[] = ["pushData", "enqueueLinks"];

const EMPTY = { processedRequests: [], unprocessedRequests: [] };

/** Replaces the chosen context members with no-ops. */
export function muteContext(ctx: Record<string, unknown>, effects: readonly PageEffect[]): void {
  for (const effect of effects) {
    if (typeof ctx[effect] !== "function") continue;
    ctx[effect] =
      effect === "pushData"
        ? async () => undefined
        : async () =>
            effect === "enqueueLinks" ? EMPTY : { addedRequests: [], waitForAllRequestsToBeAdded: Promise.resolve([]) };
  }
}
