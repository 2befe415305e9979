// SieveRequestManager: a Crawlee request manager (the `requestManager` crawler option, 3.15+)
// that wraps a queue and filters every request added to it through a SeenSet: crawler.run(urls),
// crawler.addRequests, context.addRequests, context.enqueueLinks, and the request list's moves
// when a RequestManagerTandem is built over the sieve. Everything else goes to the queue as it is.
//
// The rules it keeps:
// - Chunks of `batchSize` requests: at most one hasMany on the seen-set per chunk (keys pending
//   in this process are answered locally), and one addMany per group of handled requests.
// - "after-enqueue" (default): a key is taken as seen only once the queue accepted its request
//   (so a failed or refused add is never lost), held in a set of this process while the request
//   is pending, and committed to the seen-set when the request is marked handled (pending-keys.ts
//   says why). A concurrent add of the same key waits for the chunk that holds it in flight.
// - "on-check" (a fleet, each process with its own queue over one shared seen-set): addMany
//   claims the keys first, so exactly one process enqueues each; keys the queue then refused are
//   given back with removeMany (exact backends; a Bloom backend cannot, and counts them lost).
// - A seen-set call that fails for a while (Redis silent past its deadline, a full disk) is asked
//   again with backoff for retryForMs, so a stall fails no handler (whose retry would fetch its
//   page again). A claim whose reply was lost may have been carried out: its keys are taken as
//   this process's (at least once: a page may be fetched twice in the fleet, never by nobody).
// - A dropped duplicate is reported as { wasAlreadyPresent: true }, so Crawlee's
//   maxRequestsPerCrawl / maxNewRequests budgets are spent only on new requests.
import { Configuration as CrawleeConfiguration, getRequestId, log as crawleeLog, RequestQueue } from "./core.js";
import type {
  AddRequestsBatchedOptions,
  AddRequestsBatchedResult,
  Configuration,
  Dictionary,
  IRequestManager,
  Request,
  RequestQueueOperationInfo,
  RequestQueueOperationOptions,
  RequestsLike,
  Source,
} from "@crawlee/core";
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";
import { init, isSeenSet, openSeenSet, type SeenSet, type SeenSpec } from "../index.node.js";
import { type RecrawlAfter, recrawlSeen } from "../seen/recrawl-spec.js";
import { retryOptions, retryTransient, type RetryOptions } from "../seen/transient.js";
import * as check from "../validate.js";
import { chunkReader, isIterable } from "./chunks.js";
import { keyer, type Keyed, type Keyer, type ScrapyKeyOptions, type SieveKey } from "./keys.js";
import { PendingKeys } from "./pending-keys.js";
import { recordName, SeenPersistence } from "./persist.js";
import { pageKey, recrawlOf } from "./recrawl.js";
import { applyResume, type ResumePolicy } from "./resume.js";
import { acceptRequestManagerOption } from "./request-manager-option.js";

/** One entry of addedRequests / processedRequests. */
type ProcessedRequest = AddRequestsBatchedResult["addedRequests"][number];

/** Forwards sources to the queue; `spent`: new requests already added from this chunk, taken off the budget. */
type Send = (
  sources: Source[],
  spent?: number,
) => Promise<{ added: readonly ProcessedRequest[]; overLimit: readonly Source[] }>;

/** When keys are committed to the seen-set. */
export type CommitMode = "after-enqueue" | "on-check";

