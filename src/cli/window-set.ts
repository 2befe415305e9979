// The seen-set of `dedup --window`: a line is new again once its TTL has passed since it was
// recorded (`--refresh`: since it was last seen). Exact by default, in memory (ExactWindowSet) or
// with --store in a store directory of its own (DiskWindowSet), where, as `dedup --store` does,
// this run's new lines wait in its own locked file of unprinted lines (unprinted-file.ts) from
// before they reach the store until they are written out, and a dead run's are forgotten, so a
// kill -9 between record and print loses no line. With --approx, the Bloom window in memory.
// TTLs per host or URL prefix come from --ttl-map FILE; --now fixes the clock (replaying logs).
import { readFileSync } from "node:fs";
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";
import { openDiskWindowSet, type DiskWindowSet } from "../seen/disk/disk-window-set.js";
import { deadRunMessage, deadRuns, type DeadRun, UnprintedFile } from "../seen/disk/unprinted-file.js";
import { windowSeenSet } from "../seen/local-seen-set.js";
import type { SeenSet } from "../seen/seen-set.js";
import { ExactWindowSet } from "../window/exact-window-set.js";
import { parseTtlMap, type Ttl, ttlSeconds } from "../window/ttl-rules.js";

/** The flags of `dedup` the window reads. */
export interface WindowFlags {
  readonly window: string;
  readonly refresh?: boolean;
  readonly ttlMap?: string;
  readonly now?: string;
  readonly store?: string;
  readonly exact: boolean;
  readonly items?: number;
  readonly fpRate: number;
}

/** What the keyed path of dedup needs of it. */
export interface WindowSet {
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Promise<Uint8Array>;
  readonly byteLength: number;
  report(): Record<string, unknown>;
  /** With --store: where the output handed over stands, for printed() once it is written. */
  mark?(): number;
  /** With --store: the output up to `mark` is written; its lines leave this run's file of unprinted lines. */
  printed?(mark: number): void;
  /** Closes it; `failed`: the run stopped on an error, and what it recorded unprinted stays for the next run to print. */
  close(failed?: boolean): Promise<void>;
}

/** A --window value as the sets take it: "90m", "12h", "1d", "52w", "3mo" (30 days a month) or "never". */
function windowTtl(flag: string, text: string): Ttl {
  const months = /^([1-9]\d*)mo$/.exec(text);
  const ttl = (months === null ? text : `${Number(months[1]) * 30}d`) as Ttl;
  try {
    ttlSeconds(flag, ttl);
  } catch {
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `${flag} must be a count and a unit (s, m, h, d, w, mo), e.g. 30d or 90m, or never; got ${JSON.stringify(text)}`,
    );
  }
  return ttl;
}

/** --now: an ISO 8601 time with its zone ("2026-01-31T00:00:00Z", or a date, taken as UTC) or ms since the epoch. */
export function nowOption(text: string): number {
  const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;
  const ms = /^\d{1,16}$/.test(text) ? Number(text) : iso.test(text) ? Date.parse(text) : NaN;
  if (!(ms >= 0 && ms < 2 ** 32 * 1000))
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `--now must be an ISO 8601 time with its zone (2026-01-31T00:00:00Z) or milliseconds since the epoch, got ${JSON.stringify(text)}`,
    );
  return ms;
}

/** The keys of spans of `data`, as views. */
function keysOf(data: Uint8Array, spans: ArrayLike<number>): Uint8Array[] {
  return Array.from({ length: spans.length >>> 1 }, (_, i) => data.subarray(spans[2 * i], spans[2 * i + 1]));
}

/** The exact window's options from the flags (--window, --ttl-map FILE read and checked, --refresh, --now), for any backend. */
export function exactWindowOptions(flags: Pick<WindowFlags, "window" | "ttlMap" | "refresh" | "now" | "items">) {
  const ttl = windowTtl("--window", flags.window);
  const fixed = flags.now === undefined ? undefined : nowOption(flags.now);
  let ttlMap: Record<string, Ttl> | undefined;
  if (flags.ttlMap !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.ttlMap, "utf8");
    } catch (error) {
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `--ttl-map ${flags.ttlMap} cannot be read: ${(error as Error).message}`,
      );
    }
    try {
      ttlMap = parseTtlMap(text, flags.ttlMap);
    } catch (error) {
      throw new CrawlsieveError("ERR_INVALID_ARGUMENT", `--ttl-map: ${(error as InvalidArgumentError).message}`);
    }
  }
  return {
    ttl,
    ttlMap,
    semantics: flags.refresh === true ? ("refresh" as const) : ("first-seen" as const),
    items: flags.items,
    now: fixed === undefined ? undefined : () => fixed,
  };
}

