// Inverse document frequency of shingle features, built from a corpus: idf(f) = ln((N + 1) /
// (df(f) + 1)) + 1 (smoothed, so a feature seen nowhere weighs most and one seen everywhere still
// counts). Serialized in format v1 as the document count and sorted (feature hash, df) pairs.
import { FormatError, InvalidArgumentError } from "../errors.js";
import { Kind, writeContainer } from "../format/container.js";
import { payloadOf, readStored, type Recipe } from "../format/recipe.js";
import { features, maxShingle, shingleOf } from "./features.js";

const PARAM_BYTES = 16;
const ENTRY_BYTES = 12;

/** Format v1, kind 8: document count and shingle size; the payload is (feature hash u64, df u32) entries. */
const RECIPE: Recipe<{ documents: number; shingle: number }> = {
  kind: Kind.IdfTable,
  what: "an IDF table",
  paramBytes: PARAM_BYTES,
  read(params, payloadBytes) {
    if (payloadBytes % ENTRY_BYTES !== 0)
      throw new FormatError(
        `payload of ${payloadBytes} bytes is not whole ${ENTRY_BYTES}-byte entries`,
        "ERR_BAD_PARAMS",
      );
    const shingle = params.getUint32(8, true);
    if (!(shingle >= 1 && shingle <= maxShingle()))
      throw new FormatError(`shingle size ${shingle} must be 1 to ${maxShingle()}`, "ERR_BAD_PARAMS");
    return { documents: Number(params.getBigUint64(0, true)), shingle };
  },
};

/** Document frequencies of features over a corpus, for tf x idf weighting. */
export class IdfTable {
  /** Documents counted (N). */
  readonly documents: number;
  /** The shingle size the features were made with. */
  readonly shingle: number;
  private readonly df: Map<bigint, number>;

  private constructor(documents: number, shingle: number, df: Map<bigint, number>) {
    this.documents = documents;
    this.shingle = shingle;
    this.df = df;
  }

  /** Counts, for every feature, the documents of `corpus` that contain it. */
  static build(corpus: Iterable<string>, options: { shingle?: number } = {}): IdfTable {
    const shingle = shingleOf({ shingle: options.shingle });
    const df = new Map<bigint, number>();
    let documents = 0;
    for (const text of corpus) {
      if (typeof text !== "string") throw new InvalidArgumentError(`corpus[${documents}]`, text, "a string");
      for (const h of new Set(features(text, { shingle }))) df.set(h, (df.get(h) ?? 0) + 1);
      documents++;
    }
    return new IdfTable(documents, shingle, df);
  }

  /** Distinct features known. */
  get size(): number {
    return this.df.size;
  }

  /** The idf weight of a feature hash. */
  weight(feature: bigint): number {
    return Math.log((this.documents + 1) / ((this.df.get(feature) ?? 0) + 1)) + 1;
  }

  /** The table in serialization format v1 (entries sorted by feature hash). */
  serialize(): Uint8Array {
    const keys = [...this.df.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const payload = new Uint8Array(ENTRY_BYTES * keys.length);
    const view = new DataView(payload.buffer);
    keys.forEach((key, i) => {
      view.setBigUint64(ENTRY_BYTES * i, key, true);
      view.setUint32(ENTRY_BYTES * i + 8, this.df.get(key)!, true);
    });
    const params = new Uint8Array(PARAM_BYTES);
    const pv = new DataView(params.buffer);
    pv.setBigUint64(0, BigInt(this.documents), true);
    pv.setUint32(8, this.shingle, true);
    return writeContainer(
      Kind.IdfTable,
      params,
      payload,
      () => new FormatError("IDF table too large", "ERR_TOO_LARGE"),
    );
  }

  /** Loads a table written by serialize(). */
  static deserialize(bytes: Uint8Array): IdfTable {
    const stored = readStored(bytes, RECIPE);
    const { documents, shingle } = stored.params;
    const payload = payloadOf(stored);
    const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    const df = new Map<bigint, number>();
    let previous = -1n;
    for (let at = 0; at < payload.length; at += ENTRY_BYTES) {
      const key = view.getBigUint64(at, true);
      const count = view.getUint32(at + 8, true);
      if (key <= previous) throw new FormatError(`feature entries out of order at byte ${at}`, "ERR_BAD_PARAMS");
      if (count < 1 || count > documents)
        throw new FormatError(`document frequency ${count} outside 1..${documents}`, "ERR_BAD_PARAMS");
      df.set(key, count);
      previous = key;
    }
    return new IdfTable(documents, shingle, df);
  }
}
