// A kernel's state record at a fixed address, read and written by field name: the fields' byte
// offsets come from the module's exported globals (AGED_FRONT, ...), so the wrapper never writes
// an offset of its own and a field the kernel moves moves here too.

/** Named u32 fields of a record at `ptr`, at the byte offsets the kernel exports. */
export class U32Record<F extends string> {
  constructor(
    /** Address of the record. */
    readonly ptr: number,
    private readonly offsets: { readonly [K in F]: WebAssembly.Global },
  ) {}

  /** The field's value in `memory` (the whole memory's byte view). */
  get(memory: Uint8Array, field: F): number {
    return new DataView(memory.buffer, memory.byteOffset).getUint32(this.ptr + this.offset(field), true);
  }

  /** Writes the field's value into `memory`. */
  set(memory: Uint8Array, field: F, value: number): void {
    new DataView(memory.buffer, memory.byteOffset).setUint32(this.ptr + this.offset(field), value, true);
  }

  /** Where the field lies (the start of a sub-array the record ends with, say). */
  address(field: F): number {
    return this.ptr + this.offset(field);
  }

  private offset(field: F): number {
    return this.offsets[field].value as number;
  }
}
