// node-crawler 2.x with a crawlsieve seen-set: its `crawler.seen` (seenreq, an unbounded Set of
// MD5 hex strings checked and inserted in two steps, so five synchronous adds of one URL fetch it
// five times) is replaced by one whose check and insert are one atomic addMany over every add
// that arrived since the last one (one round trip, one durable commit, for a page's links). Where the seen-set persists, requests accepted but not finished are
// recorded too, so a crawler killed mid-crawl and run again schedules them again, and a URL whose
// fetch finally failed can be forgotten so a later add retries it.
import { InvalidArgumentError } from "../errors.js";
import { init } from "../index.node.js";
import { asCommander } from "../redis/commander.js";
import { openSeenSet } from "../seen/open-seen-set.node.js";
import type { SeenSet } from "../seen/seen-set.js";
import type { SeenSpec } from "../seen/seen-spec.js";
import { type RecrawlAfter, recrawlSeen } from "../seen/recrawl-spec.js";
import { filePendingLog, redisPendingLog, type PendingLog, type PendingRequest } from "./pending-log.js";
import { keyFunction, type CrawlerKey, type CrawlerRequestLike } from "./request-key.js";

/** The parts of a node-crawler 2.x Crawler the sieve uses. */
export interface CrawlerLike {
  options: { skipDuplicates?: boolean };
  seen: unknown;
  /** node-crawler's add: URLs or request options, one or many. */
  add(options: unknown): void;
}

/** Where unfinished requests are recorded: a file, a Redis hash, or nowhere (false). */
export type PendingSpec = false | { readonly file: string } | { readonly client: unknown; readonly key: string };

/** Options of sieveCrawler. */
export interface SieveCrawlerOptions {
  /** The seen-set or its spec (default `{ backend: "memory" }`). */
  readonly seen?: SeenSet | SeenSpec;
  /** What a request is keyed by (default "request": MD5 over method, canonical URL and body). */
  readonly key?: CrawlerKey;
  /**
   * Schedule a URL again once this long has passed since it was scheduled: one TTL ("7d"), or TTLs
   * by host or URL prefix with a default ({ default: "30d", "news.example": "1h" }; with rules the
   * "request" key is the canonical URL, see keyFunction; not with key "scrapy"). `seen` must be a
   * spec: it becomes the exact windowed set of its backend (memory, disk, redis).
   */
  readonly recrawlAfter?: RecrawlAfter;
  /** With recrawlAfter: the clock in ms since the epoch (default Date.now; a Redis window: the server's TIME). */
  readonly now?: () => number;
  /** Forget a request whose fetch finally failed (after node-crawler's retries), so a later add retries it. Exact seen-sets only. */
  readonly forgetOnFailure?: boolean;
  /**
   * Record of requests accepted but unfinished, scheduled again when the sieve is attached. By
   * default kept beside a persistent seen-set given as a spec (disk: a file in its folder; redis:
   * a hash), none for memory; a ready SeenSet needs it given here.
   */
  readonly pending?: PendingSpec;
  /** This process's name among processes sharing one seen-set (default "main"): each resumes only its own requests. */
  readonly worker?: string;
  /**
   * Hears each failed write to the seen-set or the pending record (a Redis stall, a full disk).
   * The write is retried with backoff; nothing is dropped meanwhile. Default: one line on stderr.
   */
  readonly onError?: (error: unknown) => void;
  /** How long failed writes are retried before the adds waiting on them are rejected (default 300,000 ms). */
  readonly retryForMs?: number;
}

/** Counts of a sieve. */
export interface CrawlerSieveStats {
  /** Requests checked. */
  checked: number;
  /** Requests scheduled (new). */
  scheduled: number;
  /** Requests dropped as seen before. */
  dropped: number;
  /** Requests scheduled again from the pending record when the sieve was attached. */
  resumed: number;
  /** Requests forgotten after a failed fetch. */
  forgotten: number;
  /** Writes to the seen-set or the pending record that failed and were retried. */
  retries: number;
}

/** A sieve attached to a crawler. */
export interface CrawlerSieve {
  readonly seen: SeenSet;
  readonly stats: Readonly<CrawlerSieveStats>;
  /**
   * Resolves once nothing is in flight: no add waiting for the seen-set, no request scheduled
   * through the sieve and not yet finished. node-crawler's "drain" can come early (a page's links
   * are still being checked when its release finds the queues empty) or never (a process whose
   * every add was a duplicate schedules nothing); this cannot.
   */
  idle(): Promise<void>;
  /** Waits for the sieve's pending writes, then closes the seen-set (and the pending record). */
  close(): Promise<void>;
}

