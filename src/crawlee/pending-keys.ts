// Keys between "the queue accepted the request" and "the queue marked it handled". They are held
// in an exact in-memory set of this process, and written to the (persistent, shared) seen-set only
// once their request is handled, in group commits. Why not at acceptance: Crawlee's memory storage
// rewrites a request's file in place when it locks the request, so a kill -9 during that write
// leaves a file the queue skips on reopen, and the request is gone from the queue; had its key
// been in a persistent seen-set, every later link to it would be dropped and the page never
// fetched. Held here, the key dies with the process, and the next link to the page adds it again.
// A handled request's record is complete before its key is committed, and a key whose commit a
// crash cut short is still handled in the queue, which answers "present" when it is met again.
import { log as crawleeLog } from "./core.js";
import { openSeenSet, type SeenSet } from "../index.node.js";
import { retryTransient, type RetryOptions } from "../seen/transient.js";

/** Keys handled but not yet committed are written when this many wait (or a second passes). */
const GROUP = 256;
const DELAY_MS = 1000;

/** The pending keys of one sieve, and the commits of handled ones to its seen-set. */
export class PendingKeys {
  private readonly toCommit: string[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Why a commit failed since close() last asked (its keys wait in toCommit). */
  private failure: unknown;

  private constructor(
    private readonly pending: SeenSet,
    private readonly seen: SeenSet,
    private readonly onCommit: (keys: number) => void,
  ) {}

  /** Pending keys for a sieve over `seen`; `onCommit` hears how many keys each group wrote. */
  static async open(seen: SeenSet, onCommit: (keys: number) => void = () => undefined): Promise<PendingKeys> {
    return new PendingKeys(await openSeenSet({ backend: "memory" }), seen, onCommit);
  }

  /** 1 where a key is pending here or in the seen-set: one hasMany on each, the seen-set asked only about the rest. */
  async hasMany(keys: readonly string[]): Promise<Uint8Array> {
    const found = await this.pending.hasMany(keys);
    const rest: number[] = [];
    for (let i = 0; i < keys.length; i++) if (found[i] === 0) rest.push(i);
    if (rest.length > 0) {
      const remote = await this.seen.hasMany(rest.map((i) => keys[i]));
      rest.forEach((i, j) => (found[i] = remote[j]));
    }
    return found;
  }

  /** Keys whose requests the queue accepted. */
  async accept(keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.pending.addMany(keys);
  }

  /** A handled request's key: committed with the next group. */
  handled(key: string): void {
    this.toCommit.push(key);
    if (this.toCommit.length >= GROUP) void this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => void this.flush(), DELAY_MS);
      this.timer.unref?.();
    }
  }

  /** Commits every handled key now (one addMany), then forgets them here. */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      const batch = this.toCommit.splice(0);
      if (batch.length === 0) return;
      try {
        await this.seen.addMany(batch);
        // Only now: a key is always in one of the two sets.
        await this.pending.removeMany!(batch);
        this.onCommit(batch.length);
      } catch (error) {
        // Kept for the next flush; meanwhile the keys stay pending here.
        this.failure = error;
        this.toCommit.unshift(...batch);
        crawleeLog.warning(
          `crawlsieve: committing ${batch.length} handled keys to the ${this.seen.backend} seen-set failed (retried with the next group): ${String(error)}`,
        );
      }
    });
    return this.flushing;
  }

  /** Forgets every pending key and every key waiting to be committed. */
  async clear(): Promise<void> {
    await this.flushing;
    this.toCommit.length = 0;
    await this.pending.clear();
  }

  /**
   * Commits what waits, asked again while the seen-set fails for a while (`retry`), and frees the
   * pending set; throws when the keys could not be committed, rather than close without them.
   */
  async close(retry: RetryOptions): Promise<void> {
    try {
      await retryTransient(async () => {
        // Until nothing waits: a request marked handled meanwhile is committed too.
        do {
          this.failure = undefined;
          await this.flush();
          if (this.failure !== undefined) throw this.failure;
        } while (this.toCommit.length > 0);
      }, retry);
    } finally {
      await this.pending.close();
    }
  }
}
