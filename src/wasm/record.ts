// A kernel's record at a fixed address (a state block, a context, one element of an array region),
// read and written by field name: each field's byte offset comes from a global the module exports
// (AGED_FRONT, LINE_LINES, ...) and its type is said once here, so the wrapper never adds an offset
// to an address itself and a field the kernel moves moves here too.

/** How a field is stored: u32, u64 (read and written as a number, so exact below 2^53), or f64. */
export type FieldType = "u32" | "u64" | "f64";

/** A field: the global holding its byte offset and, when not a u32, its type. */
export type FieldSpec = WebAssembly.Global | { readonly offset: WebAssembly.Global; readonly type: FieldType };

/** A u64 field at the offset `offset` holds (counts kept by a kernel). */
export function u64(offset: WebAssembly.Global): FieldSpec {
  return { offset, type: "u64" };
}

/** An f64 field at the offset `offset` holds. */
export function f64(offset: WebAssembly.Global): FieldSpec {
  return { offset, type: "f64" };
}

/** Named fields of a record at `ptr`, at the byte offsets the kernel exports. */
export class KernelRecord<F extends string> {
  private view: DataView | undefined;

  constructor(
    /** Address of the record. */
    readonly ptr: number,
    private readonly fields: { readonly [K in F]: FieldSpec },
  ) {}

  /** The same fields in the record at `ptr` (the next element of an array of records). */
  at(ptr: number): KernelRecord<F> {
    return new KernelRecord(ptr, this.fields);
  }

  /** The field's value in `memory` (the whole memory's byte view). */
  get(memory: Uint8Array, field: F): number {
    const view = this.dataView(memory);
    const at = this.address(field);
    switch (this.type(field)) {
      case "u32":
        return view.getUint32(at, true);
      case "u64":
        return Number(view.getBigUint64(at, true));
      case "f64":
        return view.getFloat64(at, true);
    }
  }

  /** Writes the field's value into `memory`. */
  set(memory: Uint8Array, field: F, value: number): void {
    const view = this.dataView(memory);
    const at = this.address(field);
    switch (this.type(field)) {
      case "u32":
        return view.setUint32(at, value, true);
      case "u64":
        return view.setBigUint64(at, BigInt(value), true);
      case "f64":
        return view.setFloat64(at, value, true);
    }
  }

  /** Where the field lies (the start of a sub-array the record ends with, say). */
  address(field: F): number {
    const spec = this.fields[field];
    return this.ptr + ((spec instanceof WebAssembly.Global ? spec.value : spec.offset.value) as number);
  }

  private type(field: F): FieldType {
    const spec = this.fields[field];
    return spec instanceof WebAssembly.Global ? "u32" : spec.type;
  }

  /** A DataView of the whole memory, made again only when memory grew (a new buffer). */
  private dataView(memory: Uint8Array): DataView {
    if (this.view === undefined || this.view.buffer !== memory.buffer)
      this.view = new DataView(memory.buffer, memory.byteOffset);
    return this.view;
  }
}
