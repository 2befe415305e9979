// One shard of the exact windowed Durable Object seen-set, inside its object: the windowed set over
// a log (../seen/log-window-set.ts, the disk and browser window's one engine) on the object's rows
// (window-rows.ts). Calls are answered one at a time in the order they came, each on the clock of
// its call (the client's time when it sent one, else the object's), so a call's check, insert and
// row are one step and a fleet of clients given one time agrees. The TTLs and semantics are the
// caller's (a call with others reads the rows again under them, as a disk store opened with other
// options does). The rows are rewritten with only what is held once they doubled since the last time.
import { CrawlsieveError, InvalidArgumentError } from "../index.workerd.js";
import { encodeTimedRecords, encodeTombstones, TIMED_ENTRY } from "../seen/fingerprint-batches.js";
import { LogWindowSet } from "../seen/log-window-set.js";
import type { ExactWindowSetOptions } from "../window/exact-window-set.js";
import { ROW_FINGERPRINTS } from "./protocol.js";
import { decodeCall, type WindowHead, type WindowOperation } from "./window-protocol.js";
import { WindowRows } from "./window-rows.js";
import type { SqlStorage } from "./workers-types.js";

/** Rows appended since the last rewrite before one is considered. */
const REWRITE_AFTER = 64;

/** A store's failure as crawlsieve's typed error. */
function storageError(error: unknown, what: string): Error {
  if (error instanceof CrawlsieveError) return error;
  return new CrawlsieveError("ERR_DURABLE_OBJECT", `${what} failed: ${String(error)}`);
}

/** The windowed set of one object, with the rewrite of its rows. */
class ShardSet extends LogWindowSet {
  /** Rows and bytes after the last rewrite (or the first read). */
  private floor: { rows: number; bytes: number } | undefined;

  constructor(
    options: ExactWindowSetOptions,
    private readonly rows: WindowRows,
  ) {
    super(options, { backend: "durable-object", log: rows, lock: (body) => body(), storageError });
  }

  /** Rows stored. */
  get rowCount(): number {
    return this.rows.rows();
  }

  /** Rewrites the rows with only the keys still held and the tombstones, once they grew by REWRITE_AFTER rows and doubled in bytes. */
  rewriteIfDue(): Promise<void> {
    return this.decide((set) => {
      this.floor ??= { rows: this.rows.rows(), bytes: this.rows.bytes() };
      if (this.rows.rows() <= this.floor.rows + REWRITE_AFTER || this.rows.bytes() < 2 * this.floor.bytes)
        return { result: undefined, append: [] };
      set.dropExpired(this.clock());
      const rows: Uint8Array[] = [];
      // Rows of up to ROW_FINGERPRINTS entries (1.3 MB, under SQLite's 2 MB row), across partitions.
      let chunk = new Uint8Array(TIMED_ENTRY * ROW_FINGERPRINTS);
      let filled = 0;
      set.eachEntry((entries) => {
        for (let at = 0; at < entries.length; ) {
          const take = Math.min(entries.length - at, chunk.length - filled);
          chunk.set(entries.subarray(at, at + take), filled);
          filled += take;
          at += take;
          if (filled === chunk.length) {
            rows.push(encodeTimedRecords(chunk));
            chunk = new Uint8Array(chunk.length);
            filled = 0;
          }
        }
      });
      if (filled > 0) rows.push(encodeTimedRecords(chunk.subarray(0, filled)));
      rows.push(encodeTombstones(set.tombstoneList()));
      this.rows.rewrite(rows);
      this.floor = { rows: this.rows.rows(), bytes: this.rows.bytes() };
      return { result: undefined, append: [] };
    });
  }
}

/** The windowed calls of one Durable Object. */
export class WindowShard {
  private set: ShardSet | undefined;
  /** The TTLs and semantics `set` was made with. */
  private policy: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** The clock of the call being answered (ms). */
  private time = 0;

  constructor(
    private readonly sql: SqlStorage,
    private readonly transaction: <T>(body: () => T) => T,
    private readonly clock: () => number,
    private readonly maxKeys: number,
  ) {}

  /** Answers one call (`operation`, its body), after every call that came before it. */
  answer(operation: WindowOperation, body: Uint8Array): Promise<Response> {
    const next = this.queue.then(() => this.run(operation, body));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async run(operation: WindowOperation, body: Uint8Array): Promise<Response> {
    const { head, keys } = decodeCall(body);
    if (keys.length > ROW_FINGERPRINTS)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `a call carries at most ${ROW_FINGERPRINTS} keys, got ${keys.length}`,
      );
    if (head.at !== undefined && !(typeof head.at === "number" && Number.isFinite(head.at)))
      throw new InvalidArgumentError("at", head.at, "a time in ms since the epoch");
    this.time = head.at ?? this.clock();
    const set = await this.setFor(head);
    switch (operation) {
      case "add": {
        await this.checkRoom(set, keys);
        const flags = await set.addMany(keys);
        await set.rewriteIfDue();
        return new Response(flags as Uint8Array<ArrayBuffer>);
      }
      case "has":
        return new Response((await set.hasMany(keys)) as Uint8Array<ArrayBuffer>);
      case "due":
        return new Response((await set.dueMany(keys)) as Uint8Array<ArrayBuffer>);
      case "seen-at":
        return new Response(new Uint8Array((await set.seenAtMany(keys)).buffer) as Uint8Array<ArrayBuffer>);
      case "remove": {
        const flags = await set.removeMany(keys);
        await set.rewriteIfDue();
        return new Response(flags as Uint8Array<ArrayBuffer>);
      }
      case "forget-host":
        await set.forgetHost(head.pattern as string);
        return new Response(null, { status: 204 });
      case "forget-prefix":
        await set.forgetPrefix(head.pattern as string);
        return new Response(null, { status: 204 });
      case "size":
        return Response.json({ size: await set.size(), rows: set.rowCount });
      case "clear":
        await set.clear();
        return new Response(null, { status: 204 });
      case "claim":
        return new Response(null, { status: 204 });
      default:
        throw new CrawlsieveError("ERR_INVALID_ARGUMENT", `unknown operation ${JSON.stringify(operation)}`);
    }
  }

  /** The set under the call's TTLs and semantics: the one held, or the rows read again under new ones. */
  private async setFor(head: WindowHead): Promise<ShardSet> {
    const policy = JSON.stringify([head.ttl, head.ttlMap ?? {}, head.semantics ?? "first-seen"]);
    if (this.set !== undefined && this.policy === policy) return this.set;
    const rows = new WindowRows(this.sql, this.transaction);
    const items = Math.min(this.maxKeys, Math.max(4096, Math.ceil(rows.bytes() / TIMED_ENTRY)));
    const made = new ShardSet(
      { ttl: head.ttl, ttlMap: head.ttlMap, semantics: head.semantics, items, now: () => this.time },
      rows,
    );
    await this.set?.close();
    this.set = made;
    this.policy = policy;
    return made;
  }

  /** Refuses a batch that could take the shard past maxKeys (counting only the keys due, so a full shard still answers repeats). */
  private async checkRoom(set: ShardSet, keys: readonly Uint8Array[]): Promise<void> {
    const size = await set.size();
    if (size + keys.length <= this.maxKeys) return;
    const due = (await set.dueMany(keys)).reduce((n, flag) => n + flag, 0);
    if (size + due > this.maxKeys)
      throw new CrawlsieveError(
        "ERR_TOO_LARGE",
        `this shard holds ${size} keys and may hold ${this.maxKeys}; open the set under a new name with more shards`,
      );
  }
}
