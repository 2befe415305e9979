// 64-bit SimHash of texts and of weighted features; the votes are counted in WASM
// (assembly/simhash.ts). Fingerprints cross as u64 in WASM memory and leave as a BigUint64Array
// for batches; a bigint appears only at the single-value API.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { array } from "../wasm/array-region.js";
import { eachBatch } from "../wasm/batch.js";
import { sharedEngine } from "../wasm/engine.js";
import { BATCH } from "../wasm/staging.js";
import { encodeDocument, features, shingleOf, type FeatureOptions } from "./features.js";
import type { IdfTable } from "./idf.js";

/** Options of the SimHash functions. */
export interface SimHashOptions extends FeatureOptions {
  /** Weights features by tf x idf instead of tf. */
  readonly idf?: IdfTable;
  /** One vote per distinct shingle instead of one per occurrence (repeated navigation counts once); not with idf. */
  readonly distinct?: boolean;
}

/** A feature and its weight. */
export type WeightedFeature = readonly [feature: string | Uint8Array, weight: number];

// Texts up to this many characters are batched; longer ones cost more to join than a call.
const SHORT_TEXT = 4096;
const BATCH_TEXT = 1 << 18;

/**
 * The 64-bit SimHash of a text (tf-weighted word shingles; tf x idf with `idf`), or of explicit
 * weighted features ([feature, weight] pairs or a Map). A text without a word gives 0n.
 */
export function simhash(
  input: string | Iterable<WeightedFeature> | ReadonlyMap<string, number>,
  options?: SimHashOptions,
): bigint {
  if (typeof input === "string") {
    const shingle = shingleOf(options);
    const distinct = distinctOf(options);
    if (options?.idf !== undefined) return weighted(aggregate(features(input, options), options.idf));
    return simhashOfText(input, shingle, distinct);
  }
  if (
    input === null ||
    typeof input !== "object" ||
    typeof (input as Iterable<unknown>)[Symbol.iterator] !== "function"
  ) {
    throw new InvalidArgumentError("input", input, "a string, [feature, weight] pairs or a Map of feature to weight");
  }
  const pairs = [...(input as Iterable<WeightedFeature>)];
  const keys = pairs.map((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[1] !== "number" || !Number.isFinite(pair[1])) {
      throw new InvalidArgumentError(`features[${i}]`, pair, "a [feature, finite weight] pair");
    }
    return check.key(`features[${i}][0]`, pair[0]);
  });
  const hashes = featureHashes(keys);
  return weighted({ hashes, weights: Float64Array.from(pairs, (pair) => pair[1]) });
}

/** SimHash of many texts: fingerprint i in result[i]. */
export function simhashMany(texts: readonly string[], options?: SimHashOptions): BigUint64Array {
  if (!Array.isArray(texts)) throw new InvalidArgumentError("texts", texts, "an array of strings");
  texts.forEach((text, i) => {
    if (typeof text !== "string") throw new InvalidArgumentError(`texts[${i}]`, text, "a string");
  });
  const shingle = shingleOf(options);
  const distinct = distinctOf(options);
  const out = new BigUint64Array(texts.length);
  if (options?.idf !== undefined) {
    texts.forEach((text, i) => (out[i] = simhash(text, options)));
    return out;
  }
  const { arena, staging, scratchPtr } = sharedEngine();
  // Short texts go many per kernel call; a long one goes alone (joining it costs more than a call).
  const room = (at: number): number => {
    let n = 0;
    let chars = 0;
    while (
      at + n < texts.length &&
      n < BATCH &&
      texts[at + n].length <= SHORT_TEXT &&
      chars + texts[at + n].length <= BATCH_TEXT
    )
      chars += texts[at + n++].length;
    return Math.max(1, n);
  };
  eachBatch(
    staging,
    { list: texts },
    (n, at) => {
      const bytes = staging.stagedBytes(n);
      let chars = 0;
      for (let j = 0; j < n; j++) chars += texts[at + j].length;
      if (bytes !== chars) {
        // Some text was not ASCII: those need the platform's normalization, so take them one by one.
        for (let j = 0; j < n; j++) out[at + j] = simhashOfText(texts[at + j], shingle, distinct);
        return;
      }
      // After the staged texts: the shingle hashes of one text for the distinct vote, then the fingerprints.
      const longest = n === 1 ? bytes : SHORT_TEXT;
      const { work, fps } = arena.place(
        { work: distinct ? 8 * arena.k.shingleCapacity(longest) : 0, fps: array(8, n) },
        staging.end,
        "a batch of texts",
      );
      if (distinct)
        arena.k.simhashDistinctDocs(staging.keysPtr, staging.spansPtr, n, shingle, scratchPtr, work, fps.ptr);
      else arena.k.simhashDocs(staging.keysPtr, staging.spansPtr, n, shingle, scratchPtr, fps.ptr);
      fps.copyOut(arena.u8, out, at, n);
    },
    room,
  );
  return out;
}

