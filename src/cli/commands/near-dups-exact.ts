// Exact-first for `near-dups --dedup`: records whose normalized text (exact-text.ts) is the same are
// one document to the similarity engine, so only the first of them is sketched. Each batch's texts
// are fingerprinted by XXH3-128 in one kernel call and checked into a FingerprintSet (16 to 32
// bytes a distinct text); the fingerprints also go to a column, 16 bytes a record. Which record a
// repeat repeats is resolved once everything is read, by a map holding only the fingerprints that
// came more than once, so a collection without exact duplicates pays no map at all.
import { FingerprintSet } from "../../exact/fingerprint-set.js";
import { Column } from "../../near-dup/column.js";
import { exactDigests } from "../../near-dup/exact-text.js";

/** Records grouped by the fingerprint of their normalized text, in the order read. */
export class ExactGroups {
  private readonly set = new FingerprintSet();
  private readonly prints = new Column<Uint8Array>(Uint8Array, 16);
  private readonly first = new Column<Uint8Array>(Uint8Array);

  /** Records added. */
  get count(): number {
    return this.first.rows;
  }

  /** Adds the next records' texts; out[i] = 1 when texts[i] is the first of its kind (to be sketched). */
  add(texts: readonly string[]): Uint8Array {
    const packed = exactDigests(texts);
    const fresh = this.set.addFingerprints(packed);
    this.prints.append(packed, texts.length);
    this.first.append(fresh, texts.length);
    return fresh;
  }

  /**
   * The document of each record: documents are numbered 0, 1, ... by the records that came first
   * of their kind (the numbers the engine gave them, added in this order), and a repeat gets the
   * number of the first record of its kind.
   */
  documents(): Uint32Array {
    const n = this.count;
    const first = this.first.values;
    const prints = this.prints.values;
    const key = (r: number) => Buffer.from(prints.buffer, prints.byteOffset + 16 * r, 16).toString("latin1");
    const repeated = new Map<string, number>();
    for (let r = 0; r < n; r++) if (first[r] === 0) repeated.set(key(r), -1);
    const doc = new Uint32Array(n);
    let next = 0;
    for (let r = 0; r < n; r++) {
      if (first[r] === 1) {
        doc[r] = next;
        if (repeated.size > 0 && repeated.get(key(r)) === -1) repeated.set(key(r), next);
        next++;
      } else doc[r] = repeated.get(key(r))!;
    }
    return doc;
  }

  /** Frees the set's WebAssembly memory. */
  dispose(): void {
    this.set.dispose();
  }
}
