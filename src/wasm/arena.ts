// One WebAssembly instance and its memory, owned by one structure. Regions are laid out by the
// owner; the arena grows memory on request and re-creates its views right then (growth detaches
// the old ArrayBuffer, and a write through a detached view is silently lost). The kernels never
// grow memory themselves, so reserve() is the only place the buffer can change and the hot path
// never has to ask the memory for its buffer.
import { FilterTooLargeError } from "../errors.js";
import { instantiate } from "./module.js";
import type { Kernels } from "./kernels.js";

const PAGE = 65536;
/** wasm32 addresses 4 GiB; one page less keeps every end offset a valid u32. */
export const MAX_ARENA_BYTES = 65535 * PAGE;

/** Rounds `n` up to a multiple of `to` (a power of two). */
export function alignUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** An instance of the kernel module with the views of its memory. */
export class Arena {
  /** The instance's kernel functions. */
  readonly k: Kernels;
  /** First free byte after the module's static data, 64-byte aligned. */
  readonly base: number;
  /** A byte view of the whole memory, replaced by reserve() when memory grows. */
  u8: Uint8Array;
  /** A u32 view of the whole memory, replaced by reserve() when memory grows. */
  u32: Uint32Array;
  /** Counts memory growths, so holders of sub-views know when to re-create them. */
  generation = 0;

  constructor(initialBytes = 0) {
    this.k = instantiate();
    this.base = alignUp(this.k.heapBase(), 64);
    this.u8 = new Uint8Array(this.k.memory.buffer);
    this.u32 = new Uint32Array(this.k.memory.buffer);
    this.reserve(initialBytes);
  }

  /** Ensures bytes [0, end) exist; may grow memory (so re-read u8 and u32 after calling it). */
  reserve(end: number): void {
    const have = this.k.memory.buffer.byteLength;
    if (end <= have) return;
    if (end > MAX_ARENA_BYTES) {
      throw new FilterTooLargeError(end, `one WebAssembly memory holds at most ${MAX_ARENA_BYTES} bytes`);
    }
    try {
      this.k.memory.grow(Math.ceil((end - have) / PAGE));
    } catch (error) {
      throw new FilterTooLargeError(end, `the platform refused to grow WebAssembly memory (${String(error)})`);
    }
    this.u8 = new Uint8Array(this.k.memory.buffer);
    this.u32 = new Uint32Array(this.k.memory.buffer);
    this.generation++;
  }
}