interface Waiting {
  readonly key: string;
  readonly request: Record<string, unknown>;
  /**
   * A flush that failed had sent this key's add while the key was absent (or not known to be
   * present), so that add may have gone through unanswered: the key is new once more (at least once).
   */
  mayHaveAdded?: boolean;
  readonly resolve: (exists: boolean) => void;
  readonly reject: (error: unknown) => void;
}

interface Ending {
  readonly key: string;
  readonly failed: boolean;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

type Callback = (error: unknown, response: unknown, done?: unknown) => unknown;

/** Replaces node-crawler's duplicate check with an atomic check-and-insert over a SeenSet; initializes crawlsieve itself. */
export async function sieveCrawler(crawler: CrawlerLike, options: SieveCrawlerOptions = {}): Promise<CrawlerSieve> {
  if (
    crawler === null ||
    typeof crawler !== "object" ||
    typeof crawler.add !== "function" ||
    typeof crawler.options !== "object"
  ) {
    throw new InvalidArgumentError("crawler", crawler, "a node-crawler 2.x Crawler (new Crawler({...}))");
  }
  await init();
  const rules = options.recrawlAfter !== null && typeof options.recrawlAfter === "object";
  const keyOf = keyFunction(options.key, rules && options.key !== "scrapy");
  const worker = options.worker ?? "main";
  if (typeof worker !== "string" || !/^[\w.-]{1,64}$/.test(worker))
    throw new InvalidArgumentError("worker", worker, "a name of letters, digits, '_', '.', '-'");
  const urls = options.key !== "scrapy";
  const { seen: spec } = recrawlSeen(options.seen ?? { backend: "memory" }, options.recrawlAfter, options.now, {
    urls,
    key: '"scrapy"',
  });
  const seen = await openSeenSet(spec);
  const forget = options.forgetOnFailure ?? false;
  if (typeof forget !== "boolean") throw new InvalidArgumentError("forgetOnFailure", forget, "true or false");
  if (forget && seen.removeMany === undefined)
    throw new InvalidArgumentError(
      "forgetOnFailure",
      forget,
      `false with a seen-set that cannot forget a key (${seen.backend}, exact: ${seen.exact})`,
    );
  const pending = pendingLog(options.pending, spec, worker);
  const stats: CrawlerSieveStats = { checked: 0, scheduled: 0, dropped: 0, resumed: 0, forgotten: 0, retries: 0 };
  const onError =
    options.onError ??
    ((error: unknown) =>
      process.stderr.write(
        `crawlsieve/crawler: a write to the ${seen.backend} seen-set failed, retrying: ${String(error)}\n`,
      ));
  if (typeof onError !== "function") throw new InvalidArgumentError("onError", onError, "a function (error) => void");
  const retryForMs = options.retryForMs ?? 300_000;
  if (!Number.isSafeInteger(retryForMs) || retryForMs < 0)
    throw new InvalidArgumentError("retryForMs", retryForMs, "a whole number of milliseconds, 0 or more");

  // All writes of the sieve happen in one flush at a time (group commit): adds and finished
  // requests that arrive while a flush runs wait for the next one, so under load one flush (one
  // durable commit) serves many pages. A flush first records and commits the links waiting, then
  // ends the finished requests: a page's links are recorded before the page leaves the record.
  let waiting: Waiting[] = [];
  let ending: Ending[] = [];
  // A flush that fails is tried again: adds it had not committed and requests it had not ended
  // go back to the head of the queues (records to remove are carried), with backoff, until
  // retryForMs of failures.
  let carried: string[] = [];
  let failingSince: number | undefined;
  let backoff = 0;
  let busy = false;
  let scheduled = false;
  const resumeKeys = new Set<string>();
  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];
  const checkIdle = () => {
    if (inFlight === 0 && !busy && !scheduled && waiting.length === 0 && ending.length === 0 && carried.length === 0)
      for (const wake of idleWaiters.splice(0)) wake();
  };
  const schedule = () => {
    if (busy || scheduled) return;
    scheduled = true;
    queueMicrotask(flush);
  };

  /** Called once a new request finished: its record goes, and after a final failure maybe its key. */
  const finished = (key: string, failed: boolean) =>
    new Promise<void>((resolve, reject) => {
      ending.push({ key, failed, resolve, reject });
      schedule();
    });

