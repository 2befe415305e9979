// A storage client around Crawlee's MemoryStorage that counts what reaches the request queue's
// storage (every addRequest and every item of every batchAddRequests, by uniqueKey) and can make
// those calls fail: throw on chosen batch calls, or leave chosen requests unprocessed.
import type { MemoryStorage } from "@crawlee/memory-storage";

/** What reached the queue storage. */
export interface SpyCounts {
  addRequestCalls: number;
  batchCalls: number;
  /** uniqueKey of every request sent, in order (retries included). */
  sent: string[];
  /** uniqueKey of every request the storage took (not thrown, not left unprocessed). */
  accepted: string[];
}

/** Faults to inject. */
export interface SpyFaults {
  /** Throw on the n-th batchAddRequests call (1-based) when true. */
  readonly throwOnBatch?: (call: number) => boolean;
  /** Leave a request of the n-th call unprocessed when true. */
  readonly unprocessed?: (uniqueKey: string, call: number) => boolean;
}

type Client = {
  addRequest: (r: { uniqueKey: string }, o?: unknown) => Promise<unknown>;
  batchAddRequests: (
    r: { uniqueKey: string }[],
    o?: unknown,
  ) => Promise<{ processedRequests: unknown[]; unprocessedRequests: unknown[] }>;
};

/** The spying storage client and its counts. */
export function spyStorage(
  inner: MemoryStorage,
  faults: SpyFaults = {},
): { storage: MemoryStorage; counts: SpyCounts } {
  const counts: SpyCounts = { addRequestCalls: 0, batchCalls: 0, sent: [], accepted: [] };
  const wrapQueue = (client: Client) =>
    new Proxy(client, {
      get(target, prop) {
        if (prop === "addRequest") {
          return async (request: { uniqueKey: string }, options?: unknown) => {
            counts.addRequestCalls += 1;
            counts.sent.push(request.uniqueKey);
            const result = await target.addRequest(request, options);
            counts.accepted.push(request.uniqueKey);
            return result;
          };
        }
        if (prop === "batchAddRequests") {
          return async (requests: { uniqueKey: string }[], options?: unknown) => {
            const call = ++counts.batchCalls;
            counts.sent.push(...requests.map((r) => r.uniqueKey));
            if (faults.throwOnBatch?.(call)) throw new Error(`injected failure of batchAddRequests call ${call}`);
            const left = requests.filter((r) => faults.unprocessed?.(r.uniqueKey, call));
            const taken = requests.filter((r) => !left.includes(r));
            const result =
              taken.length > 0
                ? await target.batchAddRequests(taken, options)
                : { processedRequests: [], unprocessedRequests: [] };
            counts.accepted.push(...taken.map((r) => r.uniqueKey));
            return {
              ...result,
              unprocessedRequests: [
                ...result.unprocessedRequests,
                ...left.map((r) => ({ uniqueKey: r.uniqueKey, url: (r as { url?: string }).url, method: "GET" })),
              ],
            };
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const storage = new Proxy(inner, {
    get(target, prop) {
      if (prop === "requestQueue")
        return (...args: unknown[]) =>
          wrapQueue((target.requestQueue as unknown as (...a: unknown[]) => Client)(...args));
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage, counts };
}
