// What the line engine needs of a place to spill to once its exact table has reached the memory
// budget (Node: files in a temporary folder, file-spill.ts; browsers and workers have none, and
// there the budget is a hard limit). The engine hands over the lines it cannot decide yet and one
// record per line (its 128-bit fingerprint and its spill index), the records grouped into
// partitions by fingerprint bits; at the end it reads each partition back, keeps the first
// occurrence of every fingerprint, and the spill gives the kept lines back in spill order.

/** A place for lines decided at the end of input. */
export interface LineSpill {
  /** Partitions the records are grouped into. */
  readonly partitions: number;
  /** Bytes of buffers it holds in memory (counted in the budget). */
  readonly bufferBytes: number;
  /**
   * Appends spilled lines (each ending with "\n", in spill order) and their records, grouped by
   * partition: partition p's are records [starts[p], starts[p + 1]). A long line may come in
   * several calls, the ones before its last with no records.
   */
  append(lines: Uint8Array, records: Uint8Array, starts: Uint32Array): void;
  /** Records appended to partition p. */
  count(p: number): number;
  /**
   * Partition p's records in the order appended, in chunks of at most `max` whole records (valid
   * until the next chunk). Read once they are given back to the disk, unless `again` (then they
   * stay until close()).
   */
  records(p: number, max: number, again?: boolean): Iterable<Uint8Array>;
  /**
   * Appends spill indexes (ascending) kept from partition p; `restart` drops those given before.
   * With `fingerprints` (16 bytes each, in the order of the indexes), output() tells them to its
   * `before` hook.
   */
  keep(p: number, indexes: Float64Array, restart: boolean, fingerprints?: Uint8Array): void;
  /**
   * The kept lines, in spill order, in chunks of their own (never reused). `before` hears the
   * fingerprints kept with the lines of each window of spill indexes (in pieces, a partition's
   * each) before any line of that window is given back (a store makes them durable first).
   */
  output(before?: (fingerprints: readonly Uint8Array[]) => void): Iterable<Uint8Array>;
  /** Removes what it holds outside memory; idempotent. */
  close(): void;
}

/** Makes a spill for records of `recordBytes` bytes, its buffers sized for a budget of `memory` bytes (may be Infinity). */
export type LineSpillFactory = (recordBytes: number, memory: number) => LineSpill;
