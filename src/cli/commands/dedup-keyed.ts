// The path of `dedup` whose seen-set is not the byte pipeline's: Redis (--redis), a window in
// memory or in a store (--window: window-set.ts), or a Bloom filter to save (--save-filter).
// Lines go through JavaScript as keys (the line, or its field, JSON value or canonical URL:
// src/lines/keys/). Loaded only for those options, so the common case starts
// without these modules.
import { open, rm } from "node:fs/promises";
import { BloomFilter } from "../../bloom/bloom-filter.js";
import { BlockedBloomFilter } from "../../bloom/blocked-bloom-filter.js";
import { ScalableBloomFilter } from "../../bloom/scalable-bloom-filter.js";
import { CrawlsieveError } from "../../errors.js";
import { readInputs, type LineBatch } from "../lines.js";
import { DEDUP_LIMIT_OF, limitedLineBatches } from "../line-limit.js";
import type { LineKeys } from "../../lines/keys/line-keys.js";
import { Output } from "../output.js";
import { stdout } from "../stdout.js";
import { count, Progress } from "../progress.js";
import type { Durability } from "../../redis/durability.js";
import { redisSet } from "../redis-set.js";

/** The parsed options of `dedup` that the keyed path reads. */
export interface KeyedValues {
  readonly redis?: string;
  readonly cluster?: boolean;
  readonly namespace?: string;
  readonly window?: string;
  readonly store?: string;
  readonly blocked?: boolean;
  readonly canonicalize?: boolean;
  readonly stats?: boolean;
  readonly "save-filter"?: string;
  readonly [flag: string]: string | boolean | undefined;
}

/** What dedup needs of its seen-set: add keys, learn which were new. */
interface SeenSet {
  addSpans(data: Uint8Array, spans: ArrayLike<number>): Uint8Array | Promise<Uint8Array>;
  readonly byteLength: number;
  /** A store that keeps this run's unprinted lines (--store --window): where the output stands, and that it is written up to there. */
  mark?(): number;
  printed?(mark: number): void;
  /** Extra numbers for --stats. */
  report(): Record<string, unknown>;
  /** The filter in format v1 as consecutive pieces (approximate in-memory sets only), for --save-filter. */
  serializeParts?(): Iterable<Uint8Array>;
}

function approxSet(filter: BloomFilter | BlockedBloomFilter | ScalableBloomFilter): SeenSet {
  return {
    addSpans: (data, spans) => filter.addSpans(data, spans),
    get byteLength() {
      return filter.byteLength;
    },
    report: () => ({}),
    // Pieces, written one after another: a filter past 4 GiB fits no single Uint8Array.
    serializeParts: () => (filter instanceof ScalableBloomFilter ? [filter.serialize()] : filter.serializeParts()),
  };
}

