// One WebAssembly instance and its memory, owned by one structure. Regions are laid out by the
// owner; the arena grows memory on request and re-creates its views only when the buffer changed
// (growth detaches the old ArrayBuffer, and a write through a detached view is silently lost).
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
  private buffer: ArrayBuffer;
  private bytes: Uint8Array;
  private words: Uint32Array;

  constructor(initialBytes = 0) {
    this.k = instantiate();
    this.base = alignUp(this.k.heapBase(), 64);
    this.buffer = this.k.memory.buffer;
    this.bytes = new Uint8Array(this.buffer);
    this.words = new Uint32Array(this.buffer);
    this.reserve(initialBytes);
  }

  /** Ensures bytes [0, end) exist; may grow memory (so re-read views after calling it). */
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
  }

  /** A byte view of the whole memory, valid until the next reserve(). */
  get u8(): Uint8Array {
    if (this.buffer !== this.k.memory.buffer) this.refresh();
    return this.bytes;
  }

  /** A u32 view of the whole memory, valid until the next reserve(). */
  get u32(): Uint32Array {
    if (this.buffer !== this.k.memory.buffer) this.refresh();
    return this.words;
  }

  private refresh(): void {
    this.buffer = this.k.memory.buffer;
    this.bytes = new Uint8Array(this.buffer);
    this.words = new Uint32Array(this.buffer);
  }
}
