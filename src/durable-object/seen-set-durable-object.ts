// The Durable Object behind durableSeenSet: one shard of a seen-set. Its keys' 128-bit
// fingerprints live in a FingerprintSet (WebAssembly memory) for the check, and in the object's
// SQLite storage for persistence. A Durable Object runs one event at a time and nothing here
// awaits between the check and the insert, so every batch is an atomic check-and-insert; the
// runtime's output gate holds the answer until the row written for it is on disk. An object that
// is a shard of an exact window (durableWindowSet) answers /window/... calls instead (window-shard.ts).
import { CrawlsieveError, FingerprintSet, initSync } from "../index.workerd.js";
import { addFresh } from "../seen/fingerprint-batches.js";
import { FingerprintRows } from "./fingerprint-rows.js";
import {
  ROW_FINGERPRINTS,
  SHARD_HEADER,
  SHARDS_HEADER,
  WINDOW_EPOCHS,
  WINDOW_HEADER,
  type Operation,
  type WireError,
} from "./protocol.js";
import type { WindowOperation } from "./window-protocol.js";
import { WindowShard } from "./window-shard.js";
import type { DurableObjectContext } from "./workers-types.js";

/**
 * Keys one object holds at most. Its table measured 51.1 MiB at 2 million keys (26.8 bytes a key,
 * bench/RESULTS.md), under half the 128 MB an isolate shares with other objects of the class; a
 * batch that could pass it is refused with ERR_TOO_LARGE (open a name with more shards).
 */
export const MAX_KEYS_PER_OBJECT = 2_000_000;

/** A Durable Object class holding one shard of a seen-set: export it from the Worker and bind it. */
export class SeenSetDurableObject {
  private set!: FingerprintSet;
  private readonly rows: FingerprintRows;
  /** The exact window's calls (durableWindowSet), when this object is a shard of one. */
  private readonly windowed: WindowShard;
  /** With a window: the oldest epoch stored (undefined when none), so most calls skip the expiry query. */
  private oldest: number | undefined;

  constructor(ctx: DurableObjectContext, _env?: unknown) {
    initSync();
    const transaction = <T>(body: () => T) => ctx.storage.transactionSync(body);
    this.rows = new FingerprintRows(ctx.storage.sql, transaction);
    this.windowed = new WindowShard(ctx.storage.sql, transaction, () => this.now(), MAX_KEYS_PER_OBJECT);
    void ctx.blockConcurrencyWhile(async () => this.load());
  }

  /** The object's clock in milliseconds (Date.now()): one clock for every client of a shard; a subclass may give its own (tests move it by hand). */
  protected now(): number {
    return Date.now();
  }

  /** Answers the client's POSTs: add, has, size, clear, claim (the body holds packed 16-byte fingerprints); /window/... the exact window's (window-protocol.ts). */
  async fetch(request: Request): Promise<Response> {
    try {
      const body = new Uint8Array(await request.arrayBuffer());
      const path = new URL(request.url).pathname;
      if (path.startsWith("/window/")) {
        this.rows.claim(header(request, SHARD_HEADER), header(request, SHARDS_HEADER), 0, 1);
        return await this.windowed.answer(path.slice("/window/".length) as WindowOperation, body);
      }
      // Nothing below awaits: the record check, the expiry, the check-and-insert and the write are one event.
      const window = header(request, WINDOW_HEADER);
      this.rows.claim(header(request, SHARD_HEADER), header(request, SHARDS_HEADER), window);
      const epoch = window === 0 ? 0 : Math.floor(this.now() / epochMs(window));
      if (window > 0) this.expire(window);
      const operation = path.slice(1) as Operation;
      switch (operation) {
        case "add":
          return new Response(this.add(body, epoch) as Uint8Array<ArrayBuffer>);
        case "has":
          return new Response(this.set.hasFingerprints(body) as Uint8Array<ArrayBuffer>);
        case "size":
          return Response.json({ size: this.set.size, rows: this.rows.rows(), bytes: this.set.byteLength });
        case "claim":
          return new Response(null, { status: 204 });
        case "clear":
          this.rows.clear();
          this.set.clear();
          this.oldest = undefined;
          return new Response(null, { status: 204 });
        default:
          throw new CrawlsieveError("ERR_INVALID_ARGUMENT", `unknown operation ${JSON.stringify(operation)}`);
      }
    } catch (error) {
      const wire: WireError =
        error instanceof CrawlsieveError
          ? {
              code: error.code,
              message: error.message,
              recorded: (error as { recorded?: number }).recorded,
              requested: (error as { requested?: number }).requested,
            }
          : { code: "ERR_DURABLE_OBJECT", message: String(error) };
      return Response.json(wire, { status: error instanceof CrawlsieveError ? 409 : 500 });
    }
  }

  /** Inserts a batch and writes its new fingerprints as one row (of `epoch`) before answering. */
  private add(packed: Uint8Array, epoch: number): Uint8Array {
    const count = packed.length / 16;
    if (count > ROW_FINGERPRINTS)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `a call carries at most ${ROW_FINGERPRINTS} fingerprints, got ${count}`,
      );
    // Near the cap, count only the fingerprints not there yet, so a full shard still answers repeats.
    if (
      this.set.size + count > MAX_KEYS_PER_OBJECT &&
      this.set.size + absent(this.set.hasFingerprints(packed)) > MAX_KEYS_PER_OBJECT
    ) {
      throw new CrawlsieveError(
        "ERR_TOO_LARGE",
        `this shard holds ${this.set.size} keys and may hold ${MAX_KEYS_PER_OBJECT}; open the set under a new name with more shards`,
      );
    }
    const { flags, fresh } = addFresh(this.set, packed);
    try {
      this.rows.append(fresh, epoch);
      if (fresh.length > 0) this.oldest = Math.min(this.oldest ?? epoch, epoch);
    } catch (error) {
      // The table must not hold what storage does not: start again from storage.
      this.load();
      throw error;
    }
    return flags;
  }

  /**
   * Drops the epochs that have aged out (every key of epoch e was added before (e + 1) x epoch
   * length, so it goes once that plus the window has passed) and rebuilds the table from the rest;
   * a key is therefore new again between 1 and 17/16 windows after it was first added.
   */
  private expire(window: number): void {
    const cutoff = Math.floor((this.now() - window) / epochMs(window));
    if (this.oldest === undefined || this.oldest >= cutoff) return;
    this.rows.expireBefore(cutoff);
    this.load();
  }

  /** Builds the table from the stored rows (at start, after expiry, and after a failed write). */
  private load(): void {
    this.set?.dispose();
    this.set = new FingerprintSet({ items: Math.max(4096, this.rows.count()) });
    this.rows.each((packed) => this.set.addFingerprints(packed));
    this.oldest = this.rows.oldestEpoch();
  }
}

/** How many flags are 0. */
function absent(flags: Uint8Array): number {
  return flags.length - flags.reduce((n, flag) => n + flag, 0);
}

/** Milliseconds of one epoch of a window (at least 1). */
function epochMs(window: number): number {
  return Math.max(1, Math.floor(window / WINDOW_EPOCHS));
}

/** A non-negative integer header the client always sends. */
function header(request: Request, name: string): number {
  const value = Number(request.headers.get(name) ?? 0);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", `header ${name} must be a non-negative integer`);
  return value;
}
