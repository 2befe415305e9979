// MD5 per RFC 1321, over linear memory. Words are read little-endian straight from memory
// (wasm is little-endian, as MD5 is). The 64 steps are unrolled with the constants of the
// RFC's table, T[i] = floor(abs(sin(i + 1)) * 2^32), written out once by a generator.

// Each step adds a + x + t first: none of them waits for b, the value the previous step just
// produced, so only the round function and the rotation sit on the critical path. G uses the
// (b & d) + (c & ~d) form and H b ^ (c ^ d) for the same reason.

// @ts-ignore: decorator
@inline function stepF(a: u32, b: u32, c: u32, d: u32, x: u32, s: u32, t: u32): u32 {
  return rotl<u32>(a + x + t + (d ^ (b & (c ^ d))), s) + b;
}
// @ts-ignore: decorator
@inline function stepG(a: u32, b: u32, c: u32, d: u32, x: u32, s: u32, t: u32): u32 {
  return rotl<u32>(a + x + t + (c & ~d) + (b & d), s) + b;
}
// @ts-ignore: decorator
@inline function stepH(a: u32, b: u32, c: u32, d: u32, x: u32, s: u32, t: u32): u32 {
  return rotl<u32>(a + x + t + (b ^ (c ^ d)), s) + b;
}
// @ts-ignore: decorator
@inline function stepI(a: u32, b: u32, c: u32, d: u32, x: u32, s: u32, t: u32): u32 {
  return rotl<u32>(a + x + t + (c ^ (b | ~d)), s) + b;
}

