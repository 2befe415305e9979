/** floor(x * m / 2^64): maps a uniform 64-bit hash onto [0, m) without a division (Lemire). */
// @ts-ignore: decorator
@inline export function mulhi64(x: u64, m: u64): u64 {
  const xl = x & 0xFFFFFFFF;
  const xh = x >> 32;
  const ml = m & 0xFFFFFFFF;
  const mh = m >> 32;
  const ll = xl * ml;
  const lh = xl * mh;
  const hl = xh * ml;
  const carry = ((ll >> 32) + (lh & 0xFFFFFFFF) + (hl & 0xFFFFFFFF)) >> 32;
  return xh * mh + (lh >> 32) + (hl >> 32) + carry;
}
