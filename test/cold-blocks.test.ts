// The block look-up kernels of a disk seen-set's sorted part (assembly/cold-blocks.ts) against a
// brute-force reference written from the documented table order alone: a fingerprint's place is
// the 128-bit number (partition = hi's top 6 bits, lo, hi's bits 32-57, hi's low 32 bits), its
// block the last whose first fingerprint's place is not after it, found when it is one of the
// block's fingerprints. Keys sit on block boundaries, one place either side of them, before every
// block, after the last, and between, so each of the five index words decides some comparison.
import { beforeAll, describe, expect, it } from "vitest";
import { Arena } from "../build/js/wasm/arena.js";
import { array } from "../build/js/wasm/array-region.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const M32 = (1n << 32n) - 1n;
const M64 = (1n << 64n) - 1n;

/** The place in table order of the fingerprint (lo, hi). */
function placeOf(lo: bigint, hi: bigint): bigint {
  return ((hi >> 58n) << 122n) | (lo << 58n) | (((hi >> 32n) & 0x3ffffffn) << 32n) | (hi & M32);
}

/** The fingerprint at a place (the inverse of placeOf). */
function fingerprintAt(place: bigint): [bigint, bigint] {
  const lo = (place >> 58n) & M64;
  const hi = ((place >> 122n) << 58n) | (((place >> 32n) & 0x3ffffffn) << 32n) | (place & M32);
  return [lo, hi];
}

/** The five index words of a place, as the index keeps a block's first. */
function words(place: bigint): number[] {
  return [place >> 122n, (place >> 90n) & M32, (place >> 58n) & M32, (place >> 32n) & 0x3ffffffn, place & M32].map(
    Number,
  );
}

function writeFingerprint(view: DataView, at: number, [lo, hi]: [bigint, bigint]): void {
  view.setBigUint64(at, lo, true);
  view.setBigUint64(at + 8, hi, true);
}

const PER_BLOCK = 256;

describe("the sorted part's block look-up kernels", () => {
  for (const [name, count, seed] of [
    ["one partial block", 37, 1],
    ["many blocks, the last partial", 256 * 9 + 101, 2],
    ["whole blocks", 256 * 6, 3],
  ] as const) {
    it(`${name}: each key's block and presence as a brute-force search over places gives`, () => {
      const next = rng(seed);
      const r64 = () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
      // Stored fingerprints, some crowded into one partition and one low word so later words decide.
      const stored = new Set<bigint>();
      while (stored.size < count) {
        const crowd = next() < 0.3;
        const lo = crowd ? 0x1234n : r64();
        const hi = crowd ? (7n << 58n) | (r64() & ((1n << 58n) - 1n)) : r64();
        stored.add(placeOf(lo, hi));
      }
      const places = [...stored].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const blocks = Math.ceil(count / PER_BLOCK);
      const firsts = Array.from({ length: blocks }, (_, b) => places[b * PER_BLOCK]);
      // Keys: every block's first and the places either side of it, stored and random ones, the smallest and largest places.
      const keys: bigint[] = [0n, (1n << 128n) - 1n, places[0] - 1n, places[places.length - 1] + 1n];
      for (const first of firsts) keys.push(first, first - 1n, first + 1n, first + (1n << 32n), first - (1n << 58n));
      for (let i = 0; i < 400; i++) keys.push(places[Math.floor(next() * places.length)]);
      for (let i = 0; i < 400; i++) keys.push(placeOf(r64(), r64()));
      // Places wrap around 128 bits (one below place 0 is the largest).
      for (let i = 0; i < keys.length; i++) keys[i] &= (1n << 128n) - 1n;
      const n = keys.length;

      const arena = new Arena();
      const r = arena.place(
        {
          firsts: array(20, blocks),
          keys: array(16, n),
          blocks: array(4, 2 * n),
          tags: array(4, n),
          found: array(1, n),
          span: array(16, count),
        },
        arena.base,
        "the test's regions",
      );
      r.firsts.copyIn(arena.u8, new Uint32Array(firsts.flatMap(words)));
      const keyBytes = new Uint8Array(16 * n);
      const keyView = new DataView(keyBytes.buffer);
      keys.forEach((place, i) => writeFingerprint(keyView, 16 * i, fingerprintAt(place)));
      r.keys.copyIn(arena.u8, keyBytes);
      const spanBytes = new Uint8Array(16 * count);
      const spanView = new DataView(spanBytes.buffer);
      places.forEach((place, i) => writeFingerprint(spanView, 16 * i, fingerprintAt(place)));
      r.span.copyIn(arena.u8, spanBytes);

      const located = arena.k.coldLocate(r.firsts.ptr, blocks, r.keys.ptr, n, r.blocks.ptr, r.tags.ptr) >>> 0;
      arena.k.coldFind(r.span.ptr, 0, count, PER_BLOCK, r.keys.ptr, r.blocks.ptr, r.tags.ptr, 0, located, r.found.ptr);

      // The reference: a linear scan for the block, the stored set for presence.
      const expected = keys
        .map((place, tag) => {
          let block = -1;
          for (let b = 0; b < blocks; b++) if (firsts[b] <= place) block = b;
          return { block, tag, found: stored.has(place) ? 1 : 0 };
        })
        .filter((e) => e.block >= 0)
        .sort((a, b) => a.block - b.block || a.tag - b.tag);
      expect(located).toBe(expected.length);
      expect(Array.from(r.blocks.view(arena.u8, Uint32Array, 0, located))).toEqual(expected.map((e) => e.block));
      const tags = Array.from(r.tags.view(arena.u8, Uint32Array, 0, located));
      expect(tags).toEqual(expected.map((e) => e.tag));
      const found = r.found.bytes(arena.u8, 0, n);
      expect(tags.map((t) => found[t])).toEqual(expected.map((e) => e.found));
      // Every stored key asked was found, and something was asked that is not stored.
      expect(expected.some((e) => e.found === 0) && expected.some((e) => e.found === 1)).toBe(true);
    });
  }
});
