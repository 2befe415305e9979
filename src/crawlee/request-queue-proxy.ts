// The sieve in the shape of the queue it wraps: a Proxy that is the RequestQueue for every
// purpose (instanceof, id, name, getInfo, getRequest, ...) except that its add paths and
// isFinished go through the sieve, markRequestHandled also commits the key, and drop() also
// clears the seen-set. It is the way in for crawlers that take a `requestQueue` but no
// `requestManager` (Crawlee 3.0 to 3.14), and for code that expects a full RequestQueue.
import type { IRequestManager } from "@crawlee/core";
import { SieveRequestManager, type SieveRequestManagerOptions } from "./request-manager.js";

/** A queue seen through the sieve; `sieve` is the manager behind it. */
export type SievedQueue<Q> = Q & { readonly sieve: SieveRequestManager };

const INTERCEPTED = [
  "addRequest",
  "addRequests",
  "addRequestsBatched",
  "markRequestHandled",
  "isFinished",
  "drop",
] as const;

/** Wraps a RequestQueue (any 3.x) so that every request added to it is filtered by a SeenSet. */
export async function sieveRequestQueue<Q extends object>(
  queue: Q,
  options: SieveRequestManagerOptions = {},
): Promise<SievedQueue<Q>> {
  const sieve = await SieveRequestManager.open(queue as unknown as IRequestManager, options);
  const own: Record<string | symbol, unknown> = { sieve };
  for (const name of INTERCEPTED) own[name] = (sieve[name] as (...args: unknown[]) => unknown).bind(sieve);
  return new Proxy(queue, {
    get(target, prop) {
      if (Object.hasOwn(own, prop)) return own[prop];
      const value = Reflect.get(target, prop, target);
      // The queue's own methods run on the queue itself (its private fields are not the proxy's).
      return typeof value === "function" ? value.bind(target) : value;
    },
    set(target, prop, value) {
      return Reflect.set(target, prop, value, target);
    },
    has(target, prop) {
      return Object.hasOwn(own, prop) || Reflect.has(target, prop);
    },
  }) as SievedQueue<Q>;
}