/** Applies the MD5 compression function to `blocks` 64-byte blocks at `p`, updating the state at `st`. */
export function md5Blocks(st: usize, p: usize, blocks: usize): void {
  let a = load<u32>(st);
  let b = load<u32>(st, 4);
  let c = load<u32>(st, 8);
  let d = load<u32>(st, 12);
  for (let n: usize = 0; n < blocks; n++) {
    const aa = a, bb = b, cc = c, dd = d;
    // Each word is used four times: read it from memory once.
    const x0 = load<u32>(p, 0);
    const x1 = load<u32>(p, 4);
    const x2 = load<u32>(p, 8);
    const x3 = load<u32>(p, 12);
    const x4 = load<u32>(p, 16);
    const x5 = load<u32>(p, 20);
    const x6 = load<u32>(p, 24);
    const x7 = load<u32>(p, 28);
    const x8 = load<u32>(p, 32);
    const x9 = load<u32>(p, 36);
    const x10 = load<u32>(p, 40);
    const x11 = load<u32>(p, 44);
    const x12 = load<u32>(p, 48);
    const x13 = load<u32>(p, 52);
    const x14 = load<u32>(p, 56);
    const x15 = load<u32>(p, 60);
    a = stepF(a, b, c, d, x0, 7, 0xD76AA478);
    d = stepF(d, a, b, c, x1, 12, 0xE8C7B756);
    c = stepF(c, d, a, b, x2, 17, 0x242070DB);
    b = stepF(b, c, d, a, x3, 22, 0xC1BDCEEE);
    a = stepF(a, b, c, d, x4, 7, 0xF57C0FAF);
    d = stepF(d, a, b, c, x5, 12, 0x4787C62A);
    c = stepF(c, d, a, b, x6, 17, 0xA8304613);
    b = stepF(b, c, d, a, x7, 22, 0xFD469501);
    a = stepF(a, b, c, d, x8, 7, 0x698098D8);
    d = stepF(d, a, b, c, x9, 12, 0x8B44F7AF);
    c = stepF(c, d, a, b, x10, 17, 0xFFFF5BB1);
    b = stepF(b, c, d, a, x11, 22, 0x895CD7BE);
    a = stepF(a, b, c, d, x12, 7, 0x6B901122);
    d = stepF(d, a, b, c, x13, 12, 0xFD987193);
    c = stepF(c, d, a, b, x14, 17, 0xA679438E);
    b = stepF(b, c, d, a, x15, 22, 0x49B40821);
    a = stepG(a, b, c, d, x1, 5, 0xF61E2562);
    d = stepG(d, a, b, c, x6, 9, 0xC040B340);
    c = stepG(c, d, a, b, x11, 14, 0x265E5A51);
    b = stepG(b, c, d, a, x0, 20, 0xE9B6C7AA);
    a = stepG(a, b, c, d, x5, 5, 0xD62F105D);
    d = stepG(d, a, b, c, x10, 9, 0x02441453);
    c = stepG(c, d, a, b, x15, 14, 0xD8A1E681);
    b = stepG(b, c, d, a, x4, 20, 0xE7D3FBC8);
    a = stepG(a, b, c, d, x9, 5, 0x21E1CDE6);
    d = stepG(d, a, b, c, x14, 9, 0xC33707D6);
    c = stepG(c, d, a, b, x3, 14, 0xF4D50D87);
    b = stepG(b, c, d, a, x8, 20, 0x455A14ED);
    a = stepG(a, b, c, d, x13, 5, 0xA9E3E905);
    d = stepG(d, a, b, c, x2, 9, 0xFCEFA3F8);
    c = stepG(c, d, a, b, x7, 14, 0x676F02D9);
    b = stepG(b, c, d, a, x12, 20, 0x8D2A4C8A);
    a = stepH(a, b, c, d, x5, 4, 0xFFFA3942);
    d = stepH(d, a, b, c, x8, 11, 0x8771F681);
    c = stepH(c, d, a, b, x11, 16, 0x6D9D6122);
    b = stepH(b, c, d, a, x14, 23, 0xFDE5380C);
    a = stepH(a, b, c, d, x1, 4, 0xA4BEEA44);
    d = stepH(d, a, b, c, x4, 11, 0x4BDECFA9);
    c = stepH(c, d, a, b, x7, 16, 0xF6BB4B60);
    b = stepH(b, c, d, a, x10, 23, 0xBEBFBC70);
    a = stepH(a, b, c, d, x13, 4, 0x289B7EC6);
    d = stepH(d, a, b, c, x0, 11, 0xEAA127FA);
    c = stepH(c, d, a, b, x3, 16, 0xD4EF3085);
    b = stepH(b, c, d, a, x6, 23, 0x04881D05);
    a = stepH(a, b, c, d, x9, 4, 0xD9D4D039);
    d = stepH(d, a, b, c, x12, 11, 0xE6DB99E5);
    c = stepH(c, d, a, b, x15, 16, 0x1FA27CF8);
    b = stepH(b, c, d, a, x2, 23, 0xC4AC5665);
    a = stepI(a, b, c, d, x0, 6, 0xF4292244);
    d = stepI(d, a, b, c, x7, 10, 0x432AFF97);
    c = stepI(c, d, a, b, x14, 15, 0xAB9423A7);
    b = stepI(b, c, d, a, x5, 21, 0xFC93A039);
    a = stepI(a, b, c, d, x12, 6, 0x655B59C3);
    d = stepI(d, a, b, c, x3, 10, 0x8F0CCC92);
    c = stepI(c, d, a, b, x10, 15, 0xFFEFF47D);
    b = stepI(b, c, d, a, x1, 21, 0x85845DD1);
    a = stepI(a, b, c, d, x8, 6, 0x6FA87E4F);
    d = stepI(d, a, b, c, x15, 10, 0xFE2CE6E0);
    c = stepI(c, d, a, b, x6, 15, 0xA3014314);
    b = stepI(b, c, d, a, x13, 21, 0x4E0811A1);
    a = stepI(a, b, c, d, x4, 6, 0xF7537E82);
    d = stepI(d, a, b, c, x11, 10, 0xBD3AF235);
    c = stepI(c, d, a, b, x2, 15, 0x2AD7D2BB);
    b = stepI(b, c, d, a, x9, 21, 0xEB86D391);
    a += aa; b += bb; c += cc; d += dd;
    p += 64;
  }
  store<u32>(st, a);
  store<u32>(st, b, 4);
  store<u32>(st, c, 8);
  store<u32>(st, d, 12);
}
