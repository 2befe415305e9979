// The interface an exact fingerprint store offers the IMP-CB scheme outside WebAssembly memory:
// check-and-insert inside one exclusive write transaction, so several processes can share one
// store and exactly one of them sees a key as new, and an epoch bumped by every commit, so a
// process can tell inside that transaction whether anyone else wrote since it last did.

/** What an update sees inside its write transaction. */
export interface StoreView {
  /** The epoch of the last commit (0 for a new store), read inside this transaction. */
  readonly epoch: number;
  /** The reference count of a fingerprint, 0 when absent, as of this transaction. */
  get(fingerprint: Uint8Array): number;
}

/** New reference counts keyed by fingerprint hex (count 0 deletes). */
export type StoreChanges = ReadonlyMap<string, { fingerprint: Uint8Array; count: number }>;

/** A store of 16-byte fingerprints with reference counts. */
export interface FingerprintStore {
  /** Random identity fixed when the store was created, so state saved for another store is never trusted. */
  readonly id: string;
  /**
   * Runs `decide` inside one exclusive write transaction and commits the changes it returns with
   * epoch + 1, durably; returns the epoch after the commit (unchanged when there were no changes).
   */
  update(decide: (view: StoreView) => StoreChanges): number;
  /** The reference count of a fingerprint as last committed (0 when absent), read now, outside any transaction. */
  read(fingerprint: Uint8Array): number;
  /** The epoch of the last commit, read now. */
  readonly epoch: number;
  /** Fingerprints stored. */
  readonly size: number;
  /** Every stored fingerprint (to rebuild the counting filter). */
  fingerprints(): Iterable<Uint8Array>;
  /** Reads and writes a small side file kept with the store (the saved counting filter). */
  readSide(name: string): Uint8Array | undefined;
  /** Writes a side file (a saved filter) named `name` beside the store. */
  writeSide(name: string, bytes: Uint8Array): void;
  /** Releases the store; later calls fail. */
  close(): void;
}
