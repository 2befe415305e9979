// Commands that read a line whole, as a URL or a record (canonicalize, dedup --canonicalize,
// --field, --json-key, and the keyed seen-sets: --redis, --save-filter, and --store with a key), take lines up to
// a limit: far beyond any URL or record, and a clear error past it rather than memory growing
// with the line until the system kills the process (/dev/zero is one endless line). The check
// stops a line as soon as it passes the limit, before it is gathered whole.
import { LineTooLongError } from "../errors.js";
import { lineBatches, type LineBatch } from "./lines.js";

/** Longest line (bytes, its "\n" or "\r\n" left out) read whole as a key: 64 MiB. */
export const MAX_LINE_BYTES = 64 << 20;

/** Whose limit a line of dedup past MAX_LINE_BYTES reached, for its error: a line with a key, or of a seen-set that takes keys. */
export const DEDUP_LIMIT_OF =
  "a line read whole by dedup --canonicalize, --field, --json-key, --redis or --save-filter (plain dedup, dedup --store and dedup --approx take lines of any length)";

/**
 * lineBatches of `source` (named `name` in errors) with lines up to MAX_LINE_BYTES: a longer one
 * throws LineTooLongError naming it ("name:line"; `what` says whose limit it is). Lines are
 * counted as they are yielded, so the number is right however far ahead the caller reads.
 */
export async function* limitedLineBatches(
  source: AsyncIterable<Uint8Array>,
  name: string,
  what: string,
): AsyncGenerator<LineBatch> {
  let lines = 0;
  const tooLong = (line: number) => new LineTooLongError(`${name}:${line}`, MAX_LINE_BYTES, what);
  // Past the limit a partial line goes to this sink, which stops it; one byte more than the limit,
  // as a "\r" before the "\n" is no part of the line (the check below is exact for a line that
  // ends within it).
  const guard = {
    threshold: MAX_LINE_BYTES + 1,
    feed: () => {
      throw tooLong(lines + 1);
    },
  };
  for await (const batch of lineBatches(source, guard)) {
    // A line that ends in the read that takes it past the limit is joined whole, by less than a read.
    if (batch.data.length > MAX_LINE_BYTES) {
      for (let i = 0; i < batch.count; i++)
        if (batch.spans[2 * i + 1] - batch.spans[2 * i] > MAX_LINE_BYTES) throw tooLong(lines + i + 1);
    }
    lines += batch.count;
    yield batch;
  }
}