/** Opens the windowed seen-set the flags ask for. */
export async function windowSet(flags: WindowFlags): Promise<WindowSet> {
  const ttl = windowTtl("--window", flags.window);
  const fixed = flags.now === undefined ? undefined : nowOption(flags.now);
  const now = fixed === undefined ? undefined : () => fixed;
  if (!flags.exact) {
    for (const [flag, given] of [
      ["--refresh", flags.refresh],
      ["--ttl-map", flags.ttlMap],
      ["--store", flags.store],
    ] as const)
      if (given !== undefined && given !== false)
        throw new CrawlsieveError("ERR_INVALID_ARGUMENT", `${flag} is for the exact window: leave out --approx`);
    if (ttl === "never")
      throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--window never needs the exact window: leave out --approx");
    return bloomWindow(ttl, flags, now);
  }
  const options = exactWindowOptions(flags);
  if (flags.store !== undefined) return storeWindow(flags.store, options);
  const set = new ExactWindowSet(options);
  // Read before close() disposes the set: --stats reports after it.
  let last = { byteLength: 0, held: 0, dueAgain: 0 };
  const take = () => (last = { byteLength: set.byteLength, held: set.size, dueAgain: set.dueAgain });
  return {
    addSpans: async (data, spans) => set.addMany(keysOf(data, spans)),
    get byteLength() {
      return last.byteLength;
    },
    report: () => ({ window: flags.window, semantics: set.semantics, held: last.held, dueAgain: last.dueAgain }),
    close: async () => {
      take();
      set.dispose();
    },
  };
}

/** The Bloom window in memory (--approx --window). */
async function bloomWindow(ttl: Ttl, flags: WindowFlags, now: (() => number) | undefined): Promise<WindowSet> {
  const seen: SeenSet = windowSeenSet({
    backend: "window",
    exact: false,
    window: ttl as Exclude<Ttl, "never">,
    items: flags.items,
    fpRate: flags.fpRate,
    now,
  });
  return {
    addSpans: (data, spans) => seen.addMany(keysOf(data, spans)),
    byteLength: 0,
    report: () => ({ window: flags.window }),
    close: () => seen.close(),
  };
}

/** The windowed store in `dir`, with this run's file of unprinted lines. */
async function storeWindow(dir: string, options: ConstructorParameters<typeof ExactWindowSet>[0]): Promise<WindowSet> {
  const told = (message: string) => process.stderr.write(`crawlsieve: ${message}\n`);
  const store: DiskWindowSet = await openDiskWindowSet(dir, { ...options, durable: true, onRecover: told });
  let unprinted: UnprintedFile;
  try {
    // Made under the store's lock, as deadRuns() looks: a file in the making would look dead.
    unprinted = await store.underLock(() => UnprintedFile.create(dir, true, store.path));
  } catch (error) {
    await store.close();
    throw error;
  }
  let dead: DeadRun[] = [];
  let forgottenForDead = 0;
  return {
    addSpans: (data, spans) =>
      store.addManyGated(keysOf(data, spans), undefined, {
        forget: () => {
          // A failed batch's runs go back untouched: the next batch finds them again.
          for (const run of dead) run.release();
          dead = deadRuns(dir, unprinted.path);
          return dead.flatMap((run) => run.batches);
        },
        recorded: (fresh) => {
          unprinted.record(fresh, true);
          unprinted.flush();
        },
        written: () => {
          for (const run of dead) {
            told(deadRunMessage(run));
            forgottenForDead += run.lines;
            run.take();
          }
          dead = [];
        },
      }),
    byteLength: 0,
    report: () => ({
      store: dir,
      window: options.ttl,
      semantics: store.semantics,
      dueAgain: store.dueAgain,
      unprintedByKilledRuns: forgottenForDead,
    }),
    mark: () => unprinted.mark(),
    printed: (mark) => unprinted.printed(mark),
    close: async (failed) => {
      for (const run of dead) run.release();
      // Left behind on a failure: locked until this process ends, then a dead run's file, whose
      // lines the next run forgets in the store and prints where it meets them.
      if (failed !== true) unprinted.close();
      await store.close();
    },
  };
}