/** Options of SieveRequestManager.open. */
export interface SieveRequestManagerOptions {
  /** The seen-set, or a spec for openSeenSet (default { backend: "memory" }: exact, in this process). */
  readonly seen?: SeenSet | SeenSpec;
  /** What requests are deduplicated by (default "crawlee": the request's uniqueKey). */
  readonly key?: SieveKey;
  /** Options of key: "scrapy". */
  readonly scrapy?: ScrapyKeyOptions;
  /** "after-enqueue" (default) or "on-check" (a fleet sharing one seen-set, each with its own queue). */
  readonly commit?: CommitMode;
  /**
   * Fetch a page again once this long has passed since it was handled: one TTL ("7d"), or TTLs by
   * host or URL prefix with a default ({ default: "30d", "news.example": "1h" }; rules need URL
   * keys, so not with key "scrapy"). `seen` must be a spec: it becomes the exact windowed set of its
   * backend (memory, disk, redis), which outlives an empty queue under resume "auto".
   */
  readonly recrawlAfter?: RecrawlAfter;
  /** With recrawlAfter: the clock in ms since the epoch (default Date.now; a Redis window: the server's TIME). */
  readonly now?: () => number;
  /** What to do with a seen-set that outlives an empty queue: "auto" (default), "keep" or "clear". */
  readonly resume?: ResumePolicy;
  /**
   * In-memory seen-sets (memory, window): save to Crawlee's key-value store on persist-state
   * events and read back on open (default true); or the record name and store to use.
   */
  readonly persist?: boolean | { readonly record?: string; readonly store?: string };
  /** The Crawlee configuration whose events and storage are used (default: the global one). */
  readonly config?: Configuration;
  /** How long a seen-set call that fails for a while (a Redis stall, a full disk) is asked again before the add fails (default 300,000 ms). */
  readonly retryForMs?: number;
  /** Hears each such failure before the call is asked again (default: a Crawlee warning). */
  readonly onError?: (error: unknown) => void;
}

/** Counts of what the sieve did. */
export interface SieveStats {
  /** Requests looked at. */
  checked: number;
  /** Requests dropped as seen before (or repeated within a chunk). */
  dropped: number;
  /** Requests passed on to the queue. */
  forwarded: number;
  /** Keys the queue accepted. */
  accepted: number;
  /** Keys written to the seen-set: of handled requests (after-enqueue), or claimed and kept (on-check). */
  committed: number;
  /** on-check only: keys claimed, then refused by the queue, that a Bloom backend could not give back. */
  lost: number;
  /** on-check only: keys enqueued although the seen-set held them, because a claim of this process whose reply was lost may have put them there. */
  uncertain: number;
  /** Windowed seen-sets: pages due again that the queue had handled, added again under a recrawl uniqueKey. */
  recrawled: number;
}

/**
 * A dropped duplicate as Crawlee reports a request already in the queue. Its id (Crawlee's local
 * id of the key, a SHA-256 prefix) is computed when read: most are never read, and a crawl drops
 * hundreds of thousands.
 */
class Dropped implements RequestQueueOperationInfo {
  readonly wasAlreadyPresent = true;
  readonly wasAlreadyHandled = false;
  constructor(
    readonly uniqueKey: string,
    readonly forefront: boolean,
  ) {}

  get requestId(): string {
    return getRequestId(this.uniqueKey);
  }

