// One WebAssembly instance and its memory, owned by one structure. The owner names its regions
// (regions.ts lays them out) and place() makes them exist: it grows memory when they reach past it
// and re-creates the views right then (growth detaches the old ArrayBuffer, and a write through a
// detached view is silently lost). The kernels never grow memory themselves, so place() is the
// only place the buffer can change and the hot path never has to ask the memory for its buffer.
import { FilterTooLargeError } from "../errors.js";
import { instantiate } from "./module.js";
import type { Kernels } from "./kernels.js";
import { alignUp, layOut, REGION_ALIGN, type RegionSize, type Regions } from "./regions.js";

const PAGE = 65536;
/** wasm32 addresses 4 GiB; one page less keeps every end offset a valid u32. */
export const MAX_ARENA_BYTES = 65535 * PAGE;
/** A memory this large is a table touched all over: it is handed to the large-memory hook (huge pages on Node). */
const LARGE_ARENA_BYTES = 16 << 20;

/** Told of a memory grown past LARGE_ARENA_BYTES by regions placed from byte `from` on, before they are touched. */
export type LargeMemoryHook = (memory: WebAssembly.Memory, from: number) => void;

let onLarge: LargeMemoryHook | undefined;

/** Sets what is done, once a memory, to the regions that make it large (Node asks for huge pages under them; the smaller regions before, a batch's buffers, keep the platform's pages). */
export function setLargeMemoryHook(hook: LargeMemoryHook | undefined): void {
  onLarge = hook;
}

/** An instance of the kernel module with the views of its memory. */
export class Arena {
  /** The instance's kernel functions. */
  readonly k: Kernels;
  /** First free byte after the module's static data, 64-byte aligned. */
  readonly base: number;
  /** A byte view of the whole memory, replaced by place() when memory grows. */
  u8: Uint8Array;
  /** A u32 view of the whole memory, replaced by place() when memory grows. */
  u32: Uint32Array;
  /** Counts memory growths, so holders of sub-views know when to re-create them. */
  generation = 0;
  /** The large-memory hook has run for this memory. */
  private large = false;

  /** A fresh instance of its own memory, or the kernels `k` over a memory given them (shared-module.ts). */
  constructor(k: Kernels = instantiate()) {
    this.k = k;
    this.base = alignUp(this.k.heapBase(), REGION_ALIGN);
    this.u8 = new Uint8Array(this.k.memory.buffer);
    this.u32 = new Uint32Array(this.k.memory.buffer);
  }

  /**
   * Lays the named regions out from `start` (default: the first free byte) and makes them exist;
   * may grow memory, so re-read u8 and u32 after calling it. `what` names the structure in the
   * error when one memory cannot hold them.
   */
  place<S extends { readonly [name: string]: RegionSize }>(sizes: S, start = this.base, what = "it"): Regions<S> {
    const regions = layOut(start, sizes);
    this.reserve(regions.end, what, start);
    return regions;
  }

  /** The memory is a shared one (another thread may have filled it, and may be handed it). */
  get shared(): boolean {
    return typeof SharedArrayBuffer !== "undefined" && this.k.memory.buffer instanceof SharedArrayBuffer;
  }

  /** Zeroes every byte past the static data, as a new instance has them (arena-pool.ts reuses instances). */
  clear(): void {
    this.u8.fill(0, this.base);
  }

  /** A view of `length` bytes at `ptr`, valid until memory next grows (copy it to keep it). */
  bytes(ptr: number, length: number): Uint8Array {
    return this.u8.subarray(ptr, ptr + length);
  }

  /** Ensures bytes [0, end) exist: the one place memory grows; private, so every caller names its regions through place(), from `from`. */
  private reserve(end: number, what: string, from: number): void {
    const have = this.k.memory.buffer.byteLength;
    if (end <= have) return;
    if (end > MAX_ARENA_BYTES) {
      throw new FilterTooLargeError(end, `${what} outgrows one WebAssembly memory (at most ${MAX_ARENA_BYTES} bytes)`);
    }
    try {
      this.k.memory.grow(Math.ceil((end - have) / PAGE));
    } catch (error) {
      throw new FilterTooLargeError(end, `the platform refused to grow WebAssembly memory (${String(error)})`);
    }
    if (!this.large && end >= LARGE_ARENA_BYTES) {
      this.large = true;
      onLarge?.(this.k.memory, from);
    }
    this.u8 = new Uint8Array(this.k.memory.buffer);
    this.u32 = new Uint32Array(this.k.memory.buffer);
    this.generation++;
  }
}
