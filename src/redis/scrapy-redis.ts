// Joining a Python Scrapy-Redis fleet. Two layouts are readable and writable from Node:
// - scrapy-redis's RFPDupeFilter: a SET "<spider>:dupefilter" of request fingerprints (40-char
//   hex SHA1 of the sorted-key JSON of method, canonical URL and hex body, scrapy-redis >= 0.8;
//   "scrapy-legacy" for older fleets); SADD answers "new" atomically.
// - ScrapyRedisBloomFilter (Python3WebSpider): one bitmap under the same key, m = 2^bit bits,
//   hash_number hashes with seeds 0..k-1, hash_s(v) = (ret = ret * (s + 1) + ord(c) over the
//   fingerprint's characters) & (m - 1); present when every GETBIT is 1, inserted with SETBIT.
//   Like the Python, test and insert are separate commands (not atomic across processes).
import { InvalidArgumentError } from "../errors.js";
import { requestFingerprint, type FingerprintAlgorithm, type RequestLike } from "../url/fingerprint.js";
import * as check from "../validate.js";
import type { RedisCommander } from "./commander.js";

/** Options shared by both layouts. */
export interface ScrapyRedisOptions {
  /** The Redis key, e.g. "myspider:dupefilter". */
  readonly key: string;
  /** How requests are fingerprinted (default "scrapy-redis"). */
  readonly algorithm?: FingerprintAlgorithm;
}

/** scrapy-redis's SET dupefilter. */
export class ScrapyRedisDupeFilter {
  readonly key: string;
  private readonly algorithm: FingerprintAlgorithm;

  constructor(
    private readonly redis: RedisCommander,
    options: ScrapyRedisOptions,
  ) {
    const opts = check.options<ScrapyRedisOptions>("options", options);
    if (typeof opts.key !== "string" || opts.key === "")
      throw new InvalidArgumentError("key", opts.key, 'the dupefilter key, e.g. "spider:dupefilter"');
    this.key = opts.key;
    this.algorithm = opts.algorithm ?? "scrapy-redis";
  }

  /** True when a request with the same fingerprint was seen by any member of the fleet; records it otherwise. */
  async requestSeen(request: RequestLike): Promise<boolean> {
    return (await this.requestsSeen([request]))[0] === 1;
  }

  /** requestSeen for many requests (pipelined). */
  async requestsSeen(requests: readonly RequestLike[]): Promise<Uint8Array> {
    const replies = await Promise.all(
      requests.map((request) =>
        this.redis.send(["SADD", this.key, requestFingerprint(request, { algorithm: this.algorithm })]),
      ),
    );
    return Uint8Array.from(replies, (added) => (Number(added) === 1 ? 0 : 1));
  }
}

/** The ScrapyRedisBloomFilter bit layout. */
export class ScrapyRedisBloomFilter {
  readonly key: string;
  readonly bit: number;
  readonly hashNumber: number;
  private readonly algorithm: FingerprintAlgorithm;

  constructor(
    private readonly redis: RedisCommander,
    options: ScrapyRedisOptions & { bit?: number; hashNumber?: number },
  ) {
    const opts = check.options<ScrapyRedisOptions & { bit?: number; hashNumber?: number }>("options", options);
    if (typeof opts.key !== "string" || opts.key === "")
      throw new InvalidArgumentError("key", opts.key, "the dupefilter key");
    this.key = opts.key;
    this.bit = opts.bit === undefined ? 30 : check.integerInRange("bit", opts.bit, 1, 32);
    this.hashNumber = opts.hashNumber === undefined ? 6 : check.integerInRange("hashNumber", opts.hashNumber, 1, 64);
    this.algorithm = opts.algorithm ?? "scrapy-redis";
  }

  /** The bit offsets the Python code uses for a fingerprint string. */
  offsets(fingerprint: string): number[] {
    const mask = this.bit === 32 ? 0xffffffff : 2 ** this.bit - 1;
    return Array.from({ length: this.hashNumber }, (_, seed) => {
      // ret = ret * (seed + 1) + code, kept mod 2^32: the final mask keeps only low bits.
      let ret = 0;
      for (let i = 0; i < fingerprint.length; i++) ret = (Math.imul(ret, seed + 1) + fingerprint.charCodeAt(i)) >>> 0;
      return (ret & mask) >>> 0;
    });
  }

  /** True when the fleet's filter has the request; inserts it otherwise. */
  async requestSeen(request: RequestLike): Promise<boolean> {
    const fingerprint = requestFingerprint(request, { algorithm: this.algorithm });
    const offsets = this.offsets(fingerprint);
    const bits = await Promise.all(offsets.map((o) => this.redis.send(["GETBIT", this.key, String(o)])));
    if (bits.every((b) => Number(b) === 1)) return true;
    await Promise.all(offsets.map((o) => this.redis.send(["SETBIT", this.key, String(o), "1"])));
    return false;
  }
}
