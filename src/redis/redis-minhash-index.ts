// Near-duplicate documents found across a fleet: MinHash-LSH (src/near-dup) with its sketches and
// band buckets in Redis, kept as MinHashIndex.cluster keeps them in memory: a bucket holds the
// representatives that fell in it (documents that matched nobody), at most a recorded number of
// them, never every copy, so copies of one page cost one id a bucket and every script call the
// same whatever was stored. Sketches and band keys are made locally by the WASM kernels; Redis
// holds, per shard, a hash of documents (field: the id's 8-byte MD5 prefix; value: the sketch,
// then the id; field and "a": the answer given) and a hash of bands (field: band number and band
// key; value: its representatives' id hashes). A batch: store the sketches (HSETNX), read
// the buckets (HMGET) and the sketches of their representatives, decide in batch order which
// documents answer one and which become representatives (minhash-representatives.ts), append
// those (MINHASH_APPEND: checked against what the bucket gained since it was read, whose ids are
// verified too), record the answers. Each step is pipelined; the one script reads a bucket's few
// ids a record, so no call holds Redis longer as the index grows. A sketch is stored, and
// acknowledged, before its id enters any band, so whoever finds an id finds its sketch.
//
// What is atomic: each bucket's check-and-append. A document's bands live in different shards (on
// a cluster, on different masters), so the whole add is not: of two near copies added at the same
// moment by two processes, sharing a band, the later to append there meets the earlier's id
// and reports it, so at least one reports the other; both may, when each appended some shared
// band first (both then stay representatives). Within one batch, documents are decided in batch
// order, so a batch answers as MinHashIndex.cluster does for the same documents in that order.
import { FormatError, InvalidArgumentError } from "../errors.js";
import { md5Many } from "../hash/md5.js";
import { DEFAULT_SKETCH_SIZE, MinHashIndex } from "../near-dup/minhash-index.js";
import { DEFAULT_SHINGLE, maxShingle } from "../near-dup/features.js";
import {
  checkSketchParams,
  lshLayout,
  MAX_BINS,
  MAX_SKETCH,
  sketchMany,
  type SketchParams,
  type Sketches,
} from "../near-dup/minhash.js";
import * as check from "../validate.js";
import type { RedisCommander } from "./commander.js";
import { adoptDescription } from "./description.js";
import { durabilityOption, durableBatch, type Durability } from "./durability.js";
import { keyPrefix } from "./keys.js";
import { MINHASH_VERSION, parseMinHashDescription, type MinHashGeometry } from "./minhash-description.js";
import { bestOf, chooseRepresentatives, type Append } from "./minhash-representatives.js";
import { MINHASH_APPEND } from "./scripts.js";
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
/** Representatives a band bucket keeps, recorded by the first process: candidates a document verifies are at most bands x this. */
const REPRESENTATIVES = 16;

/** A MinHash-LSH index shared through Redis: each add answers the most similar earlier document stored by any process. */
export class RedisMinHashIndex {
  /** Sketch parameters, as recorded in Redis. */
  readonly params: SketchParams;
  /** Least estimated similarity reported. */
  readonly threshold: number;
  /** True when the shards carry their own hash tags, spread over a cluster's masters. */
  readonly spread: boolean;
  /** Most representatives a band bucket keeps, as recorded in Redis. */
  readonly representatives: number;
  private readonly docKeys: readonly string[];
  private readonly bandKeys: readonly string[];
  /** Verifies candidates with the in-memory index's estimate kernel (its sketches, reused per batch). */
  private readonly scratch: MinHashIndex;

