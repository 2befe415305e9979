// The one bit-region type of the Bloom family: a bit (or counter) region in its own WASM instance,
// optional state after it, and the staging its batches go through. A single-region structure
// (MultiDim, AgePartitioned) runs its kernel over keys here: stage keys (strings, bytes or spans)
// batch by batch, hash them, hand each batch to the kernel, and write or read the region through
// the format's recipe (src/format/recipe.ts). PartitionedBits holds one per partition.
import { DisposedError, FilterTooLargeError } from "../errors.js";
import type { KindCode } from "../format/container.js";
import { loadRegions, writeRegions, type Region, type Stored } from "../format/recipe.js";
import * as check from "../validate.js";
import { Arena } from "../wasm/arena.js";
import { batchFlags, keyList, keySpans, type Keys } from "../wasm/batch.js";
import type { Kernels } from "../wasm/kernels.js";
import { Staging } from "../wasm/staging.js";

/** Runs a kernel over `n` hash pairs staged at `hashesPtr`, writing flags at `outPtr`; returns a count. */
export type BatchKernel = (k: Kernels, hashesPtr: number, n: number, outPtr: number) => number;

/** A bit region of `bytes` bytes (plus `extra` bytes of state after it, or as many as the kernels say) in its own instance. */
export class BitRegion {
  /** Bytes of the bit region. */
  readonly bytes: number;
  /** Where the bits start. */
  readonly bitsPtr: number;
  /** Where the structure's extra state starts (after the bits). */
  readonly statePtr: number;
  /** Where batches of keys are staged for this region's kernels. */
  readonly staging: Staging;
  private instance: Arena | undefined;

  constructor(bytes: number, extra: number | ((k: Kernels) => number) = 0) {
    this.bytes = bytes;
    const arena = new Arena();
    this.instance = arena;
    const regions = arena.place(
      { bits: bytes, state: typeof extra === "number" ? extra : extra(arena.k) },
      arena.base,
      "a filter",
    );
    this.bitsPtr = regions.bits;
    this.statePtr = regions.state;
    this.staging = new Staging(arena, regions.end);
  }

  /** The instance; throws DisposedError after dispose(). */
  get arena(): Arena {
    if (this.instance === undefined) throw new DisposedError("filter");
    return this.instance;
  }

  /** The bit region as a fresh view (valid until the next call that stages keys). */
  view(): Uint8Array {
    return this.arena.bytes(this.bitsPtr, this.bytes);
  }

  /** Applies `kernel` to keys batch by batch; result[i] is the kernel's flag for keys[i]. Returns flags and the kernels' summed counts. */
  runKeys(keys: unknown, kernel: BatchKernel): { flags: Uint8Array; total: number } {
    return this.run(keyList(keys), kernel);
  }

  /** As runKeys, for keys given as spans of one buffer. */
  runSpans(data: Uint8Array, spans: ArrayLike<number>, kernel: BatchKernel): { flags: Uint8Array; total: number } {
    return this.run(keySpans(data, spans), kernel);
  }

  /** One key through runKeys; returns its flag. */
  runOne(key: unknown, kernel: BatchKernel): number {
    return this.runKeys([check.key("key", key)], kernel).flags[0];
  }

  /** Container bytes: header with `params`, the bit region, checksum. */
  serialize(kind: KindCode, params: Uint8Array): Uint8Array {
    return writeRegions(
      kind,
      params,
      [this.region()],
      (bytes) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it"),
    );
  }

  /** Copies stored bytes' payload into the bit region and verifies the checksum there (the recipe checked the length). */
  load(stored: Stored<unknown>): void {
    loadRegions(stored, [this.region()]);
  }

  /** The bit region as the format's recipe writes and reads it. */
  region(): Region {
    return { arena: this.arena, ptr: this.bitsPtr, bytes: this.bytes };
  }

  /** Set bits in the region. */
  popcount(): number {
    return this.arena.k.popcountBytes(this.bitsPtr, this.bytes);
  }

  /** Zeroes the bit region. */
  clear(): void {
    this.view().fill(0);
  }

  /** Drops the instance. */
  dispose(): void {
    this.instance = undefined;
  }

  private run(keys: Keys, kernel: BatchKernel): { flags: Uint8Array; total: number } {
    const arena = this.arena;
    const staging = this.staging;
    return batchFlags(staging, keys, (n) => {
      staging.hashStaged(n);
      return kernel(arena.k, staging.hashesPtr, n, staging.outPtr);
    });
  }
}
