// Where a line too long to hold in memory waits until its end says whether it is new (the command
// line: a re-read of the input file, or a file of its own under --tmp; see
// src/cli/long-line-stores.ts). The deduplicator fingerprints such a line as it streams by
// (long-line.ts) and hands its bytes here instead of gathering them, so memory stays bounded
// whatever the line's length.

/** Bytes past which the command line streams a line instead of gathering it (dedup and md5 alike): far above any record a line holds, far below what would strain memory. */
export const LONG_LINE_BYTES = 16 << 20;

/** A place for the bytes of the current long line, one line at a time. */
export interface LongLineStore {
  /** Lines of more bytes than this are handed over; shorter ones are gathered in memory. */
  readonly threshold: number;
  /** A long line begins at byte `offset` of the current input (each input counts from 0). */
  start(offset: number): void;
  /** The line's next bytes (its "\n" in the last, when it has one); valid only during the call. */
  append(bytes: Uint8Array): void;
  /** The line's bytes so far, read back in chunks valid until the next (to spill it elsewhere). */
  read(): Iterable<Uint8Array>;
  /** The line ended: printed in its place in the output when `print`, else let go. */
  end(print: boolean): void;
}