/** `dedup` through a keyed seen-set; returns the exit code. */
export async function keyedDedup(
  positionals: string[],
  values: KeyedValues,
  { exact, fpRate, items, keys }: { exact: boolean; fpRate: number; items: number | undefined; keys?: LineKeys },
): Promise<number> {
  if (values.redis === undefined && values.window === undefined && exact)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--save-filter needs --approx (and no --redis): it writes the in-memory Bloom filter",
    );
  const windowed = values.window !== undefined && values.redis === undefined;
  const filter: SeenSet & { close?(failed?: boolean): void | Promise<void> } = windowed
    ? await (await import("../window-set.js")).windowSet({
        window: values.window as string,
        refresh: values.refresh === true,
        ttlMap: values["ttl-map"] as string | undefined,
        now: values.now as string | undefined,
        store: values.store,
        exact,
        items,
        fpRate,
      })
    : values.redis !== undefined
      ? await redisSet({
          url: values.redis,
          cluster: values.cluster === true,
          namespace: values.namespace,
          dupefilter: values.dupefilter as string | undefined,
          window: values.window,
          ttlMap: values["ttl-map"] as string | undefined,
          refresh: values.refresh === true,
          now: values.now as string | undefined,
          durability: values.durability as Durability | undefined,
          exact,
          items,
          fpRate,
        })
      : approxSet(
          items === undefined
            ? new ScalableBloomFilter({ fpRate })
            : values.blocked
              ? new BlockedBloomFilter({ items, fpRate })
              : new BloomFilter({ items, fpRate }),
        );

  let lineBase = 0;
  /** The answers (1: print) for a batch of lines. */
  const add = async (batch: LineBatch): Promise<Uint8Array> => {
    if (keys === undefined) return filter.addSpans(batch.data, batch.spans);
    const cut = keys.cut(batch.data, batch.spans, 2, batch.count, lineBase + 1);
    const fresh = cut.count === 0 ? new Uint8Array(0) : await filter.addSpans(cut.data, cut.spans);
    if (cut.count === batch.count) return fresh;
    // Records without the key: printed as they are with --missing keep, left out with drop.
    const flags = new Uint8Array(batch.count);
    for (let i = 0, k = 0; i < batch.count; i++)
      flags[i] = cut.has[i] === 1 ? fresh[k++] : keys.missing === "keep" ? 1 : 0;
    return flags;
  };

  const durable = values.redis !== undefined || (windowed && values.store !== undefined);
  const started = performance.now();
  // A durable seen-set commits a batch before it is printed: each print is confirmed before the
  // next batch is committed, so a failed write leaves at most one batch seen and unprinted.
  const out = new Output(stdout(), 1 << 16, durable);
  const progress = new Progress();
  const newline = Uint8Array.of(0x0a);
  let lines = 0;
  let unique = 0;
  let bytesIn = 0;
  try {
    let input = 0;
    for await (const source of readInputs(positionals, true)) {
      const file = positionals.length === 0 || positionals[input] === "-" ? "stdin" : positionals[input];
      if (keys !== undefined) keys.source = file;
      input++;
      lineBase = 0;
      // A line is read whole as a key: past the limit it is an error, before it is gathered.
      for await (const batch of limitedLineBatches(source, file, DEDUP_LIMIT_OF)) {
        const fresh = await add(batch);
        lineBase += batch.count;
        // Consecutive new lines are written as one piece of the input buffer.
        let runStart = -1;
        let runEnd = -1;
        for (let i = 0; i < batch.count; i++) {
          if (fresh[i] === 0) continue;
          unique++;
          const start = batch.spans[2 * i];
          if (start !== runEnd) {
            if (runStart >= 0) out.push(batch.data.subarray(runStart, runEnd));
            runStart = start;
          }
          runEnd = batch.ends[i];
        }
        if (runStart >= 0) out.push(batch.data.subarray(runStart, runEnd));
        if (batch.unterminated && fresh[0] === 1) out.push(newline);
        lines += batch.count;
        bytesIn += batch.count > 0 ? batch.ends[batch.count - 1] - batch.spans[0] : 0;
        // With Redis the batch is committed: print it now, so at most one batch is committed unprinted.
        // A windowed store keeps this run's unprinted lines until they are written.
        const mark = filter.mark?.();
        if (out.full || durable) await out.flush();
        if (mark !== undefined && durable) filter.printed?.(mark);
        progress.update(
          () =>
            `${count(lines)} lines, ${count(unique)} unique, ${count(lines / ((performance.now() - started) / 1000))} lines/s`,
        );
      }
    }
    await out.end();
  } catch (error) {
    // Also on errors: an open Redis connection would otherwise keep the process alive. The first
    // error is the one reported; closing may fail for the same cause (a full disk) and says less.
    await Promise.resolve(filter.close?.(true)).catch(() => undefined);
    throw error;
  }
  await filter.close?.();
  if (values["save-filter"] !== undefined) {
    const path = values["save-filter"];
    const file = await open(path, "w");
    try {
      for (const part of filter.serializeParts!())
        for (let at = 0; at < part.length; ) at += (await file.write(part, at)).bytesWritten;
      await file.close();
    } catch (error) {
      // A part of a filter is no filter: nothing is left behind to be loaded later.
      await file.close().catch(() => undefined);
      await rm(path, { force: true });
      throw new CrawlsieveError("ERR_SAVE_FILTER", `cannot write the filter to ${path}: ${(error as Error).message}`);
    }
  }
  progress.done();
  if (values.stats) {
    const seconds = (performance.now() - started) / 1000;
    const stats = {
      command: "dedup",
      mode: exact ? "exact" : "approx",
      filter: windowed
        ? values.store !== undefined
          ? "store-window"
          : exact
            ? "window"
            : "window-bloom"
        : values.redis !== undefined
          ? values.dupefilter !== undefined
            ? "scrapy-redis-dupefilter"
            : values.window !== undefined
              ? exact
                ? "redis-window"
                : "redis-window-bloom"
              : exact
                ? "redis-fingerprints"
                : "redis-bloom"
          : items === undefined
            ? "scalable"
            : values.blocked
              ? "blocked"
              : "standard",
      // A rate only where something can be dropped by chance.
      ...(exact ? {} : { fpRate }),
      canonicalize: keys?.spec.canonicalize !== undefined,
      lines,
      unique,
      duplicates: lines - unique,
      bytesIn,
      memoryBytes: filter.byteLength,
      ...filter.report(),
      seconds: Number(seconds.toFixed(3)),
      linesPerSecond: Math.round(lines / seconds),
    };
    process.stderr.write(JSON.stringify(stats) + "\n");
  }
  return 0;
}