  /** Wraps a new request's callback so its end is known (node-crawler calls it once, after its retries). */
  const watch = (request: Record<string, unknown>, key: string) => {
    const original = request.callback as Callback | undefined;
    inFlight++;
    request.callback = (error: unknown, response: unknown, done?: unknown) => {
      const failed = error !== null && error !== undefined;
      const free = typeof done === "function" ? (done as () => void) : () => undefined;
      const release = () => {
        free();
        inFlight--;
        checkIdle();
      };
      let released = false;
      const doneOnce = () => {
        if (released) return;
        released = true;
        // Released only after the links this page added went through the sieve and were
        // scheduled (the flush, then a macrotask): node-crawler emits "drain" when a release
        // finds its queues empty, and links still being checked are not in them yet.
        // Settled either way (a rejection only after retryForMs of failed writes): the slot is freed.
        void finished(key, failed).then(
          () => setImmediate(release),
          () => setImmediate(release),
        );
      };
      // A failed request is forgotten before the user's callback runs, so that callback may add it again.
      if (failed && forget) {
        const proceed = () =>
          typeof original === "function"
            ? original(error, response, () => setImmediate(release))
            : setImmediate(release);
        void finished(key, true).then(proceed, proceed);
        return;
      }
      if (typeof original === "function") return original(error, response, doneOnce);
      doneOnce();
    };
  };

  /** Records and commits the waiting adds; returns which were new. */
  const commit = async (
    batch: readonly Waiting[],
    unrecord: string[],
    attempt: { absent?: Uint8Array; addSent: boolean },
  ): Promise<Uint8Array> => {
    if (batch.length === 0) return new Uint8Array(0);
    const keys = batch.map((w) => w.key);
    const entries = new Map<string, PendingRequest>();
    if (pending !== undefined) {
      // Recorded before a key can be reported new: a crash after the commit leaves it pending.
      const maybeNew = await seen.hasMany(keys);
      attempt.absent = maybeNew.map((present) => present ^ 1);
      batch.forEach(
        (w, i) =>
          (maybeNew[i] === 0 || w.mayHaveAdded === true) &&
          !entries.has(w.key) &&
          entries.set(w.key, keptFields(w.request)),
      );
      await pending.add(entries);
    }
    attempt.addSent = true;
    const fresh = await seen.addMany(keys);
    const kept = new Set<string>();
    batch.forEach((w, i) => {
      // A key a failed flush sent may be in the seen-set through that flush alone: new once (at least once).
      if (fresh[i] === 1 || (w.mayHaveAdded === true && !kept.has(w.key))) {
        fresh[i] = 1;
        kept.add(w.key);
        watch(w.request, w.key);
        stats.scheduled++;
      } else stats.dropped++;
    });
    // Only the records this batch wrote: a key recorded by an earlier batch is still pending.
    for (const key of entries.keys()) if (!kept.has(key)) unrecord.push(key);
    return fresh;
  };

  /** Ends finished requests: forgets the failed ones where asked, and leaves their keys to unrecord. */
  const end = async (ends: readonly Ending[], unrecord: string[]): Promise<void> => {
    const failed = forget ? ends.filter((e) => e.failed).map((e) => e.key) : [];
    if (failed.length > 0) {
      await seen.removeMany!(failed);
      stats.forgotten += failed.length;
    }
    for (const e of ends) unrecord.push(e.key);
  };

