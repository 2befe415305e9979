// Failures of a seen-set that pass (Redis unreachable or silent past its deadline, a full disk or
// storage quota), and how an integration waits them out: the same call asked again with backoff
// until a deadline. Anything else (a bad argument, a closed set) fails at once.
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";

const TRANSIENT = new Set(["ERR_REDIS_UNAVAILABLE", "ERR_STORE_FULL", "ERR_QUOTA"]);

/** True for a failure that may pass if the call is asked again later. */
export function isTransient(error: unknown): boolean {
  return error instanceof CrawlsieveError && TRANSIENT.has(error.code);
}

/** How retryTransient waits. */
export interface RetryOptions {
  /** How long after the first failure the call is still asked again. */
  readonly retryForMs: number;
  /** Hears each transient failure before the call is asked again. */
  readonly onError: (error: unknown) => void;
}

/** RetryOptions from an integration's options, checked: `retryForMs` (default 300,000) and `onError` (default `warn`). */
export function retryOptions(
  given: { readonly retryForMs?: number; readonly onError?: (error: unknown) => void },
  warn: (error: unknown) => void,
): RetryOptions {
  const retryForMs = check.integerInRange("retryForMs", given.retryForMs ?? 300_000, 0, Number.MAX_SAFE_INTEGER);
  if (given.onError !== undefined && typeof given.onError !== "function")
    throw new InvalidArgumentError("onError", given.onError, "a function of the error");
  return { retryForMs, onError: given.onError ?? warn };
}

/**
 * Runs `call` until it succeeds; a transient failure is reported and the call asked again, 100 ms
 * later doubling to 5 s (node-crawler's sieve keeps the same pace), until `retryForMs` have passed.
 */
export async function retryTransient<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  let since: number | undefined;
  for (let wait = 100; ; wait = Math.min(5_000, wait * 2)) {
    try {
      return await call();
    } catch (error) {
      since ??= Date.now();
      if (!isTransient(error) || Date.now() - since >= options.retryForMs) throw error;
      options.onError(error);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