  private constructor(
    private readonly redis: RedisCommander,
    readonly name: string,
    geometry: MinHashGeometry,
    private readonly durability: Durability,
  ) {
    this.params = geometry.params;
    this.threshold = geometry.threshold;
    this.spread = geometry.spread;
    this.representatives = geometry.representatives;
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
    if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1))
      throw new InvalidArgumentError("threshold", threshold, "a number in (0, 1]");
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
    const proposedParams = checkSketchParams({
      shingle: ask.shingle ?? DEFAULT_SHINGLE,
      k: ask.k ?? DEFAULT_SKETCH_SIZE,
      bands: ask.bands ?? layout.bands,
      rows: ask.rows ?? layout.rows,
    });
    const spread = redis.cluster === true;
    const proposed = {
      kind: "minhash",
      threshold,
      ...proposedParams,
      layout: spread ? "spread" : "tagged",
      shards: spread ? SPREAD_SHARDS : 1,
      representatives: REPRESENTATIVES,
    };
    const { value } = await adoptDescription(
      redis,
      `${prefix}mh:meta`,
      proposed,
      parseMinHashDescription(ask),
      durability,
      MINHASH_VERSION,
    );
    return new RedisMinHashIndex(redis, opts.name as string, value, durability);
  }

  /** Adds one document; the most similar earlier one, or null. */
  async add(id: string, text: string): Promise<RedisMinHashMatch | null> {
    return (await this.addMany([id], [text]))[0];
  }

  /**
   * Stores documents (ids[i] for texts[i], ids distinct) and answers, for each, the most similar
   * earlier document (stored by any process, earlier ones of the batch included) that it shares
   * a band with and whose estimated similarity reaches the threshold, or null. Only documents
   * answered null are candidates (representatives, at most `representatives` a band bucket), as
   * in MinHashIndex.cluster: n copies of one page all answer the first. An id is stored once:
   * adding it again stores nothing and never reports itself (a retried batch answers as the first
   * time, its answers being recorded).
   */
  async addMany(ids: readonly string[], texts: readonly string[]): Promise<(RedisMinHashMatch | null)[]> {
    checkIds(ids);
    if (!Array.isArray(texts)) throw new InvalidArgumentError("texts", texts, "an array of strings");
    if (texts.length !== ids.length)
      throw new InvalidArgumentError("texts", texts.length, `${ids.length} texts, one per id`);
    const sketches = sketchMany(texts, this.params);
    const hashes = md5Many(ids);
    const docs = Array.from({ length: ids.length }, (_, i) => hashes.subarray(16 * i, 16 * i + ID_HASH));
    const written =
      this.durability === "replicated"
        ? [...new Set([...docs.map((h) => this.docKeys[this.shardOfId(h)]), ...this.bandKeys])]
        : [];
    // Sent again (a WAIT that could not confirm it), every step answers as before: keep the better answer.
    const better = (a: RedisMinHashMatch | null, b: RedisMinHashMatch | null) =>
      b !== null && (a === null || b.similarity > a.similarity) ? b : a;
    return durableBatch(
      this.redis,
      this.durability,
      written,
      () => this.run(ids, docs, sketches),
      (first, again) => first.map((a, i) => better(a, again[i])),
    );
  }

  private async run(
    ids: readonly string[],
    docs: readonly Uint8Array[],
    sketches: Sketches,
  ): Promise<(RedisMinHashMatch | null)[]> {
    const { k, bands } = this.params;
    const stride = k + 1;
    const n = ids.length;
    // 1. The sketches, stored before any band names them; a document answered before answers so again.
    const stored = await this.store(ids, docs, sketches);
    const out: (RedisMinHashMatch | null)[] = stored.map((s) => (typeof s === "object" ? s.answer : null));
    const self = docs.map((h) => Buffer.from(h).toString("latin1"));
    const own = (i: number) => stored[i] === STORED || stored[i] === AGAIN;
    const pending = Array.from({ length: n }, (_, i) => i).filter(
      (i) => typeof stored[i] !== "object" && sketches.values[i * stride] !== 0,
    );
    if (pending.length === 0) return out;
    // 2. The representatives of every band bucket the pending documents fall in (HMGET), and their sketches.
    const fields = Array.from({ length: n * bands }, (_, at) => bandField(at % bands, sketches.keys[at]));
    const read = await this.readBuckets([...new Set(pending.flatMap((i) => fields.slice(i * bands, (i + 1) * bands)))]);
    const inBatch = new Map<string, number>();
    self.forEach((h, i) => own(i) && inBatch.set(h, i));
    const fetched = await this.fetch([...new Set([...read.values()].flat())].filter((h) => !inBatch.has(h)));
    // 3. In batch order: an answer among the representatives, or a representative itself.
    const first = this.estimator(sketches, n, inBatch, fetched);
    const chosen = (() => {
      try {
        return chooseRepresentatives({
          bands,
          fields,
          self,
          pending,
          canLead: own,
          read,
          room: this.representatives,
          threshold: this.threshold,
          estimate: first.estimate,
        });
      } finally {
        first.release();
      }
    })();
    // 4. The appends, each checked against what the bucket gained since it was read: others' representatives met there are verified too.
    const since = await this.append(chosen.appends, fields, docs);
    const later = new Map<number, string[]>();
    since.forEach((hashes, i) =>
      later.set(
        i,
        [...new Set(hashes)].filter((h) => !inBatch.has(h)),
      ),
    );
    const more = await this.fetch([...new Set([...later.values()].flat())]);
    const second = this.estimator(sketches, n, inBatch, more);
    try {
      for (const [i, hashes] of later)
        if (hashes.length > 0) chosen.best[i] ??= bestOf(hashes, second.estimate(i, hashes), this.threshold);
    } finally {
      second.release();
    }
    for (const i of pending) {
      const found = chosen.best[i];
      if (found !== null)
        out[i] = {
          id: inBatch.has(found.hash)
            ? ids[inBatch.get(found.hash)!]
            : (fetched.get(found.hash) ?? more.get(found.hash))!.id,
          similarity: found.similarity,
        };
    }
    // 5. Each answer recorded with its document, so a batch sent again answers as the first time.
    await this.recordAnswers(pending.filter(own), docs, out);
    return out;
  }

  /**
   * Stores the records (HSETNX each, pipelined: an id keeps its first record, so a batch sent
   * again stores nothing twice); per document its status, or the answer recorded for it before.
   * Plain commands, not a script: a batch's sketches never hold Redis as one call.
   */
  private async store(ids: readonly string[], docs: readonly Uint8Array[], sketches: Sketches): Promise<Stored[]> {
    const stride = this.params.k + 1;
    const records = ids.map((id, i) =>
      Buffer.concat([
        new Uint8Array(sketches.values.buffer, sketches.values.byteOffset + 4 * stride * i, 4 * stride),
        Buffer.from(id, "utf8"),
      ]),
    );
    const key = (i: number) => this.docKeys[this.shardOfId(docs[i])];
    const fresh = await Promise.all(ids.map((_, i) => this.redis.send(["HSETNX", key(i), docs[i], records[i]])));
    return Promise.all(
      ids.map(async (_, i): Promise<Stored> => {
        if (Number(fresh[i]) === 1) return STORED;
        const [record, answer] = (await this.redis.send([
          "HMGET",
          key(i),
          docs[i],
          Buffer.concat([docs[i], ANSWER]),
        ])) as (Uint8Array | null)[];
        if (record === null || record === undefined || !Buffer.from(record).equals(records[i])) return OTHER;
        return answer === null || answer === undefined ? AGAIN : { answer: answerOf(answer, key(i)) };
      }),
    );
  }

  /** The representatives each band field holds (HMGET per shard), as id hashes in order. */
  private async readBuckets(fields: readonly string[]): Promise<Map<string, string[]>> {
    const read = new Map<string, string[]>();
    await Promise.all(
      this.byShard(fields.length, (j) => this.shardOfField(fields[j])).map(async ([shard, members]) => {
        const reply = (await this.redis.send([
          "HMGET",
          this.bandKeys[shard],
          ...members.map((j) => Buffer.from(fields[j], "latin1")),
        ])) as (Uint8Array | null)[];
        members.forEach((j, at) => read.set(fields[j], idHashes(reply[at])));
      }),
    );
    return read;
  }

  /** Appends the new representatives (MINHASH_APPEND per shard); per document, the ids its buckets gained since they were read. */
  private async append(
    appends: readonly Append[],
    fields: readonly string[],
    docs: readonly Uint8Array[],
  ): Promise<Map<number, string[]>> {
    const { bands } = this.params;
    const since = new Map<number, string[]>();
    await Promise.all(
      this.byShard(appends.length, (c) => this.shardOfField(fields[appends[c].doc * bands + appends[c].band])).map(
        async ([shard, members]) => {
          const packed = Buffer.alloc(BAND_RECORD * members.length);
          members.forEach((c, j) => {
            const { doc, band, read } = appends[c];
            packed.write(fields[doc * bands + band], BAND_RECORD * j, "latin1");
            packed.set(docs[doc], BAND_RECORD * j + 6);
            packed[BAND_RECORD * j + 14] = read;
          });
          const reply = (await MINHASH_APPEND.run(
            this.redis,
            [this.bandKeys[shard]],
            [packed, String(this.representatives)],
          )) as Uint8Array[];
          members.forEach((c, j) =>
            since.set(appends[c].doc, [...(since.get(appends[c].doc) ?? []), ...idHashes(reply[j])]),
          );
        },
      ),
    );
    return since;
  }

  /** Records each document's answer beside its record (field: id hash and "a"; value: "" or the similarity, a newline, the id). */
  private async recordAnswers(
    which: readonly number[],
    docs: readonly Uint8Array[],
    answers: readonly (RedisMinHashMatch | null)[],
  ): Promise<void> {
    await Promise.all(
      this.byShard(which.length, (j) => this.shardOfId(docs[which[j]])).map(async ([shard, members]) => {
        const pairs = members.flatMap((j) => {
          const answer = answers[which[j]];
          return [Buffer.concat([docs[which[j]], ANSWER]), answer === null ? "" : `${answer.similarity}\n${answer.id}`];
        });
        await this.redis.send(["HSET", this.docKeys[shard], ...pairs]);
      }),
    );
  }

  /** The stored records of id hashes (latin1 strings), by hash; HMGET per shard, pipelined. */
  private async fetch(hashes: readonly string[]): Promise<Map<string, { id: string; sketch: Uint32Array }>> {
    const out = new Map<string, { id: string; sketch: Uint32Array }>();
    const bytes = hashes.map((h) => Buffer.from(h, "latin1"));
    const sketchBytes = 4 * (this.params.k + 1);
    await Promise.all(
      this.byShard(hashes.length, (j) => this.shardOfId(bytes[j])).map(async ([shard, members]) => {
        const reply = (await this.redis.send([
          "HMGET",
          this.docKeys[shard],
          ...members.map((j) => bytes[j]),
        ])) as (Uint8Array | null)[];
        members.forEach((j, at) => {
          const record = reply[at];
          if (record === null || record === undefined) return; // its master lost it (a failover under "local" durability)
          if (!(record instanceof Uint8Array) || record.length < sketchBytes)
            throw new FormatError(
              `Redis key ${this.docKeys[shard]} holds a record of ${record?.length ?? typeof record} bytes where a sketch needs ${sketchBytes}`,
              "ERR_BAD_PARAMS",
            );
          const sketch = new Uint32Array(this.params.k + 1);
          new Uint8Array(sketch.buffer).set(record.subarray(0, sketchBytes));
          if (sketch[0] > this.params.k)
            throw new FormatError(
              `Redis key ${this.docKeys[shard]} holds a sketch claiming ${sketch[0]} values where at most ${this.params.k} fit`,
              "ERR_BAD_PARAMS",
            );
          out.set(hashes[j], { id: Buffer.from(record.subarray(sketchBytes)).toString("utf8"), sketch });
        });
      }),
    );
    return out;
  }

  /**
   * Estimates of the batch's documents against id hashes, in WASM: slot j < n is the batch's
   * document j, slot n + m fetched sketch m. Band keys are the slot numbers, so no two scratch
   * documents share a bucket (the scratch index only estimates). `release` frees the slots.
   */
  private estimator(
    sketches: Sketches,
    n: number,
    inBatch: ReadonlyMap<string, number>,
    fetched: ReadonlyMap<string, { sketch: Uint32Array }>,
  ): { estimate: (doc: number, hashes: readonly string[]) => Float64Array; release: () => void } {
    const { k, bands } = this.params;
    const stride = k + 1;
    const others = [...fetched.keys()];
    const count = n + others.length;
    const values = new Uint32Array(count * stride);
    values.set(sketches.values.subarray(0, n * stride));
    others.forEach((h, m) => values.set(fetched.get(h)!.sketch, (n + m) * stride));
    const keys = new Uint32Array(count * bands);
    for (let j = 0; j < count; j++) keys.fill(j, j * bands, (j + 1) * bands);
    const slotOf = new Map<string, number>(inBatch);
    others.forEach((h, m) => slotOf.set(h, n + m));
    this.scratch.addSketches(
      Uint32Array.from({ length: count }, (_, j) => j),
      { params: this.params, count, values, keys },
    );
    return {
      // An unknown hash (its record lost) pairs with no stored slot: NaN, never an answer.
      estimate: (doc, hashes) => this.scratch.similarityMany(hashes.map((h) => [doc, slotOf.get(h) ?? count])),
      release: () => {
        for (let j = 0; j < count; j++) this.scratch.remove(j);
      },
    };
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

  private shardOfField(field: string): number {
    // Band keys are hashes already; the band number is mixed in so one key value spreads over bands.
    const band = field.charCodeAt(0) | (field.charCodeAt(1) << 8);
    const key =
      (field.charCodeAt(2) | (field.charCodeAt(3) << 8) | (field.charCodeAt(4) << 16) | (field.charCodeAt(5) << 24)) >>>
      0;
    const h = Math.imul(key ^ Math.imul(band + 1, 0x9e3779b9), 0x85ebca6b) >>> 0;
    return ((h ^ (h >>> 13)) >>> 0) % this.bandKeys.length;
  }

  /** Releases the verifier's WASM memory (Redis keeps the index). */
  dispose(): void {
    this.scratch.dispose();
  }
}

