// MinHash sketches of texts, made in WebAssembly over batches (assembly/minhash.ts): a bottom-k
// sketch of each text's distinct word shingles (to estimate Jaccard similarity) and LSH band keys
// from one-permutation hashing (to find candidates). Texts are encoded once per batch; the kernel
// tokenizes UTF-8 and folds case itself, so a non-ASCII page costs what an ASCII one does. Only
// texts the kernel finds letters of scripts written without spaces in (Han, Kana, Thai, ...) are
// cut into words by Intl.Segmenter and sketched again, as simhash() does.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { array } from "../wasm/array-region.js";
import { eachBatch } from "../wasm/batch.js";
import { sharedEngine } from "../wasm/engine.js";
import { MAX_BINS } from "../sizing/lsh.js";
import { maxShingle } from "./features.js";
import { segmentWords } from "./text.js";

/** Parameters of a sketch: what must match for two sketches to be compared. */
export interface SketchParams {
  /** Words per shingle (1 to 16). */
  readonly shingle: number;
  /** Values kept per bottom-k sketch (k). */
  readonly k: number;
  /** LSH bands. */
  readonly bands: number;
  /** One-permutation bins per band. */
  readonly rows: number;
}

/** Sketches of `count` texts: sketch i is values[i * (k + 1) ..] (distinct count, then k values), its band keys keys[i * bands ..]. */
export interface Sketches {
  readonly params: SketchParams;
  readonly count: number;
  readonly values: Uint32Array;
  readonly keys: Uint32Array;
}

/** Most values per sketch. */
export const MAX_SKETCH = 4096;
export { lshLayout, MAX_BINS } from "../sizing/lsh.js";

/** Checks sketch parameters; throws InvalidArgumentError naming a bad one. */
export function checkSketchParams(params: SketchParams): SketchParams {
  check.integerInRange("shingle", params.shingle, 1, maxShingle());
  check.integerInRange("sketchSize", params.k, 8, MAX_SKETCH);
  check.integerInRange("bands", params.bands, 1, MAX_BINS);
  check.integerInRange("rows", params.rows, 1, MAX_BINS);
  if (params.bands * params.rows > MAX_BINS)
    throw new InvalidArgumentError(
      "bands",
      params.bands,
      `at most ${MAX_BINS} bins in all (bands x rows; rows is ${params.rows})`,
    );
  return params;
}

/** The texts' sketches; `texts[i]` must be strings. */
export function sketchMany(texts: readonly string[], params: SketchParams): Sketches {
  const { values, keys } = sketchWith(texts, params, 1);
  return { params, count: texts.length, values, keys };
}

/**
 * The texts' band keys at their full 64 bits (the filter's keys: a billion 32-bit keys would
 * collide): key b of text i is words [2 (i * bands + b), +2) of `keys`, low word first; `empty[i]`
 * is 1 for a text without a word (its keys are 0, a candidate of nothing). `params.k` is the
 * bottom-k the kernel computes besides: the smallest allowed costs least.
 */
export function wideBandKeys(texts: readonly string[], params: SketchParams): { keys: Uint32Array; empty: Uint8Array } {
  const { values, keys } = sketchWith(texts, params, 2);
  const stride = params.k + 1;
  const empty = Uint8Array.from({ length: texts.length }, (_, i) => (values[i * stride] === 0 ? 1 : 0));
  return { keys, empty };
}

/** Sketches and band keys of `keyWords` u32 each (1 or 2), checked and re-made for unspaced scripts. */
function sketchWith(
  texts: readonly string[],
  params: SketchParams,
  keyWords: number,
): { values: Uint32Array; keys: Uint32Array } {
  if (!Array.isArray(texts)) throw new InvalidArgumentError("texts", texts, "an array of strings");
  checkSketchParams(params);
  texts.forEach((text, i) => {
    if (typeof text !== "string") throw new InvalidArgumentError(`texts[${i}]`, text, "a string");
  });
  const { k } = params;
  const perDoc = params.bands * keyWords;
  const values = new Uint32Array(texts.length * (k + 1));
  const keys = new Uint32Array(texts.length * perDoc);
  const unspaced = sketchBatches(texts, params, values, keys, keyWords);
  if (unspaced.length > 0) {
    // Texts with Han, Kana, Thai, ... letters: cut into words by the platform, sketched again.
    const words = unspaced.map((i) => segmentWords(texts[i]).join(" "));
    const v = new Uint32Array(words.length * (k + 1));
    const kk = new Uint32Array(words.length * perDoc);
    sketchBatches(words, params, v, kk, keyWords);
    unspaced.forEach((i, w) => {
      values.set(v.subarray(w * (k + 1), (w + 1) * (k + 1)), i * (k + 1));
      keys.set(kk.subarray(w * perDoc, (w + 1) * perDoc), i * perDoc);
    });
  }
  return { values, keys };
}

/** Sketches the texts batch by batch into values/keys; returns the indexes of texts that hold unspaced scripts. */
function sketchBatches(
  texts: readonly string[],
  params: SketchParams,
  values: Uint32Array,
  keys: Uint32Array,
  keyWords: number,
): number[] {
  const { k, bands, rows, shingle } = params;
  const stride = k + 1;
  const { arena, staging, scratchPtr } = sharedEngine();
  const unspaced: number[] = [];
  eachBatch(staging, { list: texts }, (n, at) => {
    const longest = staging.longestKey(n);
    // Past the staged text: the shingle hashes of one document, the bins, the sketches, keys and flags.
    const {
      work,
      bins,
      out,
      keys: keysAt,
      flags,
    } = arena.place(
      {
        work: 8 * arena.k.shingleCapacity(longest),
        bins: 4 * bands * rows,
        out: array(4 * stride, n),
        keys: array(4 * bands * keyWords, n),
        flags: array(1, n),
      },
      staging.end,
      "a batch of sketches",
    );
    const found = arena.k.sketchDocs(
      staging.keysPtr,
      staging.spansPtr,
      n,
      shingle,
      k,
      bands,
      rows,
      scratchPtr,
      work,
      bins,
      out.ptr,
      keysAt.ptr,
      flags.ptr,
      keyWords,
    );
    out.copyOut(arena.u8, values, at, n);
    keysAt.copyOut(arena.u8, keys, at, n);
    const flagged = flags.bytes(arena.u8);
    if (found > 0) for (let j = 0; j < n; j++) if (flagged[j] !== 0) unspaced.push(at + j);
  });
  return unspaced;
}
