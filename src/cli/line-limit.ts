// Commands that read a line whole, as a URL or a record (canonicalize, dedup --canonicalize,
// --field, --json-key, and the keyed seen-sets: --store, --redis, --save-filter), take lines up to
// a limit: far beyond any URL or record, and a clear error past it rather than memory growing
// with the line until the system kills the process (/dev/zero is one endless line). The check
// stops a line as soon as it passes the limit, before it is gathered whole.
import { LineTooLongError } from "../errors.js";
import type { LineBatch, LongLines } from "./lines.js";

/** Longest line (bytes, its "\n" or "\r\n" left out) read whole as a key: 64 MiB. */
export const MAX_LINE_BYTES = 64 << 20;

/** A LongLines sink for lineBatches that throws at the first line past the limit; `at` names that line ("file:line"). */
export function lineLimit(at: () => string, what: string): LongLines {
  return {
    // One byte more: a "\r" before the "\n" is no part of the line; checkLineLimit is exact for a line that ends within it.
    threshold: MAX_LINE_BYTES + 1,
    feed: () => {
      throw new LineTooLongError(at(), MAX_LINE_BYTES, what);
    },
  };
}

/**
 * Throws for a line of the batch past the limit, `at(i)` naming line i: a line that ends in the
 * read that takes it past the limit is joined whole, by less than a read, before lineLimit sees it.
 */
export function checkLineLimit(batch: LineBatch, at: (i: number) => string, what: string): void {
  if (batch.data.length <= MAX_LINE_BYTES) return;
  for (let i = 0; i < batch.count; i++) if (batch.spans[2 * i + 1] - batch.spans[2 * i] > MAX_LINE_BYTES) throw new LineTooLongError(at(i), MAX_LINE_BYTES, what);
}
