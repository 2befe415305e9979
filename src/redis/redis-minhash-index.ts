// Near-duplicate documents found across a fleet: MinHash-LSH (src/near-dup) with its sketches and
// band buckets in Redis. Sketches and band keys are made locally by the WASM kernels; Redis holds,
// per shard, a hash of documents (field: the id's 8-byte MD5 prefix; value: the sketch, then the
// id) and a hash of bands (field: band number and band key; value: the id hashes that claimed it,
// in claim order). A batch is three pipelined steps, one round trip each (one command per shard
// touched): store the sketches (MINHASH_STORE), claim the bands (MINHASH_CLAIM: each band's
// check-and-add is one atomic step returning the ids that claimed it earlier), fetch the sketches
// of those earlier ids that were not in the batch, then verify every candidate by the bottom-k
// estimate (the in-memory index's kernel) and answer the most similar one at or above the
// threshold. A sketch is stored, and acknowledged, before its id enters any band, so whoever
// finds an id in a band finds its sketch.
//
// What is atomic: each band's check-and-add. A document's bands live in different shards (on a
// cluster, on different masters), so the whole add is not: of two near copies added at the same
// moment by two processes, sharing a band (the condition for finding them at all, as in memory),
// the later claimant of that band reports the earlier, so at least one reports the other; both
// may, when each claimed some shared band first. Within one batch, documents claim in batch
// order, so a batch answers as the in-memory index does for documents added one by one.
import { FormatError, InvalidArgumentError } from "../errors.js";
import { md5Many } from "../hash/md5.js";
import { DEFAULT_SKETCH_SIZE, MinHashIndex } from "../near-dup/minhash-index.js";
import { DEFAULT_SHINGLE, maxShingle } from "../near-dup/features.js";
import { checkSketchParams, lshLayout, MAX_BINS, MAX_SKETCH, sketchMany, type SketchParams, type Sketches } from "../near-dup/minhash.js";
import { reaches } from "../near-dup/pair-batch.js";
import * as check from "../validate.js";
import type { RedisCommander } from "./commander.js";
import { adoptDescription } from "./description.js";
import { durabilityOption, durableBatch, type Durability } from "./durability.js";
import { keyPrefix } from "./keys.js";
import { parseMinHashDescription, type MinHashGeometry } from "./minhash-description.js";
import { MINHASH_CLAIM, MINHASH_STORE } from "./scripts.js";
import { shardKeys } from "./sharded-bits.js";
import { SPREAD_SHARDS } from "./spread.js";

/** Options of RedisMinHashIndex.open. */
export interface RedisMinHashIndexOptions {
  /** The shared name: keys are "cs:{name}:mh:..." (spread over a cluster: "cs:{name/p/s}:mh:..."). */
  readonly name: string;
  /** Least estimated Jaccard similarity reported, in (0, 1]; must equal the recorded one. */
  readonly threshold: number;
  /** Words per shingle (default 3), values per sketch (default 512), LSH bands and rows (default from the threshold): recorded by the first process, adopted when omitted. */
  readonly shingle?: number;
  readonly sketchSize?: number;
  readonly bands?: number;
  readonly rows?: number;
  /** "local" (default) or "replicated": a batch is acknowledged only once a replica of every master it wrote to has it (WAIT). */
  readonly durability?: Durability;
}

/** The earlier document most similar to one just added. */
export interface RedisMinHashMatch {
  readonly id: string;
  /** Estimated Jaccard similarity. */
  readonly similarity: number;
}

const BAND_RECORD = 15;
const ID_HASH = 8;

/** A MinHash-LSH index shared through Redis: each add answers the most similar earlier document stored by any process. */
export class RedisMinHashIndex {
  /** Sketch parameters, as recorded in Redis. */
  readonly params: SketchParams;
  /** Least estimated similarity reported. */
  readonly threshold: number;
  /** True when the shards carry their own hash tags, spread over a cluster's masters. */
  readonly spread: boolean;
  private readonly docKeys: readonly string[];
  private readonly bandKeys: readonly string[];
  /** Verifies candidates with the in-memory index's estimate kernel (its sketches, reused per batch). */
  private readonly scratch: MinHashIndex;