/** A document's store status: stored now, its id holding another text, stored before without an answer, or its recorded answer. */
type Stored = typeof STORED | typeof OTHER | typeof AGAIN | { readonly answer: RedisMinHashMatch | null };
const STORED = 1;
const OTHER = 0;
const AGAIN = 2;
/** Suffix of a document's answer field. */
const ANSWER = Buffer.from("a");

/** A recorded answer ("" or the similarity, a newline, the id) parsed. */
function answerOf(bytes: Uint8Array, key: string): RedisMinHashMatch | null {
  const text = Buffer.from(bytes).toString("utf8");
  if (text.length === 0) return null;
  const cut = text.indexOf("\n");
  const similarity = Number(text.slice(0, cut));
  if (cut < 0 || !(similarity >= 0 && similarity <= 1))
    throw new FormatError(
      `Redis key ${key} holds a recorded answer ${JSON.stringify(text)} that is not a similarity and an id`,
      "ERR_BAD_PARAMS",
    );
  return { id: text.slice(cut + 1), similarity };
}

/** A band field: the band number (u16 LE) and its key (u32 LE), as latin1. */
function bandField(band: number, key: number): string {
  const bytes = Buffer.alloc(6);
  bytes.writeUInt16LE(band, 0);
  bytes.writeUInt32LE(key, 2);
  return bytes.toString("latin1");
}

/** A bucket's value (8-byte id hashes) as latin1 hashes; an absent field holds none. */
function idHashes(value: Uint8Array | null | undefined): string[] {
  const out: string[] = [];
  if (value === null || value === undefined) return out;
  for (let at = 0; at + ID_HASH <= value.length; at += ID_HASH)
    out.push(Buffer.from(value.subarray(at, at + ID_HASH)).toString("latin1"));
  return out;
}

function checkIds(ids: readonly string[]): void {
  if (!Array.isArray(ids)) throw new InvalidArgumentError("ids", ids, "an array of strings");
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (typeof id !== "string" || id.length === 0)
      throw new InvalidArgumentError(`ids[${i}]`, id, "a non-empty string");
    if (seen.has(id)) throw new InvalidArgumentError(`ids[${i}]`, id, "an id not given before in this batch");
    seen.add(id);
  });
}
