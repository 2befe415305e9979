// A region of equal-sized elements (digests of 16 bytes, flags of one, sketches of 4(k + 1), shards
// of a filter): the planner hands one out for each region named with array(size, length), so a
// structure says which element it means (`digests.at(done)`, `out.copyOut(memory, flags, at, n)`)
// and the arithmetic from element to address is written here once, with a bounds check that turns
// a wrong index into a RangeError instead of a silent write into the neighbouring region.
// Views are made from the memory view passed in, never kept: memory growth replaces that view.

/** A typed-array constructor over a buffer (Uint8Array, Uint32Array, Float64Array, ...). */
export interface ViewType<T> {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/** A typed array as this file reads and writes it. */
type Typed = ArrayBufferView & {
  readonly length: number;
  readonly BYTES_PER_ELEMENT: number;
  set(from: ArrayLike<number> | ArrayLike<bigint>, at?: number): void;
};

/**
 * The class to view memory as for elements like `a`'s. A Node Buffer is a Uint8Array whose own
 * constructor, called as (buffer, offset, length), is the deprecated Buffer() (a warning on
 * stderr, and slower), so any Uint8Array subclass is viewed as a plain Uint8Array.
 */
function viewTypeOf(a: Typed): ViewType<Typed> {
  return (a instanceof Uint8Array ? Uint8Array : a.constructor) as unknown as ViewType<Typed>;
}

/** What the planner takes for an array region: the element's bytes and how many elements. */
export interface ArraySpec {
  readonly size: number;
  readonly length: number;
}

/** An array region of `length` elements of `size` bytes each (array(16, BATCH): a batch of digests). */
export function array(size: number, length: number): ArraySpec {
  if (!(Number.isSafeInteger(size) && size > 0 && Number.isSafeInteger(length) && length >= 0)) {
    throw new RangeError(`an array region needs a positive element size and a length >= 0, not ${size} x ${length}`);
  }
  return { size, length };
}

/** `length` elements of `size` bytes starting at `ptr` (a cache-line start when the planner placed it). */
export class ArrayRegion {
  constructor(
    /** Address of element 0. */
    readonly ptr: number,
    /** Bytes of one element. */
    readonly size: number,
    /** Elements. */
    readonly length: number,
  ) {}

  /** Bytes of the whole region. */
  get byteLength(): number {
    return this.size * this.length;
  }

  /** Address just past the last element. */
  get end(): number {
    return this.ptr + this.size * this.length;
  }

  /** Address of element i; i = length is the end, where a run of no elements starts. */
  at(i: number): number {
    this.check(i, 0);
    return this.ptr + i * this.size;
  }

  /** Elements [from, from + n) of `memory` (the whole memory's byte view) as a `type` view; valid until memory grows. */
  view<T>(memory: Uint8Array, type: ViewType<T>, from = 0, n = this.length - from): T {
    this.check(from, n);
    const bytes = n * this.size;
    if (bytes % type.BYTES_PER_ELEMENT !== 0)
      throw new RangeError(`${n} elements of ${this.size} bytes are not whole ${type.BYTES_PER_ELEMENT}-byte words`);
    return new type(memory.buffer, memory.byteOffset + this.ptr + from * this.size, bytes / type.BYTES_PER_ELEMENT);
  }

  /** Elements [from, from + n) as bytes; valid until memory grows. */
  bytes(memory: Uint8Array, from = 0, n = this.length - from): Uint8Array {
    return this.view(memory, Uint8Array, from, n);
  }

  /** Copies elements [0, n) into `into` (a typed array of any width) from its element `at` counted in this region's elements. */
  copyOut(memory: Uint8Array, into: Typed, at: number, n: number): void {
    into.set(
      this.view(memory, viewTypeOf(into), 0, n) as unknown as ArrayLike<number>,
      (at * this.size) / into.BYTES_PER_ELEMENT,
    );
  }

  /** Writes `from` (whole elements, a typed array of any width) into the region from element `at`. */
  copyIn(memory: Uint8Array, from: Typed, at = 0): void {
    if (from.byteLength % this.size !== 0)
      throw new RangeError(`${from.byteLength} bytes are not whole elements of ${this.size} bytes`);
    this.view(memory, viewTypeOf(from), at, from.byteLength / this.size).set(from as unknown as ArrayLike<number>);
  }

  /** Sets every byte of elements [from, from + n) to `value`. */
  fill(memory: Uint8Array, value = 0, from = 0, n = this.length - from): void {
    this.check(from, n);
    memory.fill(value, this.ptr + from * this.size, this.ptr + (from + n) * this.size);
  }

  /**
   * The elements in use, packed in order into a new byte array that must hold exactly `count` of
   * them (a table's slots as its serialized payload): an element is in use when its u32 at byte
   * `flagAt` is not 0 (a reference count), or, without flagAt, when any of its bytes is not 0.
   */
  packed(memory: Uint8Array, count: number, flagAt?: number): Uint8Array {
    if (this.size % 4 !== 0) throw new RangeError(`elements of ${this.size} bytes are not whole u32 words`);
    const w = this.size / 4;
    const words = this.view(memory, Uint32Array);
    const out = new Uint32Array(count * w);
    const flag = flagAt === undefined ? -1 : flagAt / 4;
    let at = 0;
    for (let e = 0; e < words.length; e += w) {
      let used = flag >= 0 && words[e + flag] !== 0;
      for (let j = 0; flag < 0 && !used && j < w; j++) used = words[e + j] !== 0;
      if (!used) continue;
      if (at === out.length) throw new RangeError(`more than ${count} elements of the region are in use`);
      for (let j = 0; j < w; j++) out[at + j] = words[e + j];
      at += w;
    }
    if (at !== out.length) throw new RangeError(`${at / w} elements of the region are in use, not ${count}`);
    return new Uint8Array(out.buffer);
  }

  private check(from: number, n: number): void {
    if (!(Number.isInteger(from) && Number.isInteger(n) && from >= 0 && n >= 0 && from + n <= this.length)) {
      throw new RangeError(`elements ${from}..${from + n} are outside an array region of ${this.length}`);
    }
  }
}
