// Packed counters of b bits (2, 4 or 8): counter i is bits [i*b, i*b + b) of the array, LSB
// first, so a counter never straddles a byte. Shared by the counting filter and the exact store.

/** Address of the byte holding counter i. */
// @ts-ignore: decorator
@inline export function counterAddress(counters: usize, i: u64, bits: u32): usize {
  return counters + <usize>((i * <u64>bits) >> 3);
}

/** Value of counter i (max = 2^b - 1). */
// @ts-ignore: decorator
@inline export function readCounter(counters: usize, i: u64, bits: u32, max: u32): u32 {
  return (<u32>load<u8>(counterAddress(counters, i, bits)) >> <u32>((i * <u64>bits) & 7)) & max;
}

/** Sets counter i to value (value <= max). */
// @ts-ignore: decorator
@inline export function writeCounter(counters: usize, i: u64, bits: u32, max: u32, value: u32): void {
  const p = counterAddress(counters, i, bits);
  const shift = <u32>((i * <u64>bits) & 7);
  store<u8>(p, <u8>((<u32>load<u8>(p) & ~(max << shift)) | (value << shift)));
}
