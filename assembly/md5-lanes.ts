// MD5 of many short messages at once: four messages in the four 32-bit lanes of a v128, one
// compression of four blocks per pass. Each lane takes the next message as soon as its own is
// done, so lanes stay busy whatever the mix of lengths (URL-length lines are one or two blocks).
// A message's whole blocks are read in place; its last one or two (tail, 0x80, zeros, bit length,
// as RFC 1321 pads) are built in the lane's pad buffer. The round functions are one or two v128
// operations each (F and G are bit selects); only the rotation costs three (no v128 rotate).

// Scratch: saved state a, b, c, d (one v128 each) | four lane records | four 128-byte pad buffers.
const SAVE: usize = 0;
const LANES: usize = 64;
const LANE: usize = 32;
const PADS: usize = LANES + 4 * LANE;
/** Bytes of the scratch md5Lanes (and md5Batch) needs. */
export const MD5_LANES_SCRATCH_BYTES: u32 = <u32>(PADS + 4 * 128);
// Lane record: message bytes, its whole blocks, all its blocks, blocks done, digest address, live.
const SRC: usize = 0;
const WHOLE: usize = 4;
const TOTAL: usize = 8;
const DONE: usize = 12;
const OUT: usize = 16;
const LIVE: usize = 20;

const A0: u32 = 0x67452301;
const B0: u32 = 0xEFCDAB89;
const C0: u32 = 0x98BADCFE;
const D0: u32 = 0x10325476;

// @ts-ignore: decorator
@inline function rot(v: v128, s: i32): v128 {
  return v128.or(i32x4.shl(v, s), i32x4.shr_u(v, 32 - s));
}
// As in md5-compress.ts, a + x + t is formed apart from the round function of b, c, d.
// @ts-ignore: decorator
@inline function laneF(a: v128, b: v128, c: v128, d: v128, x: v128, s: i32, t: u32): v128 {
  return i32x4.add(rot(i32x4.add(i32x4.add(a, i32x4.add(x, i32x4.splat(t))), v128.bitselect(c, d, b)), s), b);
}
// @ts-ignore: decorator
@inline function laneG(a: v128, b: v128, c: v128, d: v128, x: v128, s: i32, t: u32): v128 {
  return i32x4.add(rot(i32x4.add(i32x4.add(a, i32x4.add(x, i32x4.splat(t))), v128.bitselect(b, c, d)), s), b);
}
// @ts-ignore: decorator
@inline function laneH(a: v128, b: v128, c: v128, d: v128, x: v128, s: i32, t: u32): v128 {
  return i32x4.add(rot(i32x4.add(i32x4.add(a, i32x4.add(x, i32x4.splat(t))), v128.xor(b, v128.xor(c, d))), s), b);
}
// @ts-ignore: decorator
@inline function laneI(a: v128, b: v128, c: v128, d: v128, x: v128, s: i32, t: u32): v128 {
  return i32x4.add(rot(i32x4.add(i32x4.add(a, i32x4.add(x, i32x4.splat(t))), v128.xor(c, v128.or(b, v128.not(d)))), s), b);
}

/** Gives lane record `rec` (pad buffer `pad`) the message of `len` bytes at `msg`, digest to `out`. */
// @ts-ignore: decorator
@inline function begin(rec: usize, pad: usize, msg: usize, len: usize, out: usize): void {
  const whole = len >> 6;
  const rest = len & 63;
  const padBlocks: usize = rest < 56 ? 1 : 2;
  const end = pad + (padBlocks << 6);
  memory.copy(pad, msg + (whole << 6), rest);
  store<u8>(pad + rest, 0x80);
  memory.fill(pad + rest + 1, 0, end - 8 - (pad + rest + 1));
  store<u64>(end - 8, <u64>len << 3);
  store<u32>(rec, <u32>msg, SRC);
  store<u32>(rec, <u32>whole, WHOLE);
  store<u32>(rec, <u32>(whole + padBlocks), TOTAL);
  store<u32>(rec, 0, DONE);
  store<u32>(rec, <u32>out, OUT);
  store<u32>(rec, 1, LIVE);
}

