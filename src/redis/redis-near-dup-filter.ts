// The near-duplicate filter of a fleet: NearDupFilter's bands as RedisBlockedBloomFilters (one a
// band, each sharded and, on a cluster, spread over the masters), plus one more blocked filter of
// whole signatures (all of a text's band keys) that decides which of concurrent callers with the
// same text records it. A text's bands live on different shards, so no one script sees them all:
// were every caller to set its bands at once, two processes adding the same page could each win
// some band first and both report a near-duplicate. So a batch takes two round trips: the
// signatures are checked and set first (one script a shard: exactly one caller sees a signature
// new), and only the texts new there go on to their bands, each band filter a script call a shard,
// pipelined. A text seen before as a whole is a near-duplicate at once (its bands were set by the
// caller that won it). Band keys and bit positions are made locally by the same kernels as the
// in-memory filter, so the band shards hold NearDupFilter's bits for the same adds: exportBytes()
// is a NearDupFilter (format v1, kind 13).
import { InvalidArgumentError } from "../errors.js";
import {
  filterSketchParams,
  NearDupFilter,
  type BandKeys,
  type NearDupFilterOptions,
} from "../near-dup/near-dup-filter.js";
import { wideBandKeys, type SketchParams } from "../near-dup/minhash.js";
import { optimalNearDupFilter, type NearDupSize } from "../sizing/near-dup.js";
import { DEFAULT_SHINGLE, maxShingle } from "../near-dup/features.js";
import { MAX_BINS } from "../sizing/lsh.js";
import * as check from "../validate.js";
import type { RedisCommander } from "./commander.js";
import { adoptDescription, type Fields } from "./description.js";
import { durabilityOption, type Durability } from "./durability.js";
import { keyPrefix } from "./keys.js";
import { RedisBlockedBloomFilter } from "./redis-blocked-bloom-filter.js";

/** Options of RedisNearDupFilter.open: NearDupFilter's plan (recorded by the first process, adopted after; another threshold, shingle or layout is refused), and where it lives. */
export interface RedisNearDupFilterOptions extends NearDupFilterOptions {
  /** The shared name: keys are "cs:{name}:nd:meta" and those of its filters "cs:{name/nd/band/B}:...". */
  readonly name: string;
  /** Largest shard key of each filter in bytes (default 32 MiB). */
  readonly maxShardBytes?: number;
  /** "local" (default) or "replicated": a batch is acknowledged only once a replica of every master it wrote to has it (WAIT). */
  readonly durability?: Durability;
}

/** What the description holds. */
interface Recorded {
  readonly plan: NearDupSize;
  readonly shingle: number;
}

/** A near-duplicate yes/no test shared through Redis or a Redis Cluster: each text is reported new to exactly one caller. */
export class RedisNearDupFilter {
  /** The recorded plan: bands, rows, each band filter's size, bytes a text. */
  readonly plan: NearDupSize;
  /** What band keys are made with, as the in-memory filter makes them. */
  private readonly params: SketchParams;

  private constructor(
    readonly name: string,
    recorded: Recorded,
    /** The filter of whole signatures, then one filter a band. */
    private readonly signatures: RedisBlockedBloomFilter,
    private readonly bandFilters: readonly RedisBlockedBloomFilter[],
  ) {
    this.plan = recorded.plan;
    this.params = filterSketchParams(recorded.shingle, recorded.plan);
  }

  /** Opens the filter `name`, recording its plan if no process has; a process asking for another threshold or layout is refused by field (FormatError). */
  static async open(redis: RedisCommander, options: RedisNearDupFilterOptions): Promise<RedisNearDupFilter> {
    const opts = check.options<RedisNearDupFilterOptions>("options", options);
    const name = opts.name;
    if (typeof name !== "string" || name === "") throw new InvalidArgumentError("name", name, "a non-empty string");
    const durability = durabilityOption(opts.durability);
    const asked = optimalNearDupFilter({
      items: opts.items as number,
      fpRate: opts.fpRate as number,
      threshold: opts.threshold ?? 0.8,
      bands: opts.bands,
      rows: opts.rows,
    });
    const shingle =
      opts.shingle === undefined ? DEFAULT_SHINGLE : check.integerInRange("shingle", opts.shingle, 1, maxShingle());
    const proposed = {
      kind: "near-dup-filter",
      threshold: asked.threshold,
      shingle,
      bands: asked.bands,
      rows: asked.rows,
      items: asked.items,
      fpRate: asked.fpRate,
    };
    const { value } = await adoptDescription(
      redis,
      `${keyPrefix(name)}nd:meta`,
      proposed,
      parseNearDupDescription(opts),
      durability,
    );
    const { plan } = value;
    const open = (part: string) =>
      RedisBlockedBloomFilter.open(redis, {
        name: `${name}/nd/${part}`,
        items: plan.items,
        fpRate: plan.bandFpRate,
        maxShardBytes: opts.maxShardBytes,
        durability,
      });
    const [signatures, ...bandFilters] = await Promise.all([
      open("signatures"),
      ...Array.from({ length: plan.bands }, (_, b) => open(`band/${b}`)),
    ]);
    return new RedisNearDupFilter(name, value, signatures, bandFilters);
  }

  /** LSH bands (one filter each). */
  get bands(): number {
    return this.plan.bands;
  }

