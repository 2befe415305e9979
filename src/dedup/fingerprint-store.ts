// The interface an exact fingerprint store offers the IMP-CB scheme outside WebAssembly memory:
// synchronous reads (the counting filter keeps them rare) and atomic, durable batch commits.

/** A store of 16-byte fingerprints with reference counts. */
export interface FingerprintStore {
  /** The reference count of a fingerprint, 0 when absent. */
  get(fingerprint: Uint8Array): number;
  /** Applies new counts (0 deletes) and the epoch atomically and durably; returns when they are safe. */
  commit(changes: ReadonlyMap<string, { fingerprint: Uint8Array; count: number }>, epoch: number): void;
  /** The epoch of the last commit (0 for a new store). */
  readonly epoch: number;
  /** Fingerprints stored. */
  readonly size: number;
  /** Every stored fingerprint (to rebuild the counting filter). */
  fingerprints(): Iterable<Uint8Array>;
  /** Reads and writes a small side file kept with the store (the saved counting filter). */
  readSide(name: string): Uint8Array | undefined;
  writeSide(name: string, bytes: Uint8Array): void;
  close(): void;
}