/** The block lane record `rec` works next (a dead lane works its pad buffer, and its result is dropped). */
// @ts-ignore: decorator
@inline function blockOf(rec: usize, pad: usize): usize {
  const done = load<u32>(rec, DONE);
  const whole = load<u32>(rec, WHOLE);
  if (load<u32>(rec, LIVE) == 0) return pad;
  return done < whole ? <usize>load<u32>(rec, SRC) + (<usize>done << 6) : pad + (<usize>(done - whole) << 6);
}

/**
 * MD5 of `count` messages, message i being the bytes from base + the u32 at recs + i * stride up to
 * base + the u32 after it; digest i goes to out + 16 i. `scratch` holds MD5_LANES_SCRATCH_BYTES.
 */
export function md5Lanes(scratch: usize, base: usize, recs: usize, stride: usize, count: u32, out: usize): void {
  let next: u32 = 0;
  let live: u32 = 0;
  for (let j: usize = 0; j < 4; j++) {
    const rec = scratch + LANES + j * LANE;
    if (next < count) {
      const r = recs + <usize>next * stride;
      const msg = base + <usize>load<u32>(r);
      begin(rec, scratch + PADS + (j << 7), msg, base + <usize>load<u32>(r, 4) - msg, out + (<usize>next << 4));
      next++;
      live++;
    } else {
      store<u32>(rec, 0, LIVE);
    }
  }
  let a = i32x4.splat(A0);
  let b = i32x4.splat(B0);
  let c = i32x4.splat(C0);
  let d = i32x4.splat(D0);
  while (live > 0) {
    const p0 = blockOf(scratch + LANES, scratch + PADS);
    const p1 = blockOf(scratch + LANES + LANE, scratch + PADS + 128);
    const p2 = blockOf(scratch + LANES + 2 * LANE, scratch + PADS + 256);
    const p3 = blockOf(scratch + LANES + 3 * LANE, scratch + PADS + 384);
    // Word w of the four blocks into one v128: a 4 x 4 transpose per 16 bytes of each block,
    // written out four times so the words stay in registers (a loop through memory measured
    // 15-40% slower a line).
    let q0 = v128.load(p0), q1 = v128.load(p1), q2 = v128.load(p2), q3 = v128.load(p3);
    let t0 = i32x4.shuffle(q0, q1, 0, 4, 1, 5), t1 = i32x4.shuffle(q0, q1, 2, 6, 3, 7);
    let t2 = i32x4.shuffle(q2, q3, 0, 4, 1, 5), t3 = i32x4.shuffle(q2, q3, 2, 6, 3, 7);
    const x0 = i64x2.shuffle(t0, t2, 0, 2), x1 = i64x2.shuffle(t0, t2, 1, 3);
    const x2 = i64x2.shuffle(t1, t3, 0, 2), x3 = i64x2.shuffle(t1, t3, 1, 3);
    q0 = v128.load(p0, 16); q1 = v128.load(p1, 16); q2 = v128.load(p2, 16); q3 = v128.load(p3, 16);
    t0 = i32x4.shuffle(q0, q1, 0, 4, 1, 5); t1 = i32x4.shuffle(q0, q1, 2, 6, 3, 7);
    t2 = i32x4.shuffle(q2, q3, 0, 4, 1, 5); t3 = i32x4.shuffle(q2, q3, 2, 6, 3, 7);
    const x4 = i64x2.shuffle(t0, t2, 0, 2), x5 = i64x2.shuffle(t0, t2, 1, 3);
    const x6 = i64x2.shuffle(t1, t3, 0, 2), x7 = i64x2.shuffle(t1, t3, 1, 3);
    q0 = v128.load(p0, 32); q1 = v128.load(p1, 32); q2 = v128.load(p2, 32); q3 = v128.load(p3, 32);
    t0 = i32x4.shuffle(q0, q1, 0, 4, 1, 5); t1 = i32x4.shuffle(q0, q1, 2, 6, 3, 7);
    t2 = i32x4.shuffle(q2, q3, 0, 4, 1, 5); t3 = i32x4.shuffle(q2, q3, 2, 6, 3, 7);
    const x8 = i64x2.shuffle(t0, t2, 0, 2), x9 = i64x2.shuffle(t0, t2, 1, 3);
    const x10 = i64x2.shuffle(t1, t3, 0, 2), x11 = i64x2.shuffle(t1, t3, 1, 3);
    q0 = v128.load(p0, 48); q1 = v128.load(p1, 48); q2 = v128.load(p2, 48); q3 = v128.load(p3, 48);
    t0 = i32x4.shuffle(q0, q1, 0, 4, 1, 5); t1 = i32x4.shuffle(q0, q1, 2, 6, 3, 7);
    t2 = i32x4.shuffle(q2, q3, 0, 4, 1, 5); t3 = i32x4.shuffle(q2, q3, 2, 6, 3, 7);
    const x12 = i64x2.shuffle(t0, t2, 0, 2), x13 = i64x2.shuffle(t0, t2, 1, 3);
    const x14 = i64x2.shuffle(t1, t3, 0, 2), x15 = i64x2.shuffle(t1, t3, 1, 3);
    const aa = a, bb = b, cc = c, dd = d;
      a = laneF(a, b, c, d, x0, 7, 0xD76AA478);
      d = laneF(d, a, b, c, x1, 12, 0xE8C7B756);
      c = laneF(c, d, a, b, x2, 17, 0x242070DB);
      b = laneF(b, c, d, a, x3, 22, 0xC1BDCEEE);
      a = laneF(a, b, c, d, x4, 7, 0xF57C0FAF);
      d = laneF(d, a, b, c, x5, 12, 0x4787C62A);
      c = laneF(c, d, a, b, x6, 17, 0xA8304613);
      b = laneF(b, c, d, a, x7, 22, 0xFD469501);
      a = laneF(a, b, c, d, x8, 7, 0x698098D8);
      d = laneF(d, a, b, c, x9, 12, 0x8B44F7AF);
      c = laneF(c, d, a, b, x10, 17, 0xFFFF5BB1);
      b = laneF(b, c, d, a, x11, 22, 0x895CD7BE);
      a = laneF(a, b, c, d, x12, 7, 0x6B901122);
      d = laneF(d, a, b, c, x13, 12, 0xFD987193);
      c = laneF(c, d, a, b, x14, 17, 0xA679438E);
      b = laneF(b, c, d, a, x15, 22, 0x49B40821);
      a = laneG(a, b, c, d, x1, 5, 0xF61E2562);
      d = laneG(d, a, b, c, x6, 9, 0xC040B340);
      c = laneG(c, d, a, b, x11, 14, 0x265E5A51);
      b = laneG(b, c, d, a, x0, 20, 0xE9B6C7AA);
      a = laneG(a, b, c, d, x5, 5, 0xD62F105D);
      d = laneG(d, a, b, c, x10, 9, 0x02441453);
      c = laneG(c, d, a, b, x15, 14, 0xD8A1E681);
      b = laneG(b, c, d, a, x4, 20, 0xE7D3FBC8);
      a = laneG(a, b, c, d, x9, 5, 0x21E1CDE6);
      d = laneG(d, a, b, c, x14, 9, 0xC33707D6);
      c = laneG(c, d, a, b, x3, 14, 0xF4D50D87);
      b = laneG(b, c, d, a, x8, 20, 0x455A14ED);
      a = laneG(a, b, c, d, x13, 5, 0xA9E3E905);
      d = laneG(d, a, b, c, x2, 9, 0xFCEFA3F8);
      c = laneG(c, d, a, b, x7, 14, 0x676F02D9);
      b = laneG(b, c, d, a, x12, 20, 0x8D2A4C8A);
      a = laneH(a, b, c, d, x5, 4, 0xFFFA3942);
      d = laneH(d, a, b, c, x8, 11, 0x8771F681);
      c = laneH(c, d, a, b, x11, 16, 0x6D9D6122);
      b = laneH(b, c, d, a, x14, 23, 0xFDE5380C);
      a = laneH(a, b, c, d, x1, 4, 0xA4BEEA44);
      d = laneH(d, a, b, c, x4, 11, 0x4BDECFA9);
      c = laneH(c, d, a, b, x7, 16, 0xF6BB4B60);
      b = laneH(b, c, d, a, x10, 23, 0xBEBFBC70);
      a = laneH(a, b, c, d, x13, 4, 0x289B7EC6);
      d = laneH(d, a, b, c, x0, 11, 0xEAA127FA);
      c = laneH(c, d, a, b, x3, 16, 0xD4EF3085);
      b = laneH(b, c, d, a, x6, 23, 0x04881D05);
      a = laneH(a, b, c, d, x9, 4, 0xD9D4D039);
      d = laneH(d, a, b, c, x12, 11, 0xE6DB99E5);
      c = laneH(c, d, a, b, x15, 16, 0x1FA27CF8);
      b = laneH(b, c, d, a, x2, 23, 0xC4AC5665);
      a = laneI(a, b, c, d, x0, 6, 0xF4292244);
      d = laneI(d, a, b, c, x7, 10, 0x432AFF97);
      c = laneI(c, d, a, b, x14, 15, 0xAB9423A7);
      b = laneI(b, c, d, a, x5, 21, 0xFC93A039);
      a = laneI(a, b, c, d, x12, 6, 0x655B59C3);
      d = laneI(d, a, b, c, x3, 10, 0x8F0CCC92);
      c = laneI(c, d, a, b, x10, 15, 0xFFEFF47D);
      b = laneI(b, c, d, a, x1, 21, 0x85845DD1);
      a = laneI(a, b, c, d, x8, 6, 0x6FA87E4F);
      d = laneI(d, a, b, c, x15, 10, 0xFE2CE6E0);
      c = laneI(c, d, a, b, x6, 15, 0xA3014314);
      b = laneI(b, c, d, a, x13, 21, 0x4E0811A1);
      a = laneI(a, b, c, d, x4, 6, 0xF7537E82);
      d = laneI(d, a, b, c, x11, 10, 0xBD3AF235);
      c = laneI(c, d, a, b, x2, 15, 0x2AD7D2BB);
      b = laneI(b, c, d, a, x9, 21, 0xEB86D391);
    a = i32x4.add(a, aa);
    b = i32x4.add(b, bb);
    c = i32x4.add(c, cc);
    d = i32x4.add(d, dd);
    // A lane whose message is done writes its digest and takes the next message.
    let finished = false;
    for (let j: usize = 0; j < 4; j++) {
      const rec = scratch + LANES + j * LANE;
      if (load<u32>(rec, LIVE) == 0) continue;
      const done = load<u32>(rec, DONE) + 1;
      store<u32>(rec, done, DONE);
      if (done == load<u32>(rec, TOTAL)) finished = true;
    }
    if (!finished) continue;
    v128.store(scratch + SAVE, a);
    v128.store(scratch + SAVE, b, 16);
    v128.store(scratch + SAVE, c, 32);
    v128.store(scratch + SAVE, d, 48);
    for (let j: usize = 0; j < 4; j++) {
      const rec = scratch + LANES + j * LANE;
      if (load<u32>(rec, LIVE) == 0 || load<u32>(rec, DONE) != load<u32>(rec, TOTAL)) continue;
      const o = <usize>load<u32>(rec, OUT);
      const w = scratch + SAVE + (j << 2);
      store<u32>(o, load<u32>(w));
      store<u32>(o, load<u32>(w, 16), 4);
      store<u32>(o, load<u32>(w, 32), 8);
      store<u32>(o, load<u32>(w, 48), 12);
      if (next < count) {
        const r = recs + <usize>next * stride;
        const msg = base + <usize>load<u32>(r);
        begin(rec, scratch + PADS + (j << 7), msg, base + <usize>load<u32>(r, 4) - msg, out + (<usize>next << 4));
        next++;
        store<u32>(w, A0);
        store<u32>(w, B0, 16);
        store<u32>(w, C0, 32);
        store<u32>(w, D0, 48);
      } else {
        store<u32>(rec, 0, LIVE);
        live--;
      }
    }
    a = v128.load(scratch + SAVE);
    b = v128.load(scratch + SAVE, 16);
    c = v128.load(scratch + SAVE, 32);
    d = v128.load(scratch + SAVE, 48);
  }
}