  private constructor(private readonly redis: RedisCommander, readonly name: string, geometry: MinHashGeometry, private readonly durability: Durability) {
    this.params = geometry.params;
    this.threshold = geometry.threshold;
    this.spread = geometry.spread;
    this.docKeys = shardKeys(name, geometry.shards, geometry.spread, "mh:d");
    this.bandKeys = shardKeys(name, geometry.shards, geometry.spread, "mh:b");
    const { shingle, k, bands, rows } = geometry.params;
    this.scratch = new MinHashIndex({ threshold: geometry.threshold, shingle, sketchSize: k, bands, rows });
  }

  /** Opens the index `name`, recording its geometry if no process has; a process asking for another threshold or sketch is refused by field (FormatError). */
  static async open(redis: RedisCommander, options: RedisMinHashIndexOptions): Promise<RedisMinHashIndex> {
    const opts = check.options<RedisMinHashIndexOptions>("options", options);
    const prefix = keyPrefix(opts.name as string);
    const threshold = opts.threshold;
    if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1)) throw new InvalidArgumentError("threshold", threshold, "a number in (0, 1]");
    const durability = durabilityOption(opts.durability);
    const layout = lshLayout(threshold);
    const ask = {
      threshold,
      shingle: opts.shingle === undefined ? undefined : check.integerInRange("shingle", opts.shingle, 1, maxShingle()),
      k: opts.sketchSize === undefined ? undefined : check.integerInRange("sketchSize", opts.sketchSize, 8, MAX_SKETCH),
      bands: opts.bands === undefined ? undefined : check.integerInRange("bands", opts.bands, 1, MAX_BINS),
      rows: opts.rows === undefined ? undefined : check.integerInRange("rows", opts.rows, 1, MAX_BINS),
    };
    // Checked in full (bands x rows) before anything is recorded.
    const proposedParams = checkSketchParams({ shingle: ask.shingle ?? DEFAULT_SHINGLE, k: ask.k ?? DEFAULT_SKETCH_SIZE, bands: ask.bands ?? layout.bands, rows: ask.rows ?? layout.rows });
    const spread = redis.cluster === true;
    const proposed = { kind: "minhash", threshold, ...proposedParams, layout: spread ? "spread" : "tagged", shards: spread ? SPREAD_SHARDS : 1 };
    const { value } = await adoptDescription(redis, `${prefix}mh:meta`, proposed, parseMinHashDescription(ask), durability);
    return new RedisMinHashIndex(redis, opts.name as string, value, durability);
  }

  /** Adds one document; the most similar earlier one, or null. */
  async add(id: string, text: string): Promise<RedisMinHashMatch | null> {
    return (await this.addMany([id], [text]))[0];
  }

  /**
   * Stores documents (ids[i] for texts[i], ids distinct) and answers, for each, the most similar
   * document stored earlier by any process (earlier ones of the batch included) whose estimated
   * similarity reaches the threshold, or null. An id is stored once: adding it again stores
   * nothing and never reports itself (a retried batch answers as the first time).
   */
  async addMany(ids: readonly string[], texts: readonly string[]): Promise<(RedisMinHashMatch | null)[]> {
    checkIds(ids);
    if (!Array.isArray(texts)) throw new InvalidArgumentError("texts", texts, "an array of strings");
    if (texts.length !== ids.length) throw new InvalidArgumentError("texts", texts.length, `${ids.length} texts, one per id`);
    const sketches = sketchMany(texts, this.params);
    const hashes = md5Many(ids);
    const docs = Array.from({ length: ids.length }, (_, i) => hashes.subarray(16 * i, 16 * i + ID_HASH));
    const written = this.durability === "replicated" ? [...new Set([...docs.map((h) => this.docKeys[this.shardOfId(h)]), ...this.bandKeys])] : [];
    // Sent again (a WAIT that could not confirm it), every step answers as before: keep the better answer.
    const better = (a: RedisMinHashMatch | null, b: RedisMinHashMatch | null) => (b !== null && (a === null || b.similarity > a.similarity) ? b : a);
    return durableBatch(this.redis, this.durability, written, () => this.run(ids, docs, sketches), (first, again) => first.map((a, i) => better(a, again[i])));
  }

  private async run(ids: readonly string[], docs: readonly Uint8Array[], sketches: Sketches): Promise<(RedisMinHashMatch | null)[]> {
    const { k, bands } = this.params;
    const stride = k + 1;
    const n = ids.length;
    // 1. The sketches, stored before any band names them.
    const records = ids.map((id, i) => Buffer.concat([new Uint8Array(sketches.values.buffer, sketches.values.byteOffset + 4 * stride * i, 4 * stride), Buffer.from(id, "utf8")]));
    const stored = new Uint8Array(n);
    await Promise.all(this.byShard(n, (i) => this.shardOfId(docs[i])).map(async ([shard, members]) => {
      const args = members.flatMap((i) => [docs[i], records[i]]);
      const reply = (await MINHASH_STORE.run(this.redis, [this.docKeys[shard]], args)) as number[];
      members.forEach((i, j) => (stored[i] = Number(reply[j])));
    }));
    // 2. The bands: each claim returns the id hashes that claimed the band before this document.
    const live = Array.from({ length: n }, (_, i) => i).filter((i) => sketches.values[i * stride] !== 0);
    const claims = live.flatMap((i) => Array.from({ length: bands }, (_, b) => ({ i, b, key: sketches.keys[i * bands + b] })));
    // By document and band, so candidates are met in band order, then claim order, whatever order the replies come in.
    const claimed: string[][] = Array.from({ length: n * bands }, () => []);
    await Promise.all(this.byShard(claims.length, (c) => this.shardOfBand(claims[c].b, claims[c].key)).map(async ([shard, members]) => {
      const group = members.map((c) => claims[c]);
      const packed = Buffer.alloc(BAND_RECORD * group.length);
      group.forEach(({ i, b, key }, j) => {
        packed.writeUInt16LE(b, BAND_RECORD * j);
        packed.writeUInt32LE(key, BAND_RECORD * j + 2);
        packed.set(docs[i], BAND_RECORD * j + 6);
        packed[BAND_RECORD * j + 14] = stored[i]; // an id holding another text looks only
      });
      const reply = (await MINHASH_CLAIM.run(this.redis, [this.bandKeys[shard]], [packed])) as Uint8Array[];
      group.forEach(({ i, b }, j) => {
        const before = reply[j];
        for (let at = 0; at + ID_HASH <= before.length; at += ID_HASH) claimed[i * bands + b].push(Buffer.from(before.subarray(at, at + ID_HASH)).toString("latin1"));
      });
    }));
    const earlier = Array.from({ length: n }, (_, i) => claimed.slice(i * bands, (i + 1) * bands).flat());
    // 3. The candidates' sketches: the batch's own from memory, the rest from Redis.
    const inBatch = new Map<string, number>();
    docs.forEach((h, i) => stored[i] === 1 && inBatch.set(Buffer.from(h).toString("latin1"), i));
    const outside = [...new Set(earlier.flat())].filter((h) => !inBatch.has(h));
    const fetched = await this.fetch(outside);
    return this.verify(ids, docs, sketches, earlier, inBatch, fetched);
  }

  /** The stored records of id hashes (latin1 strings), by hash; HMGET per shard, pipelined. */
  private async fetch(hashes: readonly string[]): Promise<Map<string, { id: string; sketch: Uint32Array }>> {
    const out = new Map<string, { id: string; sketch: Uint32Array }>();
    const bytes = hashes.map((h) => Buffer.from(h, "latin1"));
    const sketchBytes = 4 * (this.params.k + 1);
    await Promise.all(this.byShard(hashes.length, (j) => this.shardOfId(bytes[j])).map(async ([shard, members]) => {
      const reply = (await this.redis.send(["HMGET", this.docKeys[shard], ...members.map((j) => bytes[j])])) as (Uint8Array | null)[];
      members.forEach((j, at) => {
        const record = reply[at];
        if (record === null || record === undefined) return; // its master lost it (a failover under "local" durability)
        if (!(record instanceof Uint8Array) || record.length < sketchBytes) throw new FormatError(`Redis key ${this.docKeys[shard]} holds a record of ${record?.length ?? typeof record} bytes where a sketch needs ${sketchBytes}`, "ERR_BAD_PARAMS");
        const sketch = new Uint32Array(this.params.k + 1);
        new Uint8Array(sketch.buffer).set(record.subarray(0, sketchBytes));
        if (sketch[0] > this.params.k) throw new FormatError(`Redis key ${this.docKeys[shard]} holds a sketch claiming ${sketch[0]} values where at most ${this.params.k} fit`, "ERR_BAD_PARAMS");
        out.set(hashes[j], { id: Buffer.from(record.subarray(sketchBytes)).toString("utf8"), sketch });
      });
    }));
    return out;
  }

  /** Each document's best candidate at or above the threshold, estimated in WASM; of equal estimates, the first met (by band, then claim order). */
  private verify(ids: readonly string[], docs: readonly Uint8Array[], sketches: Sketches, earlier: readonly string[][], inBatch: ReadonlyMap<string, number>, fetched: ReadonlyMap<string, { id: string; sketch: Uint32Array }>): (RedisMinHashMatch | null)[] {
    const { k, bands } = this.params;
    const stride = k + 1;
    const n = ids.length;
    const others = [...fetched.keys()];
    const count = n + others.length;
    // Slot j < n: the batch's document j; slot n + m: fetched sketch m. Band keys are the slot
    // numbers, so no two scratch documents share a bucket (the scratch index only estimates).
    const values = new Uint32Array(count * stride);
    values.set(sketches.values.subarray(0, n * stride));
    others.forEach((h, m) => values.set(fetched.get(h)!.sketch, (n + m) * stride));
    const keys = new Uint32Array(count * bands);
    for (let j = 0; j < count; j++) keys.fill(j, j * bands, (j + 1) * bands);
    const slots = Uint32Array.from({ length: count }, (_, j) => j);
    const slotOf = new Map<string, number>(inBatch);
    others.forEach((h, m) => slotOf.set(h, n + m));
    const pairs: [number, number][] = [];
    const pairOf: number[] = [];
    const self = docs.map((h) => Buffer.from(h).toString("latin1"));
    earlier.forEach((list, i) => {
      for (const h of new Set(list)) {
        const slot = slotOf.get(h);
        if (slot === undefined || h === self[i]) continue;
        pairs.push([i, slot]);
        pairOf.push(i);
      }
    });
    this.scratch.addSketches(slots, { params: this.params, count, values, keys });
    try {
      const estimates = this.scratch.similarityMany(pairs);
      const out: (RedisMinHashMatch | null)[] = new Array(n).fill(null);
      pairs.forEach(([i, slot], p) => {
        const similarity = estimates[p];
        if (!reaches(similarity, this.threshold)) return;
        if (out[i] !== null && out[i]!.similarity >= similarity) return;
        out[i] = { id: slot < n ? ids[slot] : fetched.get(others[slot - n])!.id, similarity };
      });
      return out;
    } finally {
      for (let j = 0; j < count; j++) this.scratch.remove(j);
    }
  }

  /** Indexes 0..n-1 grouped by shard. */
  private byShard(n: number, shardOf: (i: number) => number): [number, number[]][] {
    const groups = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      const shard = shardOf(i);
      const group = groups.get(shard);
      if (group === undefined) groups.set(shard, [i]);
      else group.push(i);
    }
    return [...groups];
  }

  private shardOfId(hash: Uint8Array): number {
    return ((hash[6] << 8) | hash[7]) % this.docKeys.length;
  }

  private shardOfBand(band: number, key: number): number {
    // Band keys are hashes already; the band number is mixed in so one key value spreads over bands.
    const h = Math.imul(key ^ Math.imul(band + 1, 0x9e3779b9), 0x85ebca6b) >>> 0;
    return ((h ^ (h >>> 13)) >>> 0) % this.bandKeys.length;
  }

  /** Releases the verifier's WASM memory (Redis keeps the index). */
  dispose(): void {
    this.scratch.dispose();
  }
}

function checkIds(ids: readonly string[]): void {
  if (!Array.isArray(ids)) throw new InvalidArgumentError("ids", ids, "an array of strings");
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (typeof id !== "string" || id.length === 0) throw new InvalidArgumentError(`ids[${i}]`, id, "a non-empty string");
    if (seen.has(id)) throw new InvalidArgumentError(`ids[${i}]`, id, "an id not given before in this batch");
    seen.add(id);
  });
}
