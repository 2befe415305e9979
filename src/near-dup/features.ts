// Feature extraction: from a text to the hashes of its word shingles, hashed in WASM
// (assembly/simhash.ts). Both the fingerprint (simhash.ts) and the IDF table (idf.ts) count these
// features, so they live here, below both.
import { InvalidArgumentError } from "../errors.js";
import * as check from "../validate.js";
import { array } from "../wasm/array-region.js";
import { sharedEngine } from "../wasm/engine.js";
import { prepareNonAscii } from "./text.js";

/** Options that choose the features of a text. */
export interface FeatureOptions {
  /** Tokens per shingle (w-gram), 1 to 16; default 3, or the IDF table's. */
  readonly shingle?: number;
  /** A table whose shingle size the features must match (an IdfTable). */
  readonly idf?: { readonly shingle: number };
}

/** Default shingle size: word 3-grams. */
export const DEFAULT_SHINGLE = 3;

/** Most tokens per shingle, as the tokenizing kernels define it. */
export function maxShingle(): number {
  return sharedEngine().arena.k.MAX_SHINGLE.value;
}

/** The shingle size `options` ask for. */
export function shingleOf(options: FeatureOptions | undefined): number {
  const opts = check.options<FeatureOptions>("options", options);
  const fromIdf = opts.idf?.shingle;
  const shingle =
    opts.shingle === undefined
      ? (fromIdf ?? DEFAULT_SHINGLE)
      : check.integerInRange("shingle", opts.shingle, 1, maxShingle());
  if (fromIdf !== undefined && fromIdf !== shingle)
    throw new InvalidArgumentError("shingle", shingle, `${fromIdf}, the shingle size the IDF table was built with`);
  return shingle;
}

/** The shingle hashes of a text, in order (what the fingerprint votes over). */
export function features(text: string, options?: FeatureOptions): BigUint64Array {
  const shingle = shingleOf(options);
  if (typeof text !== "string") throw new InvalidArgumentError("text", text, "a string");
  const { arena, staging, scratchPtr } = sharedEngine();
  const len = encodeDocument(text);
  // After the staging region: room for as many hashes as the kernel can write.
  const { hashes } = arena.place({ hashes: array(8, arena.k.shingleCapacity(len)) }, staging.end, "a text's features");
  const count = arena.k.shingleText(staging.keysPtr, len, shingle, scratchPtr, hashes.ptr);
  return hashes.view(arena.u8, BigUint64Array, 0, count).slice();
}

/** Encodes the text the kernel tokenizes at the engine's key region; returns its byte length. */
export function encodeDocument(text: string): number {
  const { staging } = sharedEngine();
  // Encoding tells ASCII for free: every character took one byte.
  const len = staging.encodeOne(text);
  return len === text.length ? len : staging.encodeOne(prepareNonAscii(text));
}
