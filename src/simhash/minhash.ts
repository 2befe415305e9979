// MinHash sketches of texts, made in WebAssembly over batches (assembly/minhash.ts): a bottom-k
// sketch of each text's distinct word shingles (to estimate Jaccard similarity) and LSH band keys
// from one-permutation hashing (to find candidates). Texts are encoded once per batch; the kernel
// tokenizes UTF-8 and folds case itself, so a non-ASCII page costs what an ASCII one does. Only
// texts in scripts written without spaces (Han, Kana, Thai, ...) are cut into words by
// Intl.Segmenter first, as simhash() does.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { alignUp } from "../wasm/arena.js";
import { sharedEngine } from "../wasm/engine.js";
import { segmentWords, UNSPACED_SCRIPTS } from "./text.js";

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
  check.integerInRange("shingle", params.shingle, 1, 16);
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
  const { k, bands, rows, shingle } = params;
  const stride = k + 1;
  const values = new Uint32Array(texts.length * stride);
  const keys = new Uint32Array(texts.length * bands);
  const { arena, staging, scratchPtr } = sharedEngine();
  texts.forEach((text, i) => {
    if (typeof text !== "string") throw new InvalidArgumentError(`texts[${i}]`, text, "a string");
  });
  for (let i = 0; i < texts.length; ) {
    let n = staging.encodeBatch(texts, i);
    let spans = arena.u32.subarray(staging.spansPtr >>> 2, (staging.spansPtr >>> 2) + 2 * n);
    let chars = 0;
    for (let j = 0; j < n; j++) chars += texts[i + j].length;
    if (spans[2 * n - 1] - spans[0] !== chars) {
      // Some text is not ASCII: only those in unspaced scripts need the platform's word segmentation.
      let segmented: string[] | undefined;
      for (let j = 0; j < n; j++) {
        const text = texts[i + j];
        if (spans[2 * j + 1] - spans[2 * j] !== text.length && UNSPACED_SCRIPTS.test(text)) {
          segmented ??= texts.slice(i, i + n) as string[];
          segmented[j] = segmentWords(text).join(" ");
        }
      }
      if (segmented !== undefined) {
        n = staging.encodeBatch(segmented, 0, n);
        spans = arena.u32.subarray(staging.spansPtr >>> 2, (staging.spansPtr >>> 2) + 2 * n);
      }
    }
    let longest = 0;
    for (let j = 0; j < n; j++) longest = Math.max(longest, spans[2 * j + 1] - spans[2 * j]);
    // Past the staged text: the shingle hashes of one document, the bins, the sketches and keys.
    const work = alignUp(staging.end, 64);
    const bins = alignUp(work + 8 * (Math.floor(longest / 2) + 2), 64);
    const out = alignUp(bins + 4 * bands * rows, 64);
    const keysAt = alignUp(out + 4 * stride * n, 64);
    arena.reserve(keysAt + 4 * bands * n);
    arena.k.sketchDocs(staging.keysPtr, staging.spansPtr, n, shingle, k, bands, rows, scratchPtr, work, bins, out, keysAt);
    values.set(arena.u32.subarray(out >>> 2, (out >>> 2) + stride * n), i * stride);
    keys.set(arena.u32.subarray(keysAt >>> 2, (keysAt >>> 2) + bands * n), i * bands);
    i += n;
  }
  return { params, count: texts.length, values, keys };
}

/** LSH layout for a similarity threshold t: rows r with t^r near 1/2, and enough bands that a pair at t shares none with probability at most 1e-4. */
export function lshLayout(threshold: number): { bands: number; rows: number } {
  const rows = Math.max(1, Math.round(Math.log(0.5) / Math.log(threshold)));
  const hit = threshold ** rows;
  const bands = hit >= 1 ? 1 : Math.max(1, Math.ceil(Math.log(1e-4) / Math.log(1 - hit)));
  return { bands: Math.min(bands, Math.floor(MAX_BINS / rows)), rows };
}
