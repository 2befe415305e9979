// Bringing a table up to date with a BatchLog (batch-log.ts): what the log gained since this
// process last read it (everything, the first time or after the set was cleared) is read in the
// pieces the log gives, its records checked (fingerprint-batches.ts) and applied in order. Shared
// by the persisted seen-set (a FingerprintSet) and `dedup --store` (the line pipeline's table).
import { FormatError } from "../errors.js";
import type { BatchLog } from "./batch-log.js";
import { decodeRecords } from "./fingerprint-batches.js";

/** A table that follows a log: it takes the log's added and forgotten fingerprints, packed 16 bytes each. */
export interface LogFollower {
  /** Empties the table: the log was cleared or replaced, and is read again whole. */
  clear(): void | Promise<void>;
  add(fingerprints: Uint8Array): void | Promise<void>;
  remove(fingerprints: Uint8Array): void | Promise<void>;
}

/** What a catch-up found. */
export interface CaughtUp {
  /** Bytes of the last read to keep: set when the log ended in a torn record, to be cut off by the next write. */
  readonly keep?: number;
  /** Fingerprints added or forgotten after what this process had read before (0 when the log was read whole again). */
  readonly changed: number;
  /** True when the table was emptied and the log read whole. */
  readonly reset: boolean;
}

/**
 * Applies what `log` gained since its last read to `table`; call it under the set's lock, before
 * deciding anything. A torn tail (a write stopped part way, never acknowledged) is told to
 * `onRecover` and left to be cut off; in a log that never tears a write it is corruption.
 */
export async function catchUp(
  log: BatchLog,
  table: LogFollower,
  onRecover?: (message: string) => void,
): Promise<CaughtUp> {
  let reset = false;
  let changed = 0;
  // In pieces where the log gives them: a record cut at a piece's end is read again with the next.
  for (let first = true; ; first = false) {
    const read = await log.read();
    if (read.reset && first) {
      reset = true;
      await table.clear();
    }
    const piece = read.more === true;
    const decoded = decodeRecords(read.records, log.name, piece);
    for (const batch of decoded.batches) {
      if (batch.forget) await table.remove(batch.fingerprints);
      else await table.add(batch.fingerprints);
      changed += batch.fingerprints.length / 16;
    }
    if (piece) {
      log.unread!(read.records.length - decoded.goodBytes);
      continue;
    }
    if (decoded.torn && log.atomicWrites)
      throw new FormatError(`a record of ${log.name} is cut short`, "ERR_TRUNCATED");
    if (!decoded.torn) return { changed: reset ? 0 : changed, reset };
    const keep = decoded.goodBytes;
    onRecover?.(
      `${log.name} ended in a partly written batch (${read.records.length - keep} bytes from a write that stopped before it was acknowledged, or a damaged last batch); it was cut off, and its keys count as new again`,
    );
    return { keep, changed: reset ? 0 : changed, reset };
  }
}
