// The elements of an array region read as records of u32 words by element index and field name
// (the near-duplicate kernels' (query, id, position) matches, the staged hash pairs): the element
// size and each field's offset come from the kernel's exported globals, and the arithmetic from
// (element, field) to a word is written here once. A u64 field is read as its low and high u32
// words, so a hot loop never goes through BigInt. The view is made once per batch and is valid
// until memory grows, like any view of an array region.
import type { ArrayRegion } from "./array-region.js";

/** A field's byte offset inside an element: a global the module exports, or 0 for a layout's first word. */
export type WordOffset = WebAssembly.Global | 0;

/** Elements [from, from + n) of an array region as records with the named fields. */
export class RecordArray<F extends string> {
  private readonly words: Uint32Array;
  private readonly stride: number;
  private readonly offsets: { [K in F]: number };

  constructor(
    memory: Uint8Array,
    region: ArrayRegion,
    fields: { readonly [K in F]: WordOffset },
    from = 0,
    n = region.length - from,
  ) {
    if (region.size % 4 !== 0) throw new RangeError(`elements of ${region.size} bytes are not whole u32 words`);
    this.words = region.view(memory, Uint32Array, from, n);
    this.stride = region.size / 4;
    const offsets = {} as { [K in F]: number };
    for (const name of Object.keys(fields) as F[]) {
      const spec = fields[name];
      const bytes = spec === 0 ? 0 : (spec.value as number);
      if (!(bytes % 4 === 0 && bytes >= 0 && bytes < region.size))
        throw new RangeError(`field ${name} at byte ${bytes} is not a u32 word of a ${region.size}-byte element`);
      offsets[name] = bytes / 4;
    }
    this.offsets = offsets;
  }

  /** Elements in view. */
  get length(): number {
    return this.words.length / this.stride;
  }

  /** A field's word inside an element (its low word for a u64), to hand to word() in a hot loop. */
  low(field: F): number {
    return this.offsets[field];
  }

  /** The high word of a u64 field, to hand to word(). */
  high(field: F): number {
    const at = this.offsets[field] + 1;
    if (at >= this.stride) throw new RangeError(`field ${field} has no high word inside its element`);
    return at;
  }

  /** Word `at` (from low() or high()) of element i. */
  word(i: number, at: number): number {
    return this.words[i * this.stride + at];
  }

  /** Sets word `at` of element i. */
  setWord(i: number, at: number, value: number): void {
    this.words[i * this.stride + at] = value;
  }

  /** The u32 field (or a u64 field's low word) of element i. */
  get(i: number, field: F): number {
    return this.word(i, this.offsets[field]);
  }
}
