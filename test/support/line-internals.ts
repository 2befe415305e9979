// The line deduplicator's internal face, for tests that drive it the way the command line does:
// `stripInternal` leaves these members out of the shipped .d.ts, so the tests name them here.
import type { LineDeduplicator, LineDeduplicatorOptions } from "../../build/js/index.node.js";

/** Options crawlsieve's own callers pass (src/lines/line-deduplicator.ts marks them @internal). */
export interface InternalLineOptions extends LineDeduplicatorOptions {
  readonly perMemory?: number;
  readonly stageItems?: number;
  readonly fresh?: boolean;
}

/** The members the command line's pump uses. */
export interface LineEngineFace {
  slotView(slot: 0 | 1): Uint8Array;
  begin(slot: 0 | 1, n: number, alternate?: boolean): void;
  step(sink: (bytes: Uint8Array) => void): boolean;
  grow(): void;
  finish(sink: (bytes: Uint8Array) => void): void;
  freshDigests(): Uint8Array;
  clearFresh(): void;
}

/** Internal options, as the public options type takes them. */
export function internalOptions(options: InternalLineOptions): LineDeduplicatorOptions {
  return options;
}

/** A deduplicator seen through its internal face. */
export function face(dedup: LineDeduplicator): LineEngineFace {
  return dedup as unknown as LineEngineFace;
}