/** Hamming distance between two 64-bit fingerprints (popcount in WASM). */
export function hammingDistance(a: bigint, b: bigint): number {
  if (typeof a !== "bigint" || a < 0n || a >= 1n << 64n)
    throw new InvalidArgumentError("a", a, "a 64-bit fingerprint as a non-negative bigint");
  if (typeof b !== "bigint" || b < 0n || b >= 1n << 64n)
    throw new InvalidArgumentError("b", b, "a 64-bit fingerprint as a non-negative bigint");
  return sharedEngine().arena.k.hamming(a, b);
}

function simhashOfText(text: string, shingle: number, distinct = false): bigint {
  const { arena, staging, scratchPtr } = sharedEngine();
  const len = encodeDocument(text);
  if (!distinct) return BigInt.asUintN(64, arena.k.simhashText(staging.keysPtr, len, shingle, scratchPtr));
  const { work } = arena.place({ work: 8 * arena.k.shingleCapacity(len) }, staging.end, "a text");
  return BigInt.asUintN(64, arena.k.simhashDistinctText(staging.keysPtr, len, shingle, scratchPtr, work));
}

function distinctOf(options: SimHashOptions | undefined): boolean {
  const distinct = options?.distinct ?? false;
  if (typeof distinct !== "boolean") throw new InvalidArgumentError("distinct", distinct, "true or false");
  if (distinct && options?.idf !== undefined)
    throw new InvalidArgumentError("distinct", distinct, "false when idf is given (idf weights per occurrence)");
  return distinct;
}

/** Feature hashes of explicit features: the hash a one-token shingle of the same word gets. */
function featureHashes(keys: readonly (string | Uint8Array)[]): BigUint64Array {
  const { arena, staging, scratchPtr } = sharedEngine();
  const out = new BigUint64Array(keys.length);
  eachBatch(staging, { list: keys }, (n, at) => {
    // One u64 a key, written from the start of the hash-pair region (which has room for two a key).
    arena.k.shingleTokens(staging.keysPtr, staging.spansPtr, n, 1, scratchPtr, staging.hashesPtr);
    out.set(staging.hashes.view(arena.u8, BigUint64Array, 0, n).subarray(0, n), at);
  });
  return out;
}

/** tf x idf per distinct feature. */
function aggregate(hashes: BigUint64Array, idf: IdfTable): { hashes: BigUint64Array; weights: Float64Array } {
  const tf = new Map<bigint, number>();
  for (const h of hashes) tf.set(h, (tf.get(h) ?? 0) + 1);
  const distinct = new BigUint64Array(tf.size);
  const weights = new Float64Array(tf.size);
  let i = 0;
  for (const [h, count] of tf) {
    distinct[i] = h;
    weights[i++] = count * idf.weight(h);
  }
  return { hashes: distinct, weights };
}

function weighted({ hashes, weights }: { hashes: BigUint64Array; weights: Float64Array }): bigint {
  const { arena, staging, scratchPtr } = sharedEngine();
  const n = hashes.length;
  const { h, w } = arena.place({ h: array(8, n), w: array(8, n) }, staging.end, "a weighted feature list");
  h.copyIn(arena.u8, hashes);
  w.copyIn(arena.u8, weights);
  return BigInt.asUintN(64, arena.k.simhashWeighted(h.ptr, w.ptr, n, scratchPtr));
}