  const flush = () => {
    scheduled = false;
    const batch = waiting;
    const ends = ending;
    waiting = [];
    ending = [];
    busy = true;
    const unrecord = carried;
    carried = [];
    let committed = false;
    const attempt: { absent?: Uint8Array; addSent: boolean } = { addSent: false };
    let settled = unrecord.length;
    const work = (async () => {
      const fresh = await commit(batch, unrecord, attempt);
      committed = true;
      settled = unrecord.length;
      batch.forEach((w, i) => w.resolve(fresh[i] === 0));
      await end(ends, unrecord);
      if (pending !== undefined && unrecord.length > 0) await pending.remove(unrecord);
      for (const e of ends) e.resolve();
    })();
    void work
      .then(
        () => {
          failingSince = undefined;
          backoff = 0;
        },
        (error) => {
          stats.retries++;
          onError(error);
          failingSince ??= Date.now();
          if (Date.now() - failingSince > retryForMs) {
            if (!committed) batch.forEach((w) => w.reject(error));
            for (const e of ends) e.reject(error);
            failingSince = undefined;
            return;
          }
          if (!committed) {
            // Known absent before the add that failed (unknown without a pending record's check): that add may have inserted it.
            if (attempt.addSent)
              batch.forEach((w, i) => (w.mayHaveAdded ||= attempt.absent === undefined || attempt.absent[i] === 1));
            waiting = [...batch, ...waiting];
          }
          ending = [...ends, ...ending];
          carried = [...unrecord.slice(0, settled), ...carried];
          backoff = Math.min(5_000, Math.max(100, backoff * 2));
        },
      )
      // After node-crawler has scheduled the batch's new requests (its own then, a microtask later).
      .then(() => {
        const next = () => {
          busy = false;
          if (waiting.length > 0 || ending.length > 0 || carried.length > 0) schedule();
          checkIdle();
        };
        if (backoff === 0) setImmediate(next);
        else setTimeout(next, backoff);
      });
    lastFlush = work.then(
      () => undefined,
      () => undefined,
    );
  };
  let lastFlush: Promise<void> = Promise.resolve();

  const exists = (request: Record<string, unknown>): Promise<boolean> => {
    stats.checked++;
    const key = keyOf(request as CrawlerRequestLike);
    if (key === undefined) return Promise.resolve(false);
    if (resumeKeys.delete(key)) {
      watch(request, key);
      stats.resumed++;
      return Promise.resolve(false);
    }
    return new Promise((resolve, reject) => {
      waiting.push({ key, request, resolve, reject });
      schedule();
    });
  };

  const old = crawler.seen as { dispose?: () => unknown } | undefined;
  crawler.seen = { initialize: async () => undefined, dispose: async () => undefined, exists };
  crawler.options.skipDuplicates = true;
  void Promise.resolve(old?.dispose?.()).catch(() => undefined);

  const sieveIdle = () =>
    new Promise<void>((resolve) => {
      idleWaiters.push(resolve);
      setImmediate(checkIdle);
    });

  if (pending !== undefined) {
    const entries = await pending.entries();
    if (entries.size > 0) {
      // Marked seen first (a crash may have come between the record and the commit), then added
      // through the sieve, which lets exactly these keys through once.
      await seen.addMany([...entries.keys()]);
      for (const key of entries.keys()) resumeKeys.add(key);
      crawler.add([...entries.values()]);
    }
  }

  return {
    seen,
    stats,
    idle: sieveIdle,
    close: async () => {
      // The flush under way and one scheduled are finished; requests still being fetched are not
      // waited for (they stay in the pending record, and the next attach schedules them again).
      while (busy || scheduled) {
        await lastFlush;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await pending?.close();
      await seen.close();
    },
  };
}

/** The record that keeps unfinished requests for this sieve, if any. */
function pendingLog(given: PendingSpec | undefined, spec: SeenSet | SeenSpec, worker: string): PendingLog | undefined {
  if (given === false) return undefined;
  if (given !== undefined) {
    if (given !== null && typeof given === "object" && "file" in given && typeof given.file === "string")
      return filePendingLog(given.file);
    if (given !== null && typeof given === "object" && "key" in given)
      return redisPendingLog(asCommander(given.client), given.key);
    throw new InvalidArgumentError("pending", given, "false, { file } or { client, key }");
  }
  if (!("backend" in spec) || "addMany" in spec) return undefined;
  if (spec.backend === "disk" || spec.backend === "lmdb") return filePendingLog(`${spec.path}/pending-${worker}.jsonl`);
  if (spec.backend === "redis") {
    const base = spec.dupefilter ?? `cs:{${spec.name}}`;
    return redisPendingLog(asCommander(spec.client), `${base}:pending:${worker}`);
  }
  return undefined;
}

const KEPT = [
  "url",
  "uri",
  "method",
  "body",
  "form",
  "json",
  "headers",
  "userParams",
  "priority",
  "jQuery",
  "isJson",
  "encoding",
];

/** The JSON-able fields of a request that schedule it again (callbacks cannot be kept: the crawler's own runs). */
function keptFields(request: Record<string, unknown>): PendingRequest {
  const out: PendingRequest = {};
  for (const field of KEPT) {
    const value = request[field];
    if (value === undefined || typeof value === "function") continue;
    try {
      out[field] = JSON.parse(JSON.stringify(value));
    } catch {
      // Not JSON-able (a cycle, a BigInt): left out.
    }
  }
  return out;
}
