// One bit region in one WASM instance, with its staging and the plumbing every single-arena
// structure repeats: stage keys (strings, bytes or spans) batch by batch, hash them, hand each
// batch to a kernel, and write or read the region through the format's recipe (src/format/recipe.ts).
import { DisposedError, FilterTooLargeError } from "../errors.js";
import type { KindCode } from "../format/container.js";
import { loadRegions, writeRegions, type Region, type Stored } from "../format/recipe.js";
import * as check from "../validate.js";
import { Arena, alignUp } from "../wasm/arena.js";
import { batchFlags, keyList, keySpans, type Keys } from "../wasm/batch.js";
import type { Kernels } from "../wasm/kernels.js";
import { Staging } from "../wasm/staging.js";

/** Runs a kernel over `n` hash pairs staged at `hashesPtr`, writing flags at `outPtr`; returns a count. */
export type BatchKernel = (k: Kernels, hashesPtr: number, n: number, outPtr: number) => number;

/** A bit region of `bytes` bytes (plus `extra` bytes of state after it) in its own instance. */
export class ArenaBits {
  /** Bytes of the bit region. */
  readonly bytes: number;
  /** Where the bits start. */
  readonly bitsPtr: number;
  /** Where the structure's extra state starts (after the bits). */
  readonly statePtr: number;
  private arena: Arena | undefined;
  private readonly staging: Staging;

  constructor(bytes: number, extra = 0) {
    this.bytes = bytes;
    const arena = new Arena();
    this.arena = arena;
    this.bitsPtr = arena.base;
    this.statePtr = alignUp(this.bitsPtr + bytes, 64);
    arena.reserve(this.statePtr + extra);
    this.staging = new Staging(arena, this.statePtr + extra);
  }

  /** The instance; throws DisposedError after dispose(). */
  get live(): Arena {
    if (this.arena === undefined) throw new DisposedError("filter");
    return this.arena;
  }

  /** The bit region as a fresh view (valid until the next call that stages keys). */
  view(): Uint8Array {
    return this.live.u8.subarray(this.bitsPtr, this.bitsPtr + this.bytes);
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
    return writeRegions(kind, params, [this.region()], (bytes) => new FilterTooLargeError(bytes, "one Uint8Array cannot hold it"));
  }

  /** Copies stored bytes' payload into the bit region and verifies the checksum there (the recipe checked the length). */
  load(stored: Stored<unknown>): void {
    loadRegions(stored, [this.region()]);
  }

  private region(): Region {
    return { arena: this.live, ptr: this.bitsPtr, bytes: this.bytes };
  }

  /** Set bits in the region. */
  popcount(): number {
    return this.live.k.popcountBytes(this.bitsPtr, this.bytes);
  }

  /** Zeroes the bit region. */
  clear(): void {
    this.live.u8.fill(0, this.bitsPtr, this.bitsPtr + this.bytes);
  }

  /** Drops the instance. */
  dispose(): void {
    this.arena = undefined;
  }

  private run(keys: Keys, kernel: BatchKernel): { flags: Uint8Array; total: number } {
    const arena = this.live;
    const staging = this.staging;
    return batchFlags(staging, keys, (n) => {
      staging.hashStaged(n);
      return kernel(arena.k, staging.hashesPtr, n, staging.outPtr);
    });
  }
}
