// The Worker side of the Durable Object seen-set: a SeenSet whose keys are hashed here (the same
// 128-bit fingerprints as the in-memory set) and sent, one call per shard per batch, to the
// objects named `${name}/${i}`. A key always goes to the same shard, so each key's
// check-and-insert is atomic in that object even when a batch spans shards.
import {
  DisposedError,
  FingerprintSet,
  initSync,
  InvalidArgumentError,
  type Duration,
  type SeenKey,
  type SeenSet,
} from "../index.workerd.js";
import { durationMs } from "../seen/duration.js";
import {
  errorFromWire,
  ROW_FINGERPRINTS,
  SHARD_HEADER,
  SHARDS_HEADER,
  shardOf,
  WINDOW_HEADER,
  type Operation,
  type WireError,
} from "./protocol.js";
import type { DurableObjectNamespaceLike, DurableObjectStubLike } from "./workers-types.js";

/** Options of durableSeenSet. */
export interface DurableSeenSetOptions {
  /** The set's name: its objects are named `${name}/0` .. `${name}/${shards - 1}`. */
  readonly name: string;
  /** Objects the keys are spread over (default 1); fixed for a name once it is used. */
  readonly shards?: number;
  /**
   * Keys expire: one is new again between `window` and 17/16 of it after it was first reported
   * new ("7d", "12h", or milliseconds); fixed for a name once it is used. Default: never.
   */
  readonly window?: Duration;
}

/** Most shards a set may have. */
const MAX_SHARDS = 4096;

/** A SeenSet kept in SeenSetDurableObject objects of `namespace` (call from a Worker). */
export function durableSeenSet(namespace: DurableObjectNamespaceLike, options: DurableSeenSetOptions): SeenSet {
  if (typeof options?.name !== "string" || options.name.length === 0)
    throw new InvalidArgumentError("name", options?.name, "a non-empty string");
  const shards = options.shards ?? 1;
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new InvalidArgumentError("shards", shards, `an integer from 1 to ${MAX_SHARDS}`);
  const window = options.window === undefined ? 0 : Math.round(durationMs("window", options.window));
  initSync();
  const stubs = Array.from({ length: shards }, (_, i) =>
    namespace.get(namespace.idFromName(`${options.name}/${i}`) as never),
  );
  return new DurableSeenSet(stubs, window);
}

/** The SeenSet over one stub per shard. */
class DurableSeenSet implements SeenSet {
  readonly exact = true;
  readonly backend = "durable-object" as const;
  private closed = false;
  /**
   * Shard 0 exists for every shard count, so it is the one record of the count: it is asked
   * before any other call, else a larger count would send keys to new objects that accept them.
   */
  private checked: Promise<unknown> | undefined;

  constructor(
    private readonly stubs: readonly DurableObjectStubLike[],
    private readonly window: number,
  ) {}

  addMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    return this.scatter("add", keys);
  }

  hasMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    return this.scatter("has", keys);
  }

  async size(): Promise<number> {
    const sizes = await Promise.all(
      this.stubs.map(async (_, i) => ((await (await this.call(i, "size")).json()) as { size: number }).size),
    );
    return sizes.reduce((a, b) => a + b, 0);
  }

  async clear(): Promise<void> {
    await Promise.all(this.stubs.map((_, i) => this.call(i, "clear")));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Hashes the keys, sends each shard its fingerprints (in calls of at most ROW_FINGERPRINTS) and puts the answers back in key order. */
  private async scatter(operation: "add" | "has", keys: readonly SeenKey[]): Promise<Uint8Array> {
    this.live();
    const fingerprints = FingerprintSet.fingerprintMany(keys);
    const shards = this.stubs.length;
    const members: number[][] = Array.from({ length: shards }, () => []);
    for (let i = 0; i < keys.length; i++) members[shardOf(fingerprints, 16 * i, shards)].push(i);
    const out = new Uint8Array(keys.length);
    await Promise.all(
      members.map(async (indexes, shard) => {
        // Calls to one shard go one after another, so a repeat of a key later in the batch finds it.
        for (let from = 0; from < indexes.length; from += ROW_FINGERPRINTS) {
          const part = indexes.slice(from, from + ROW_FINGERPRINTS);
          const body = new Uint8Array(16 * part.length);
          part.forEach((key, j) => body.set(fingerprints.subarray(16 * key, 16 * key + 16), 16 * j));
          const flags = new Uint8Array(await (await this.call(shard, operation, body)).arrayBuffer());
          part.forEach((key, j) => (out[key] = flags[j]));
        }
      }),
    );
    return out;
  }

  /** One POST to one shard; a refusal becomes its typed error. */
  private async call(shard: number, operation: Operation, body?: Uint8Array): Promise<Response> {
    this.live();
    if (this.stubs.length > 1 && operation !== "claim") {
      this.checked ??= this.call(0, "claim");
      try {
        await this.checked;
      } catch (error) {
        this.checked = undefined;
        throw error;
      }
    }
    const response = await this.stubs[shard].fetch(`https://crawlsieve/${operation}`, {
      method: "POST",
      headers: {
        [SHARDS_HEADER]: String(this.stubs.length),
        [SHARD_HEADER]: String(shard),
        [WINDOW_HEADER]: String(this.window),
      },
      body: body as Uint8Array<ArrayBuffer> | undefined,
    });
    if (!response.ok) throw errorFromWire((await response.json()) as WireError);
    return response;
  }

  private live(): void {
    if (this.closed) throw new DisposedError("the durable-object seen-set");
  }
}
