// The compact bucket table (12-byte slots, 5 a bucket: assembly/fingerprint-buckets.ts) that holds
// exact dedup's fingerprints, driven through a BucketTable (src/exact/bucket-table.ts) against a JavaScript Map of the bits it
// is documented to compare: the low word, the high word's low 32 bits and its top 6 (the
// partition). Keys are crowded onto few home buckets so probe runs are long, cross buckets and
// wrap around a partition's end; growth, removal (runs shifted back) and look-ups all take part.
import { beforeAll, describe, expect, it } from "vitest";
import { BucketTable, grownBuckets } from "../build/js/exact/bucket-table.js";
import { COMPACT, PARTS, WIDE } from "../build/js/wasm/bucket-layout.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const M64 = (1n << 64n) - 1n;

/** The bits a compact slot and its partition keep, as the reference's key; lo as kept (1 for a kept-all-zero key). */
function compared(lo: bigint, hi: bigint, wide: boolean): string {
  const kept = wide ? hi : hi & 0xffffffffn;
  const keptLo = (lo | kept) === 0n ? 1n : lo;
  return `${keptLo}:${kept}:${hi >> 58n}`;
}

function pack(keys: [bigint, bigint][]): Uint8Array {
  const out = new Uint8Array(16 * keys.length);
  const view = new DataView(out.buffer);
  keys.forEach(([lo, hi], i) => {
    view.setBigUint64(16 * i, lo, true);
    view.setBigUint64(16 * i + 8, hi, true);
  });
  return out;
}

/** Keys whose low words crowd onto a few home buckets of a small table, and high words that differ in the compared bits or only outside them. */
function keyPool(next: () => number, n: number): [bigint, bigint][] {
  const r64 = () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
  const pool: [bigint, bigint][] = [];
  for (let i = 0; i < n; i++) {
    // A low word from one of 8 narrow ranges (a range maps to one home bucket at every size used here), or zero.
    const lo = next() < 0.02 ? 0n : ((BigInt(Math.floor(next() * 8)) << 61n) | (r64() >> 40n)) & M64;
    const part = BigInt(Math.floor(next() * 2)) << 58n;
    const low32 = next() < 0.05 ? 0n : BigInt(Math.floor(next() * 64));
    const middle = (r64() & ((1n << 26n) - 1n)) << 32n;
    pool.push([lo, part | middle | low32]);
  }
  return pool;
}

/** Adds the staged keys [0, n) to the shard, growing it whenever a partition is full, and returns its flags. */
function addAll(shard: BucketTable, keys: [bigint, bigint][]): number[] {
  shard.stage(pack(keys));
  let done = shard.add(0, keys.length);
  while (done < keys.length) {
    shard.grow(grownBuckets(shard.buckets));
    done = shard.add(done, keys.length);
  }
  return Array.from(shard.flags(keys.length));
}

describe("the compact line table", () => {
  for (const [name, layout] of [
    ["compact (12-byte slots)", COMPACT],
    ["wide (16-byte slots)", WIDE],
  ] as const) {
    it(`${name}: adds, finds, removes and grows as a Map of the compared bits does, with long and wrapping probe runs`, () => {
      const next = rng(layout.bytes);
      const pool = keyPool(next, 3000);
      const shard = new BucketTable(512, 4, layout, "a test table");
      const reference = new Set<string>();
      const wide = layout === WIDE;
      for (let round = 0; round < 40; round++) {
        // A batch of adds, then a batch of removes, then look-ups of the whole pool.
        const batch = Array.from({ length: 300 }, () => pool[Math.floor(next() * pool.length)]);
        const flags = addAll(shard, batch);
        const expected = batch.map(([lo, hi]) => {
          const key = compared(lo, hi, wide);
          if (reference.has(key)) return 0;
          reference.add(key);
          return 1;
        });
        expect(flags, `round ${round} adds`).toEqual(expected);
        const gone = Array.from({ length: 120 }, () => pool[Math.floor(next() * pool.length)]);
        shard.stage(pack(gone));
        shard.remove(gone.length);
        expect(Array.from(shard.flags(gone.length)), `round ${round} removes`).toEqual(
          gone.map(([lo, hi]) => (reference.delete(compared(lo, hi, wide)) ? 1 : 0)),
        );
        for (let at = 0; at < pool.length; at += 512) {
          const keys = pool.slice(at, at + 512);
          shard.stage(pack(keys));
          shard.has(0, keys.length);
          expect(Array.from(shard.flags(keys.length)), `round ${round} look-ups`).toEqual(
            keys.map(([lo, hi]) => (reference.has(compared(lo, hi, wide)) ? 1 : 0)),
          );
        }
      }
      // Grown several times from 4 buckets a partition.
      expect(shard.capacity).toBeGreaterThan(PARTS * 4 * layout.perBucket);
    });
  }

  it("compact: keys differing only in the high word's bits 32-57 are one key; in any compared bit, two", () => {
    const shard = new BucketTable(16, 4, COMPACT, "a test table");
    const hi = (5n << 58n) | (0x1234n << 32n) | 0xabcdn;
    const keys: [bigint, bigint][] = [
      [7n, hi],
      [7n, hi ^ (1n << 40n)],
      [7n, hi ^ 1n],
      [7n, hi ^ (1n << 31n)],
      [7n, hi ^ (1n << 63n)],
      [7n ^ (1n << 63n), hi],
      [0n, 3n << 58n],
      [1n, 3n << 58n],
    ];
    expect(addAll(shard, keys)).toEqual([1, 0, 1, 1, 1, 1, 1, 0]);
  });
});