  toJSON() {
    return {
      wasAlreadyPresent: true,
      wasAlreadyHandled: false,
      uniqueKey: this.uniqueKey,
      forefront: this.forefront,
      requestId: this.requestId,
    };
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A Crawlee request manager that drops requests a SeenSet has seen before. */
export class SieveRequestManager implements IRequestManager {
  private readonly inflight = new Map<string, Promise<void>>();
  /** on-check: keys a claim of this process may have taken without learning it (its reply was lost). */
  private readonly unsure = new Set<string>();
  private background = 0;
  private closed = false;

  private constructor(
    /** The wrapped queue (or any request manager). */
    readonly queue: IRequestManager,
    /** The seen-set requests are checked against. */
    readonly seen: SeenSet,
    private readonly keyOf: Keyer,
    /** When keys are committed. */
    readonly commit: CommitMode,
    private readonly ownsSeen: boolean,
    private readonly persistence: SeenPersistence | undefined,
    private readonly pending: PendingKeys,
    /** What the sieve did so far. */
    readonly stats: SieveStats,
    private readonly retry: RetryOptions,
    /** True when pages come due again (a windowed seen-set): due pages the queue handled are added again. */
    private readonly windowed: boolean,
    private readonly clock: () => number,
  ) {}

  /**
   * Wraps `queue` (a RequestQueue, or any request manager; the default queue when null) in a
   * sieve over `options.seen`; pass the result as the crawler's `requestManager`.
   */
  static async open(
    queue: IRequestManager | null | undefined,
    options: SieveRequestManagerOptions = {},
  ): Promise<SieveRequestManager> {
    await init();
    acceptRequestManagerOption();
    const opts = check.options<SieveRequestManagerOptions>("options", options);
    const commit = check.oneOf<CommitMode>("commit", opts.commit ?? "after-enqueue", ["after-enqueue", "on-check"]);
    const resume = check.oneOf<ResumePolicy>("resume", opts.resume ?? "auto", ["auto", "keep", "clear"]);
    const keyOf = keyer(opts.key, opts.scrapy);
    const retry = retryOptions(opts, (error) =>
      crawleeLog.warning(`crawlsieve: a seen-set call failed and is asked again: ${String(error)}`),
    );
    const config = opts.config;
    const inner = queue ?? (await RequestQueue.open(null, config === undefined ? {} : { config }));
    for (const method of [
      "addRequest",
      "addRequestsBatched",
      "fetchNextRequest",
      "markRequestHandled",
      "isFinished",
    ] as const) {
      if (typeof (inner as unknown as Record<string, unknown>)?.[method] !== "function")
        throw new InvalidArgumentError(
          "queue",
          queue,
          `a Crawlee RequestQueue or request manager (it has no ${method}())`,
        );
    }
    const asked = opts.seen ?? { backend: "memory" };
    if (!isSeenSet(asked) && (asked === null || typeof asked !== "object"))
      throw new InvalidArgumentError("seen", asked, 'a SeenSet or a spec such as { backend: "memory" }');
    const urls = opts.key === undefined || opts.key === "crawlee" || typeof opts.key === "function";
    const { seen: given, windowed } = recrawlSeen(asked, opts.recrawlAfter, opts.now, { urls, key: '"scrapy"' });

    // In-memory sets are saved into (and read back from) Crawlee's key-value store.
    let spec: SeenSet | SeenSpec = given;
    let persistence: SeenPersistence | undefined;
    const persist = opts.persist ?? true;
    const inMemory = isSeenSet(given)
      ? typeof given.serialize === "function"
      : given.backend === "memory" || given.backend === "window";
    if (persist !== false && inMemory) {
      const where = typeof persist === "object" ? persist : {};
      const cfg = config ?? CrawleeConfiguration.getGlobalConfig();
      persistence = await SeenPersistence.open(cfg, where.record ?? recordName(inner), where.store);
      if (!isSeenSet(given) && (given as { bytes?: Uint8Array }).bytes === undefined) {
        const bytes = await persistence.load();
        if (bytes !== undefined) spec = { ...given, bytes } as SeenSpec;
      }
    }
    const seen = await openSeenSet(spec);
    // A windowed set outliving its queue is the recrawl schedule itself: "auto" keeps it.
    const outcome = await applyResume(windowed && resume === "auto" ? "keep" : resume, inner, seen);
    if (outcome === "cleared") {
      // Forgetting what a persistent seen-set held is what a user must not miss (Crawlee's default level hides INFO in many setups).
      const message = `crawlsieve: the request queue is empty, so the ${seen.backend} seen-set was cleared (resume: "${resume}")`;
      if (persistence !== undefined || (seen.backend !== "memory" && seen.backend !== "window"))
        crawleeLog.warning(message);
      else crawleeLog.info(message);
    }
    const stats: SieveStats = {
      checked: 0,
      dropped: 0,
      forwarded: 0,
      accepted: 0,
      committed: 0,
      lost: 0,
      uncertain: 0,
      recrawled: 0,
    };
    const pending = await PendingKeys.open(seen, (n) => (stats.committed += n));
    const manager = new SieveRequestManager(
      inner,
      seen,
      keyOf,
      commit,
      !isSeenSet(given),
      persistence,
      pending,
      stats,
      retry,
      windowed,
      opts.now ?? Date.now,
    );
    // The handled keys waiting for their group commit go in first, so a saved set has them all.
    persistence?.attach(async () => {
      await manager.pending.flush();
      return seen.serialize!();
    });
    return manager;
  }

  // ---- the add paths: filtered ----

  /** Adds one request unless its key was seen; a dropped one is reported as already present. */
  async addRequest(
    requestLike: Source,
    options: RequestQueueOperationOptions = {},
  ): Promise<RequestQueueOperationInfo> {
    this.live();
    const forefront = options.forefront ?? false;
    if (requestLike !== null && typeof requestLike === "object" && "requestsFromUrl" in requestLike)
      return this.queue.addRequest(requestLike, options);
    const { processed } = await this.sieve([requestLike], forefront, Infinity, async ([source]) => ({
      added: [await this.queue.addRequest(source, { forefront })],
      overLimit: [],
    }));
    if (processed.length === 0)
      throw new CrawlsieveError("ERR_NOT_ADDED", `the queue did not accept ${describe(requestLike)}`);
    const info = processed[0] as RequestQueueOperationInfo;
    return info instanceof Dropped ? info : { ...info, forefront };
  }

  /**
   * Adds requests in chunks of `batchSize`, each filtered with one hasMany and committed with one
   * addMany; the first chunk is awaited, the rest are added in the background (all awaited with
   * waitForAllRequestsToBeAdded or maxNewRequests), as Crawlee's own addRequestsBatched does.
   */
  async addRequestsBatched(
    requests: RequestsLike,
    options: AddRequestsBatchedOptions = {},
  ): Promise<AddRequestsBatchedResult> {
    this.live();
    if (!isIterable(requests))
      throw new InvalidArgumentError("requests", requests, "an iterable or async iterable of requests");
    const opts = options as AddRequestsBatchedOptions & { maxNewRequests?: number };
    const forefront = opts.forefront ?? false;
    const batchSize = check.positiveInteger("batchSize", opts.batchSize ?? 1000);
    const pause = opts.waitBetweenBatchesMillis ?? 1000;
    const limited = opts.maxNewRequests !== undefined;
    const budget = {
      left: limited
        ? check.integerInRange("maxNewRequests", opts.maxNewRequests, 0, Number.MAX_SAFE_INTEGER)
        : Infinity,
    };
    const reader = chunkReader(requests as Iterable<Source | string>);
    const overLimit: Source[] = [];
    const send = (sources: Source[], spent = 0) =>
      this.forwardBatch(sources, forefront, pause, limited ? budget.left - spent : undefined);

    const step = async (chunk: (Source | string)[]) => {
      const { processed, overLimit: over, forwarded } = await this.sieve(chunk, forefront, budget.left, send);
      for (const r of processed) if (!r.wasAlreadyPresent) budget.left -= 1;
      overLimit.push(...over);
      return { processed, forwarded };
    };

    const first = limited && budget.left <= 0 ? [] : await reader.next(batchSize);
    const addedRequests = first.length > 0 ? (await step(first)).processed : [];
    const restOf = async (): Promise<ProcessedRequest[]> => {
      const added: ProcessedRequest[] = [];
      for (;;) {
        if (limited && budget.left <= 0) break;
        const chunk = await reader.next(batchSize);
        if (chunk.length === 0) break;
        const { processed, forwarded } = await step(chunk);
        added.push(...processed);
        // The pause spaces out storage writes; a chunk of duplicates wrote nothing.
        if (forwarded > 0 && pause > 0) await sleep(pause);
      }
      if (limited)
        for (const item of await reader.rest()) overLimit.push(typeof item === "string" ? { url: item } : item);
      return added;
    };

    const more = first.length === batchSize || (limited && budget.left <= 0);
    if (!more) return { addedRequests, waitForAllRequestsToBeAdded: Promise.resolve([]), requestsOverLimit: overLimit };
    this.background += 1;
    const rest = restOf().finally(() => {
      this.background -= 1;
    });
    if (opts.waitForAllRequestsToBeAdded || limited) {
      addedRequests.push(...(await rest));
      return { addedRequests, waitForAllRequestsToBeAdded: Promise.resolve([]), requestsOverLimit: overLimit };
    }
    // Like Crawlee's, a background failure rejects this promise; it is also logged, as nobody may await it.
    rest.catch((error: unknown) =>
      crawleeLog.exception(error as Error, "crawlsieve: adding requests in the background failed"),
    );
    return { addedRequests, waitForAllRequestsToBeAdded: rest, requestsOverLimit: overLimit };
  }

  /** RequestQueue.addRequests, for code written against a queue: every request awaited. */
  async addRequests(
    requests: RequestsLike,
    options: RequestQueueOperationOptions = {},
  ): Promise<{ processedRequests: ProcessedRequest[]; unprocessedRequests: never[] }> {
    const { addedRequests } = await this.addRequestsBatched(requests, {
      forefront: options.forefront,
      waitForAllRequestsToBeAdded: true,
      waitBetweenBatchesMillis: 0,
    });
    return { processedRequests: addedRequests, unprocessedRequests: [] };
  }

  /** One chunk: keyed, checked with one hasMany (or claimed with one addMany), forwarded, committed. */
  private async sieve(
    chunk: readonly (Source | string)[],
    forefront: boolean,
    budgetLeft: number,
    send: Send,
  ): Promise<{ processed: ProcessedRequest[]; overLimit: Source[]; forwarded: number }> {
    // Lists to fetch (requestsFromUrl) cannot be keyed before Crawlee fetches them: passed on as they are.
    const lists: Source[] = [];
    const keyed: Keyed[] = [];
    for (const item of chunk) {
      const source = typeof item === "string" ? { url: item } : item;
      if (source !== null && typeof source === "object" && "requestsFromUrl" in source) lists.push(source);
      else keyed.push(this.keyOf(source));
    }
    for (const list of lists) await this.queue.addRequest(list, { forefront });
    this.stats.checked += keyed.length;
    if (keyed.length === 0) return { processed: [], overLimit: [], forwarded: 0 };

    // The distinct keys of the chunk, in first-seen order.
    const firstOf = new Map<string, number>();
    keyed.forEach((k, i) => {
      if (!firstOf.has(k.key)) firstOf.set(k.key, i);
    });
    const keys = [...firstOf.keys()];
    // Wait out other chunks holding any of these keys; the last check and the registration below
    // happen in one synchronous step, so two waiters never both go ahead.
    for (let pending = this.holders(keys); pending.size > 0; pending = this.holders(keys)) await Promise.all(pending);
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    for (const key of keys) this.inflight.set(key, done);
    let claimed: string[] = [];
    try {
      let forward: Uint8Array;
      if (this.commit === "after-enqueue") {
        forward = await retryTransient(() => this.pending.hasMany(keys), this.retry);
        for (let i = 0; i < forward.length; i++) forward[i] ^= 1;
      } else {
        // A fleet member claims only what it may enqueue now: no more than the budget.
        const candidates = await retryTransient(() => this.seen.hasMany(keys), this.retry);
        const wanted = keys
          .filter((k, i) => candidates[i] === 0 || this.unsure.has(k))
          .slice(0, Number.isFinite(budgetLeft) ? Math.max(0, budgetLeft) : undefined);
        const fresh = wanted.length === 0 ? new Uint8Array(0) : await this.claim(wanted);
        claimed = wanted.filter((_, i) => fresh[i] === 1);
        const mine = new Set(claimed);
        forward = Uint8Array.from(keys, (k) => (mine.has(k) ? 1 : 0));
      }
      let sending = keys.flatMap((k, i) => (forward[i] === 1 ? [keyed[firstOf.get(k)!]] : []));
      let { added, overLimit } =
        sending.length > 0 ? await send(sending.map((k) => k.source)) : { added: [], overLimit: [] };
      this.stats.forwarded += sending.length;
      // Keys whose recrawl the queue calls handled too: fetched, their commit lost (after-enqueue commits them now).
      let handledAgain: readonly string[] = [];
      if (this.windowed && added.some((r) => r.wasAlreadyPresent))
        ({ added, overLimit, sending, handledAgain } = await this.recrawl(sending, added, overLimit, send));

      // What the queue holds now (new or already present) is committed; the rest is not.
      const acceptedUniqueKeys = new Set(added.map((r) => r.uniqueKey));
      const accepted = sending.filter((k) => acceptedUniqueKeys.has(k.uniqueKey));
      const acceptedKeys = new Set(accepted.map((k) => k.key));
      this.stats.accepted += acceptedKeys.size;
      if (this.commit === "after-enqueue") {
        await this.pending.accept([...acceptedKeys]);
        for (const key of handledAgain) this.pending.handled(key);
      } else {
        const refused = claimed.filter((k) => !acceptedKeys.has(k));
        await this.giveBack(refused);
        this.stats.committed += claimed.length - refused.length;
        claimed = [];
      }

      // Every occurrence of a key seen before, and repeats of an accepted key, are reported present.
      const processed: ProcessedRequest[] = [...added];
      const forwardedIndex = new Set(sending.map((k) => firstOf.get(k.key)!));
      const slot = new Map(keys.map((k, i) => [k, i]));
      keyed.forEach((k, i) => {
        if (forwardedIndex.has(i)) return;
        const wasForwarded = forward[slot.get(k.key)!] === 1;
        if (wasForwarded && !acceptedKeys.has(k.key)) return;
        processed.push(new Dropped(k.uniqueKey, forefront));
        this.stats.dropped += 1;
      });
      return { processed, overLimit: [...overLimit], forwarded: sending.length };
    } catch (error) {
      // Keys not given back stay claimed for the fleet: this process takes them as its own when met again.
      await this.giveBack(claimed).catch(() => claimed.forEach((k) => this.unsure.add(k)));
      throw error;
    } finally {
      for (const key of keys) if (this.inflight.get(key) === done) this.inflight.delete(key);
      release();
    }
  }

  /**
   * Windowed seen-sets: the due pages of a chunk that the queue answered "already handled" are
   * added again, each under a recrawl uniqueKey (recrawl.ts), within what is left of the budget.
   */
  private async recrawl(
    sending: readonly Keyed[],
    added: readonly ProcessedRequest[],
    overLimit: readonly Source[],
    send: Send,
  ): Promise<{ added: ProcessedRequest[]; overLimit: Source[]; sending: Keyed[]; handledAgain: string[] }> {
    const handled = await this.handledOf(added);
    if (handled.size === 0)
      return { added: [...added], overLimit: [...overLimit], sending: [...sending], handledAgain: [] };
    const second = Math.floor(this.clock() / 1000);
    const again = new Map<string, Keyed>();
    for (const k of sending) if (handled.has(k.uniqueKey)) again.set(k.uniqueKey, recrawlOf(k, second));
    const spent = added.filter((r) => !r.wasAlreadyPresent).length;
    const retried = await send(
      [...again.values()].map((k) => k.source),
      spent,
    );
    const keyOfRecrawl = new Map([...again.values()].map((k) => [k.uniqueKey, k.key]));
    const handledTwice = await this.handledOf(retried.added);
    const handledAgain = [...handledTwice].map((uniqueKey) => keyOfRecrawl.get(uniqueKey)!);
    for (const r of retried.added) if (!r.wasAlreadyPresent) this.stats.recrawled += 1;
    return {
      added: [...added.filter((r) => !handled.has(r.uniqueKey)), ...retried.added],
      overLimit: [...overLimit, ...retried.overLimit],
      sending: sending.map((k) => again.get(k.uniqueKey) ?? k),
      handledAgain,
    };
  }

  /**
   * The uniqueKeys among `infos` whose requests the queue holds as handled. Crawlee's answer to an
   * add says "already handled" only for what its cache knows, and its cache keeps a request as
   * unhandled after markRequestHandled; so a request the queue reports present is read back
   * (getRequest: its handledAt), and only a queue without getRequest is taken at its word.
   */
  private async handledOf(infos: readonly ProcessedRequest[]): Promise<Set<string>> {
    const present = infos.filter((r) => r.wasAlreadyPresent);
    const queue = this.queue as { getRequest?: (id: string) => Promise<{ handledAt?: unknown } | null> };
    const getRequest = queue.getRequest?.bind(queue);
    const handled = await Promise.all(
      present.map(async (r) =>
        getRequest === undefined || typeof r.requestId !== "string"
          ? r.wasAlreadyHandled === true
          : ((await getRequest(r.requestId))?.handledAt ?? null) !== null,
      ),
    );
    return new Set(present.filter((_, i) => handled[i]).map((r) => r.uniqueKey));
  }

  /** Forwards one filtered chunk to the queue as one batch; Crawlee retries what it left unprocessed. */
  private async forwardBatch(sources: Source[], forefront: boolean, pause: number, maxNewRequests: number | undefined) {
    const result = await this.queue.addRequestsBatched(sources, {
      forefront,
      waitForAllRequestsToBeAdded: true,
      batchSize: sources.length,
      waitBetweenBatchesMillis: pause,
      // Crawlee 3.15 rejects options it does not know: passed only when the crawler sets it.
      ...(maxNewRequests === undefined ? {} : { maxNewRequests: Math.max(0, maxNewRequests) }),
    } as AddRequestsBatchedOptions);
    return {
      added: result.addedRequests,
      overLimit: (result as { requestsOverLimit?: Source[] }).requestsOverLimit ?? [],
    };
  }

  /** The chunks now holding any of `keys` in flight (their completion promises). */
  private holders(keys: Iterable<string>): Set<Promise<void>> {
    const pending = new Set<Promise<void>>();
    for (const key of keys) {
      const p = this.inflight.get(key);
      if (p !== undefined) pending.add(p);
    }
    return pending;
  }

  /**
   * on-check: claims keys with one addMany, asked again after a transient failure. A failed attempt
   * may have been carried out, so a key it covered that the seen-set then holds may be this
   * process's own claim: such a key counts as claimed here (and in stats.uncertain).
   */
  private async claim(keys: readonly string[]): Promise<Uint8Array> {
    const fresh = await retryTransient(async () => {
      try {
        return await this.seen.addMany(keys);
      } catch (error) {
        for (const k of keys) this.unsure.add(k);
        throw error;
      }
    }, this.retry);
    keys.forEach((k, i) => {
      if (fresh[i] === 0 && this.unsure.has(k)) {
        fresh[i] = 1;
        this.stats.uncertain += 1;
      }
      this.unsure.delete(k);
    });
    return fresh;
  }

  /** on-check: gives back claimed keys the queue refused (exact backends); counts them lost otherwise. */
  private async giveBack(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    if (this.seen.removeMany !== undefined) {
      const removeMany = this.seen.removeMany.bind(this.seen);
      await retryTransient(() => removeMany(keys), this.retry);
      return;
    }
    this.stats.lost += keys.length;
    crawleeLog.warning(
      `crawlsieve: ${keys.length} keys were claimed in the ${this.seen.backend} Bloom seen-set but refused by the queue; a Bloom filter cannot forget them`,
    );
  }

  // ---- everything else: the queue's own ----

  /** True when the queue is finished and no background chunk is still being added. */
  async isFinished(): Promise<boolean> {
    if (this.background > 0) return false;
    return this.queue.isFinished();
  }

  isEmpty(): Promise<boolean> {
    return this.queue.isEmpty();
  }

  handledCount(): Promise<number> {
    return this.queue.handledCount();
  }

  getTotalCount(): number {
    return this.queue.getTotalCount();
  }

  getPendingCount(): number {
    return this.queue.getPendingCount();
  }

  fetchNextRequest<T extends Dictionary = Dictionary>(): Promise<Request<T> | null> {
    return this.queue.fetchNextRequest<T>();
  }

  /** The wrapped queue's requests, as Crawlee iterates a request manager. */
  [Symbol.asyncIterator](): AsyncGenerator<Request> {
    return this.queue[Symbol.asyncIterator]();
  }

  /** Marks the request handled in the queue, then queues its key for the seen-set (after-enqueue). */
  async markRequestHandled(request: Request): Promise<RequestQueueOperationInfo | void | null> {
    const info = await this.queue.markRequestHandled(request);
    if (this.commit === "after-enqueue") {
      try {
        const key = this.keyOf(request).key;
        this.pending.handled(this.windowed ? pageKey(key) : key);
      } catch (error) {
        crawleeLog.warning(`crawlsieve: no key for the handled request ${request.url}: ${String(error)}`);
      }
    }
    return info;
  }

  reclaimRequest(request: Request, options?: RequestQueueOperationOptions): Promise<RequestQueueOperationInfo | null> {
    return this.queue.reclaimRequest(request, options);
  }

  // BasicCrawler sets these on its queue; they belong to the wrapped one. (The sieve has no
  // `name`, so a second crawler.run() does not drop and replace it as it does the default queue.)
  get internalTimeoutMillis(): number | undefined {
    return (this.queue as { internalTimeoutMillis?: number }).internalTimeoutMillis;
  }

  set internalTimeoutMillis(value: number | undefined) {
    (this.queue as { internalTimeoutMillis?: number }).internalTimeoutMillis = value;
  }

  get requestLockSecs(): number | undefined {
    return (this.queue as { requestLockSecs?: number }).requestLockSecs;
  }

  set requestLockSecs(value: number | undefined) {
    (this.queue as { requestLockSecs?: number }).requestLockSecs = value;
  }

  /** Commits the keys of handled requests now, and saves an in-memory seen-set into the key-value store (both also happen on their own). */
  async persist(): Promise<void> {
    await this.pending.flush();
    await this.persistence?.save();
  }

  /** Drops the wrapped queue and clears the seen-set, together. */
  async drop(): Promise<void> {
    await (this.queue as { drop?: () => Promise<void> }).drop?.();
    await this.pending.clear();
    await this.seen.clear();
  }

  /**
   * Commits the keys of handled requests (asked again for retryForMs while the seen-set fails),
   * saves, stops listening to persist-state events, and closes the seen-set when the sieve opened
   * it from a spec. Throws when the keys could not be committed; the sieve is closed either way.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    for (
      let pending = this.holders(this.inflight.keys());
      pending.size > 0;
      pending = this.holders(this.inflight.keys())
    )
      await Promise.all(pending);
    this.closed = true;
    try {
      await this.pending.close(this.retry);
      await this.persistence?.save();
    } finally {
      await this.persistence?.detach();
      if (this.ownsSeen) await this.seen.close();
    }
  }

  private live(): void {
    if (this.closed) throw new CrawlsieveError("ERR_CLOSED", "the SieveRequestManager was used after close()");
  }
}

function describe(source: unknown): string {
  const url = (source as { url?: unknown })?.url;
  return typeof source === "string" ? source : typeof url === "string" ? url : String(source);
}
