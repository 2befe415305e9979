// What the Durable Object seen-set's client and object agree on: the requests, the shard a
// fingerprint belongs to, the per-call limit, and the errors that cross the wire as JSON.
import { CrawlsieveError } from "../index.workerd.js";

/** Fingerprints per call and per stored row: 1 MiB of 16-byte fingerprints, half the 2 MB row limit. */
export const ROW_FINGERPRINTS = 65_536;

/** Header naming the shard count the client uses for this set. */
export const SHARDS_HEADER = "x-crawlsieve-shards";
/** Header naming which shard (0 .. shards - 1) this object is. */
export const SHARD_HEADER = "x-crawlsieve-shard";
/** Header giving the set's window in milliseconds (0: keys never expire). */
export const WINDOW_HEADER = "x-crawlsieve-window";

/** Epochs a window is cut into: a key is new again between 1 and 17/16 windows after it was first added. */
export const WINDOW_EPOCHS = 16;

/** The operations an object answers, as the path of a POST ("claim" only checks the shard record). */
export type Operation = "add" | "has" | "size" | "clear" | "claim";

/**
 * The shard of the fingerprint at `offset`: bytes 8..11 (the low half of its high word). The
 * table inside the object picks its partition from the top bits of the high word and its bucket
 * from the top bits of the low word, so sharding on these bits leaves both uniform.
 */
export function shardOf(fingerprints: Uint8Array, offset: number, shards: number): number {
  const word =
    (fingerprints[offset + 8] |
      (fingerprints[offset + 9] << 8) |
      (fingerprints[offset + 10] << 16) |
      (fingerprints[offset + 11] << 24)) >>>
    0;
  return word % shards;
}

/** A set name was opened with a shard count (or shard index) other than the one its objects recorded. */
export class ShardCountError extends CrawlsieveError {
  /** The shard count (or index) the object recorded on first use. */
  readonly recorded: number;
  /** The one the client asked for. */
  readonly requested: number;
  constructor(message: string, recorded: number, requested: number) {
    super("ERR_SHARD_COUNT", message);
    this.recorded = recorded;
    this.requested = requested;
  }
}

/** The JSON body of a refused request: the error's code and message (and the shard numbers). */
export interface WireError {
  readonly code: string;
  readonly message: string;
  readonly recorded?: number;
  readonly requested?: number;
}

/** The typed error a refused request's body stands for. */
export function errorFromWire(wire: WireError): CrawlsieveError {
  if (wire.code === "ERR_SHARD_COUNT")
    return new ShardCountError(wire.message, wire.recorded ?? -1, wire.requested ?? -1);
  return new CrawlsieveError(wire.code, wire.message);
}
