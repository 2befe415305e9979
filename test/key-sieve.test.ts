// The filter a store's keys pass past the memory budget (src/lines/key-sieve.ts): every spilled
// line's fingerprint passes (a key it stopped would be a line printed twice), and absent keys pass
// at the split-block filter's theoretical rate, measured on a million of them. Fingerprints are
// node:crypto's MD5 of the keys, so the kernels' own hashing is not what is tested.
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { KeySieve } from "../build/js/lines/key-sieve.js";
import { Arena } from "../build/js/wasm/arena.js";
import { instantiateSharedKernels, newSharedMemory } from "../build/js/wasm/shared-module.js";
import { fourSigma, ready } from "./helpers.js";

beforeAll(ready);

const RECORD = 24;
const BATCH = 4096;

/** Spill records (MD5 of `key(i)`, then the index as f64) for i in [from, to), packed. */
function records(key: (i: number) => string, from: number, to: number): Uint8Array {
  const out = new Uint8Array((to - from) * RECORD);
  const view = new DataView(out.buffer);
  for (let i = from; i < to; i++) {
    out.set(createHash("md5").update(key(i)).digest(), (i - from) * RECORD);
    view.setFloat64((i - from) * RECORD + 16, i, true);
  }
  return out;
}

/** Packed 16-byte fingerprints of the same keys. */
function fingerprints(key: (i: number) => string, from: number, to: number): Uint8Array {
  const out = new Uint8Array((to - from) * 16);
  for (let i = from; i < to; i++) out.set(createHash("md5").update(key(i)).digest(), (i - from) * 16);
  return out;
}

describe("KeySieve", () => {
  it("passes every spilled line's fingerprint, and a million absent keys at its theoretical rate", () => {
    const lines = 200_000;
    const arena = new Arena();
    const { free, end } = arena.place({ free: 8 << 20 });
    const sieve = KeySieve.over({ arena, ptr: free, bytes: end - free }, lines, BATCH, RECORD);
    expect(sieve).toBeDefined();
    const spilled = (i: number) => `https://spilled.example/${i}`;
    for (let at = 0; at < lines; at += BATCH) sieve!.add(records(spilled, at, Math.min(lines, at + BATCH)), RECORD);
    // Present keys: each one passes.
    let passed = 0;
    for (let at = 0; at < lines; at += BATCH)
      passed += sieve!.sieve(fingerprints(spilled, at, Math.min(lines, at + BATCH))).length / 16;
    expect(passed).toBe(lines);
    // 16 bits a line: about 0.18% (the split-block formula, src/sizing/bloom.ts).
    const p = sieve!.fpRate;
    expect(p).toBeGreaterThan(0.001);
    expect(p).toBeLessThan(0.003);
    const absent = (i: number) => `https://absent.example/${i}`;
    const queries = 1_000_000;
    let falsePositives = 0;
    const stored = new Set<string>();
    for (let at = 0; at < queries; at += BATCH) {
      const through = sieve!.sieve(fingerprints(absent, at, Math.min(queries, at + BATCH)));
      falsePositives += through.length / 16;
      // What passes is the keys' own fingerprints, unchanged.
      for (let j = 0; j < through.length; j += 16) stored.add(Buffer.from(through.subarray(j, j + 16)).toString("hex"));
    }
    expect(Math.abs(falsePositives / queries - p)).toBeLessThan(fourSigma(p, queries));
    const some = [...stored].slice(0, 5);
    const all = new Set(Array.from({ length: queries }, (_, i) => createHash("md5").update(absent(i)).digest("hex")));
    for (const hex of some) expect(all.has(hex)).toBe(true);
    expect(sieve!.keysIn).toBe(lines + queries);
    expect(sieve!.keysOut).toBe(lines + falsePositives);
  });

  it("is not made when its memory leaves fewer than 8 bits a line", () => {
    const arena = new Arena();
    const { free } = arena.place({ free: 1 << 20 });
    expect(KeySieve.over({ arena, ptr: free, bytes: 1 << 20 }, 2_000_000, BATCH, RECORD)).toBeUndefined();
    // With room for 8 bits a line (and the batch regions), it is.
    expect(KeySieve.over({ arena, ptr: free, bytes: 1 << 20 }, 500_000, BATCH, RECORD)).toBeDefined();
  });

  it("is taken over where it lies by another instance over the same shared memory, with the same answers (how a merge's thread hands a filter back)", () => {
    const lines = 50_000;
    const memory = newSharedMemory();
    const a = new Arena(instantiateSharedKernels(memory));
    const at = a.place({ free: 2 << 20 });
    const built = KeySieve.over({ arena: a, ptr: at.free, bytes: at.end - at.free }, lines, BATCH, RECORD)!;
    const spilled = (i: number) => `https://spilled.example/${i}`;
    for (let k = 0; k < lines; k += BATCH) built.add(records(spilled, k, Math.min(lines, k + BATCH)), RECORD);
    const place = built.place;
    expect(place.lines).toBe(lines);
    // Another instance of the kernels over the same memory: its bits are kept, not zeroed.
    const b = new Arena(instantiateSharedKernels(memory));
    const taken = KeySieve.inPlace(b, place, BATCH, RECORD);
    expect(taken.fpRate).toBe(built.fpRate);
    let passed = 0;
    for (let k = 0; k < lines; k += BATCH)
      passed += taken.sieve(fingerprints(spilled, k, Math.min(lines, k + BATCH))).length / 16;
    expect(passed).toBe(lines);
    const absent = (i: number) => `https://absent.example/${i}`;
    for (let k = 0; k < 100_000; k += BATCH) {
      const q = fingerprints(absent, k, k + BATCH);
      expect(Buffer.from(taken.sieve(q)).equals(Buffer.from(built.sieve(q)))).toBe(true);
    }
    // A place whose blocks do not fit its bytes is refused, not read past.
    expect(() =>
      KeySieve.inPlace(
        b,
        { ...place, bytes: KeySieve.bitsOffset(BATCH, RECORD) + 64 * (place.blocks - 1) },
        BATCH,
        RECORD,
      ),
    ).toThrow(RangeError);
  });
});