  /** Rows a band. */
  get rows(): number {
    return this.plan.rows;
  }

  /**
   * Records every text and answers, per text, 1 when a near-duplicate was added before it by any
   * process (earlier texts of the batch included). Of concurrent callers adding the same text,
   * exactly one is answered 0. Two round trips: signatures, then bands.
   */
  async addMany(texts: readonly string[]): Promise<Uint8Array> {
    const keys = this.bandKeys(texts);
    const out = new Uint8Array(keys.count);
    const texted = withWords(keys);
    const fresh = await this.signatures.addMany(texted.map((i) => signature(keys, i, this.plan.bands)));
    const winners = texted.filter((i, j) => {
      if (fresh[j] === 1) return true;
      out[i] = 1; // the whole text was added before: its bands are set
      return false;
    });
    const answers = await Promise.all(
      this.bandFilters.map((filter, b) => filter.addMany(winners.map((i) => bandKey(keys, i, b, this.plan.bands)))),
    );
    for (const flags of answers) winners.forEach((i, j) => (out[i] |= flags[j] === 0 ? 1 : 0));
    return out;
  }

  /** Answers as addMany without recording anything: 1 when a near-duplicate may have been added by any process. One round trip. */
  async hasMany(texts: readonly string[]): Promise<Uint8Array> {
    const keys = this.bandKeys(texts);
    const out = new Uint8Array(keys.count);
    const texted = withWords(keys);
    const answers = await Promise.all([
      this.signatures.hasMany(texted.map((i) => signature(keys, i, this.plan.bands))),
      ...this.bandFilters.map((filter, b) => filter.hasMany(texted.map((i) => bandKey(keys, i, b, this.plan.bands)))),
    ]);
    for (const flags of answers) texted.forEach((i, j) => (out[i] |= flags[j]));
    return out;
  }

  /** Adds one text; true when a near-duplicate was added before by any process. */
  async add(text: string): Promise<boolean> {
    return (await this.addMany([text]))[0] === 1;
  }

  /** True when a near-duplicate may have been added by any process. */
  async has(text: string): Promise<boolean> {
    return (await this.hasMany([text]))[0] === 1;
  }

  /** The band keys of texts, as NearDupFilter.bandKeys makes them for the same plan. */
  bandKeys(texts: readonly string[]): BandKeys {
    return { count: texts.length, ...wideBandKeys(texts, this.params) };
  }

  /**
   * The bands as a serialized NearDupFilter (format v1, kind 13), read shard by shard: the bits an
   * in-memory filter holds after the same adds. Its count is 0 (Redis keeps no count of texts).
   */
  async exportBytes(): Promise<Uint8Array> {
    const parts = await Promise.all(this.bandFilters.map((filter) => filter.exportBytes()));
    const { items, fpRate, threshold, bands, rows } = this.plan;
    const filter = new NearDupFilter(
      { items, fpRate, threshold, shingle: this.params.shingle, bands, rows },
      { parts, added: 0 },
    );
    try {
      return filter.serialize();
    } finally {
      filter.dispose();
    }
  }
}

/** The texts that have a word (the others are near-duplicates of nothing, and never recorded). */
function withWords(keys: BandKeys): number[] {
  const out: number[] = [];
  for (let i = 0; i < keys.count; i++) if (keys.empty[i] === 0) out.push(i);
  return out;
}

/** Text i's key in band b: 8 bytes. */
function bandKey(keys: BandKeys, i: number, b: number, bands: number): Uint8Array {
  return new Uint8Array(keys.keys.buffer, keys.keys.byteOffset + 8 * (i * bands + b), 8);
}

/** Text i's whole signature: all its band keys, 8 bytes a band. */
function signature(keys: BandKeys, i: number, bands: number): Uint8Array {
  return new Uint8Array(keys.keys.buffer, keys.keys.byteOffset + 8 * i * bands, 8 * bands);
}

/** Parses a description and holds it against what this process asked. */
function parseNearDupDescription(ask: Partial<RedisNearDupFilterOptions>) {
  return (fields: Fields): Recorded => {
    fields.kind("near-dup-filter");
    const threshold = fields.json.threshold;
    if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1))
      fields.fail("threshold", "a number in (0, 1]");
    const shingle = fields.integer("shingle", 1, maxShingle());
    const bands = fields.integer("bands", 1, MAX_BINS);
    const rows = fields.integer("rows", 1, Math.floor(MAX_BINS / bands));
    const items = fields.integer("items", 1, Number.MAX_SAFE_INTEGER);
    const fpRate = fields.json.fpRate;
    if (typeof fpRate !== "number" || !(fpRate > 0 && fpRate < 1))
      fields.fail("fpRate", "a number strictly between 0 and 1");
    if (threshold !== (ask.threshold ?? 0.8))
      fields.fail(
        "threshold",
        `${ask.threshold ?? 0.8}, as this process asked (the filter was created with another threshold)`,
      );
    for (const [name, value] of [
      ["shingle", shingle],
      ["bands", bands],
      ["rows", rows],
    ] as const) {
      if (ask[name] !== undefined && ask[name] !== value)
        fields.fail(name, `${ask[name]}, as this process asked (the filter was created with other band keys)`);
    }
    return {
      plan: optimalNearDupFilter({ items, fpRate: fpRate as number, threshold: threshold as number, bands, rows }),
      shingle,
    };
  };
}
