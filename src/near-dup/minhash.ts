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
/** Most LSH bins (bands x rows). */
export const MAX_BINS = 1024;

/** Checks sketch parameters; throws InvalidArgumentError naming a bad one. */
export function checkSketchParams(params: SketchParams): SketchParams {
  check.integerInRange("shingle", params.shingle, 1, maxShingle());
  check.integerInRange("sketchSize", params.k, 8, MAX_SKETCH);
  check.integerInRange("bands", params.bands, 1, MAX_BINS);
  check.integerInRange("rows", params.rows, 1, MAX_BINS);
  if (params.bands * params.rows > MAX_BINS) throw new InvalidArgumentError("bands", params.bands, `at most ${MAX_BINS} bins in all (bands x rows; rows is ${params.rows})`);
  return params;
}

/** The texts' sketches; `texts[i]` must be strings. */
export function sketchMany(texts: readonly string[], params: SketchParams): Sketches {
  if (!Array.isArray(texts)) throw new InvalidArgumentError("texts", texts, "an array of strings");
  checkSketchParams(params);
  texts.forEach((text, i) => {
    if (typeof text !== "string") throw new InvalidArgumentError(`texts[${i}]`, text, "a string");
  });
  const { k, bands } = params;
  const values = new Uint32Array(texts.length * (k + 1));
  const keys = new Uint32Array(texts.length * bands);
  const unspaced = sketchBatches(texts, params, values, keys);
  if (unspaced.length > 0) {
    // Texts with Han, Kana, Thai, ... letters: cut into words by the platform, sketched again.
    const words = unspaced.map((i) => segmentWords(texts[i]).join(" "));
    const v = new Uint32Array(words.length * (k + 1));
    const kk = new Uint32Array(words.length * bands);
    sketchBatches(words, params, v, kk);
    unspaced.forEach((i, w) => {
      values.set(v.subarray(w * (k + 1), (w + 1) * (k + 1)), i * (k + 1));
      keys.set(kk.subarray(w * bands, (w + 1) * bands), i * bands);
    });
  }
  return { params, count: texts.length, values, keys };
}

/** Sketches the texts batch by batch into values/keys; returns the indexes of texts that hold unspaced scripts. */
function sketchBatches(texts: readonly string[], params: SketchParams, values: Uint32Array, keys: Uint32Array): number[] {
  const { k, bands, rows, shingle } = params;
  const stride = k + 1;
  const { arena, staging, scratchPtr } = sharedEngine();
  const unspaced: number[] = [];
  eachBatch(staging, { list: texts }, (n, at) => {
    const longest = staging.longestKey(n);
    // Past the staged text: the shingle hashes of one document, the bins, the sketches, keys and flags.
    const { work, bins, out, keys: keysAt, flags } = arena.place(
      { work: 8 * arena.k.shingleCapacity(longest), bins: 4 * bands * rows, out: array(4 * stride, n), keys: array(4 * bands, n), flags: array(1, n) },
      staging.end,
      "a batch of sketches",
    );
    const found = arena.k.sketchDocs(staging.keysPtr, staging.spansPtr, n, shingle, k, bands, rows, scratchPtr, work, bins, out.ptr, keysAt.ptr, flags.ptr);
    out.copyOut(arena.u8, values, at, n);
    keysAt.copyOut(arena.u8, keys, at, n);
    const flagged = flags.bytes(arena.u8);
    if (found > 0) for (let j = 0; j < n; j++) if (flagged[j] !== 0) unspaced.push(at + j);
  });
  return unspaced;
}

/** LSH layout for a similarity threshold t: rows r with t^r near 1/2, and enough bands that a pair at t shares none with probability at most 1e-4. */
export function lshLayout(threshold: number): { bands: number; rows: number } {
  const rows = Math.max(1, Math.round(Math.log(0.5) / Math.log(threshold)));
  const hit = threshold ** rows;
  const bands = hit >= 1 ? 1 : Math.max(1, Math.ceil(Math.log(1e-4) / Math.log(1 - hit)));
  return { bands: Math.min(bands, Math.floor(MAX_BINS / rows)), rows };
}
