// The saved filter and block index of a disk seen-set's sorted part: a file beside the log
// (`fingerprints.log.index`), so an open past the memory budget reads the filter and index (about
// 1 + 16 / 256 bytes a key at 8 filter bits) instead of the whole part (16 bytes a key, every
// record verified). A background merge's thread writes it with the part (aside, renamed in after
// the part is); an open that had to read the part writes it for the next. It is format v1
// (kind DiskPartIndex), checksummed, and bound to its part by the log's epoch (new at every
// compaction or clear), the part's key count, and its first and last blocks' checksums: one
// damaged, stale, of another part or too large for the budget is not taken, and the part is read
// as before (a cache, never a wrong answer). Not made durable: after a power loss a torn file
// fails its checksum.
import { renameSync, rmSync } from "node:fs";
import { FormatError } from "../../errors.js";
import { Kind } from "../../format/container.js";
import type { Recipe } from "../../format/recipe.js";
import { readStoredFile, type Segment, writeStoredFile } from "../../files/stored-file.js";
import { KeySieve, type SievePlace } from "../../lines/key-sieve.js";
import type { Arena } from "../../wasm/arena.js";
import { sharedBytes } from "../../wasm/shared-module.js";
import { BATCH } from "../../wasm/staging.js";
import { ORDER_WORDS } from "./sorted-part.js";

/** Fingerprints a block of the index: 4 KiB of the part. */
const BLOCK = 256;
const PARAM_BYTES = 32;

/** The saved index's file beside the log at `logPath`. */
export function partIndexPath(logPath: string): string {
  return `${logPath}.index`;
}

/** A sorted part's filter and block index as saved and loaded. */
export interface PartIndex {
  /** The log's epoch when the part was written, and its keys. */
  readonly epoch: number;
  readonly count: number;
  readonly firsts: Uint32Array;
  readonly sums: BigUint64Array;
}

interface Params {
  readonly epoch: number;
  readonly count: number;
  readonly blocks: number;
  readonly filterBlocks: number;
  readonly lines: number;
}

const recipe: Recipe<Params> = {
  kind: Kind.DiskPartIndex,
  what: "a disk seen-set's saved part index",
  paramBytes: PARAM_BYTES,
  read(view, payloadBytes) {
    const epoch = view.getUint32(0, true);
    const blocks = view.getUint32(4, true);
    const filterBlocks = view.getUint32(8, true);
    const count = Number(view.getBigUint64(16, true));
    const lines = Number(view.getBigUint64(24, true));
    if (view.getUint32(12, true) !== 0) throw new RangeError("reserved parameter bytes are not 0");
    if (count < 1 || blocks !== Math.ceil(count / BLOCK))
      throw new RangeError(`${blocks} index blocks for ${count} keys (${BLOCK} a block)`);
    if (filterBlocks < 1 || lines !== count)
      throw new RangeError(`a filter of ${filterBlocks} blocks for ${lines} of ${count} keys`);
    const want = blocks * (4 * ORDER_WORDS + 8) + filterBlocks * 64;
    if (payloadBytes !== want) throw new RangeError(`a payload of ${payloadBytes} bytes where ${want} were expected`);
    return { epoch, count, blocks, filterBlocks, lines };
  },
};

/**
 * Writes `index` to `path` (a new file aside: installPartIndex renames it in), its filter `filter`:
 * the bits at `bits` (a region of the filter's memory, or a view of a shared one another thread
 * may go on setting bits in: copied a piece at a time as it is written).
 */
export function savePartIndex(path: string, bits: Segment, filter: { blocks: number }, index: PartIndex): void {
  const params = new Uint8Array(PARAM_BYTES);
  const view = new DataView(params.buffer);
  view.setUint32(0, index.epoch, true);
  view.setUint32(4, index.sums.length, true);
  view.setUint32(8, filter.blocks, true);
  view.setBigUint64(16, BigInt(index.count), true);
  // The filter holds the part's keys (and, grown in place, keys added since: only more bits set).
  view.setBigUint64(24, BigInt(index.count), true);
  writeStoredFile(path, Kind.DiskPartIndex, params, [
    new Uint8Array(index.firsts.buffer, index.firsts.byteOffset, index.firsts.byteLength),
    new Uint8Array(index.sums.buffer, index.sums.byteOffset, index.sums.byteLength),
    bits,
  ]);
}

/** Where a sieve at `filter` in `arena` (or in a shared memory this thread holds no arena over) keeps its bits, as savePartIndex takes them. */
export function sieveBits(over: Arena | WebAssembly.Memory, filter: SievePlace): Segment {
  const ptr = filter.ptr + KeySieve.bitsOffset(BATCH, 16);
  const bytes = filter.blocks * 64;
  return over instanceof WebAssembly.Memory ? sharedBytes(over, ptr, bytes) : { arena: over, ptr, bytes };
}

/** Renames a saved index written aside into place beside the log; a failure leaves none (the next open reads the part). */
export function installPartIndex(aside: string, logPath: string): void {
  try {
    renameSync(aside, partIndexPath(logPath));
  } catch {
    rmSync(aside, { force: true });
    rmSync(partIndexPath(logPath), { force: true });
  }
}

/**
 * Reads the index saved at `path` into `arena` (its filter from `arena.base`, checked where it
 * lies): the index and the sieve over its filter, and where the sieve's memory ends. A damaged
 * file is a FormatError; a missing one the system's ENOENT.
 */
export function loadPartIndex(path: string, arena: Arena): PartIndex & { sieve: KeySieve; end: number } {
  let firsts = new Uint32Array(0);
  let sums = new BigUint64Array(0);
  let place: SievePlace | undefined;
  const fixed = KeySieve.bitsOffset(BATCH, 16);
  const params = readStoredFile(path, recipe, (p) => {
    firsts = new Uint32Array(ORDER_WORDS * p.blocks);
    sums = new BigUint64Array(p.blocks);
    const bytes = fixed + p.filterBlocks * 64;
    const r = arena.place({ sieve: bytes }, arena.base, "the filter of a disk seen-set's keys");
    place = { ptr: r.sieve, bytes, lines: p.lines, blocks: p.filterBlocks };
    return [
      new Uint8Array(firsts.buffer),
      new Uint8Array(sums.buffer),
      { arena, ptr: r.sieve + fixed, bytes: p.filterBlocks * 64 },
    ];
  });
  if (place === undefined) throw new FormatError(`${path}: no filter was read`, "ERR_BAD_PARAMS");
  const sieve = KeySieve.inPlace(arena, place, BATCH, 16);
  return { epoch: params.epoch, count: params.count, firsts, sums, sieve, end: place.ptr + place.bytes };
}
