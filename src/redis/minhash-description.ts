// The recorded geometry of a RedisMinHashIndex: threshold and sketch parameters (what a stored
// sketch and band key mean) and where its shards live. Written by the first process to open the
// name; every later one adopts what it left open and is refused, by field, where it asked for
// something else, since sketches made with other parameters cannot be compared. Version 2: a
// band bucket holds at most `representatives` ids that matched nobody, and every document its
// answer; version 1 (every claimant in its bands, no answers) is refused, not misread.
import { MAX_BINS, MAX_SKETCH, type SketchParams } from "../near-dup/minhash.js";
import { maxShingle } from "../near-dup/features.js";
import type { Fields } from "./description.js";

/** The description version of the layout written now (version 1 kept every copy in its bands). */
export const MINHASH_VERSION = 2;

/** Most representative ids a band bucket keeps (one byte in a claim record counts them). */
export const MAX_REPRESENTATIVES = 255;

/** What one process asks for: the threshold, and each sketch parameter it gave (undefined: adopt the record's). */
export interface MinHashAsk {
  readonly threshold: number;
  readonly shingle?: number;
  readonly k?: number;
  readonly bands?: number;
  readonly rows?: number;
}

/** A checked description. */
export interface MinHashGeometry {
  readonly threshold: number;
  readonly params: SketchParams;
  /** True when each shard carries its own hash tag (spread over a cluster's masters). */
  readonly spread: boolean;
  readonly shards: number;
  /** Most representatives a band bucket keeps. */
  readonly representatives: number;
}

/** Parses a description and holds it against what this process asked. */
export function parseMinHashDescription(ask: MinHashAsk) {
  return (fields: Fields): MinHashGeometry => {
    fields.kind("minhash");
    const threshold = fields.json.threshold;
    if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1))
      fields.fail("threshold", "a number in (0, 1]");
    const params = {
      shingle: fields.integer("shingle", 1, maxShingle()),
      k: fields.integer("k", 8, MAX_SKETCH),
      bands: fields.integer("bands", 1, MAX_BINS),
      rows: fields.integer("rows", 1, MAX_BINS),
    };
    if (params.bands * params.rows > MAX_BINS)
      fields.fail("bands", `at most ${MAX_BINS} bins with rows (bands x rows)`);
    const layout = fields.json.layout;
    if (layout !== "spread" && layout !== "tagged") fields.fail("layout", '"spread" or "tagged"');
    const shards = fields.integer("shards", 1, 2 ** 16);
    const representatives = fields.integer("representatives", 1, MAX_REPRESENTATIVES);
    if (threshold !== ask.threshold)
      fields.fail(
        "threshold",
        `${ask.threshold}, as this process asked (the index was created with another threshold)`,
      );
    for (const name of ["shingle", "k", "bands", "rows"] as const) {
      if (ask[name] !== undefined && ask[name] !== params[name])
        fields.fail(name, `${ask[name]}, as this process asked (the index was created with other sketches)`);
    }
    return { threshold: threshold as number, params, spread: layout === "spread", shards, representatives };
  };
}
