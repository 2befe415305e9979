// The region planner (src/wasm/regions.ts, Arena.place): regions are laid out in the order named,
// each on a cache line, none overlapping; memory grows only when a placed region reaches past it,
// and a plan one memory cannot hold is refused by name. Array regions (array(size, length)) give
// element addresses and views inside their bounds and refuse any outside them; a state record reads
// its fields where the kernel writes them. Then the rule the planner exists for, held against the
// source: no file outside src/wasm/ grows memory, aligns offsets or computes addresses by hand.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FilterTooLargeError } from "../build/js/index.node.js";
import { Arena, MAX_ARENA_BYTES } from "../build/js/wasm/arena.js";
import { array, ArrayRegion } from "../build/js/wasm/array-region.js";
import { Accumulator } from "../build/js/wasm/batch.js";
import { KernelRecord } from "../build/js/wasm/record.js";
import { RecordArray } from "../build/js/wasm/record-array.js";
import { byPartition, routeBatch } from "../build/js/wasm/route.js";
import { layOut } from "../build/js/wasm/regions.js";
import { ready } from "./helpers.js";

const root = new URL("../", import.meta.url).pathname;

beforeAll(ready);

describe("region planner", () => {
  it("lays regions out in the order named, each 64-byte aligned, end to end without overlap", () => {
    const sizes = { a: 1, b: 0, c: 100, d: 64, e: 3 };
    const r = layOut(1000, sizes);
    // Worked by hand: 1000 -> 1024 (a: 1 byte), 1088 (b: empty), 1088 (c: 100), 1216 (d: 64), 1280 (e: 3), end 1283.
    expect({ ...r }).toEqual({ a: 1024, b: 1088, c: 1088, d: 1216, e: 1280, end: 1283 });
  });

  it("grows memory only when a placed region reaches past it, and keeps what was written below", () => {
    const arena = new Arena();
    const before = arena.k.memory.buffer.byteLength;
    const small = arena.place({ x: 16 });
    expect(arena.k.memory.buffer.byteLength).toBe(before);
    arena.u8[small.x] = 7;
    const big = arena.place({ y: before + 65536 }, small.end);
    expect(big.y).toBe(small.x + 64);
    expect(arena.k.memory.buffer.byteLength).toBeGreaterThanOrEqual(big.end);
    expect(arena.generation).toBe(1);
    // The arena's views were re-made at the growth: the old write is seen through the new view.
    expect(arena.u8[small.x]).toBe(7);
    expect(arena.u8.length).toBe(arena.k.memory.buffer.byteLength);
  });

  it("refuses a plan past one memory with a FilterTooLargeError naming the structure, before growing", () => {
    const arena = new Arena();
    const before = arena.k.memory.buffer.byteLength;
    let error: unknown;
    try {
      arena.place({ table: MAX_ARENA_BYTES }, arena.base, "the test table");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FilterTooLargeError);
    expect(String((error as Error).message)).toMatch(/the test table outgrows one WebAssembly memory/);
    expect(arena.k.memory.buffer.byteLength).toBe(before);
  });
});

describe("array regions", () => {
  it("the planner lays an array region out as size x length bytes and hands back its element addresses", () => {
    const r = layOut(1000, { flags: array(1, 3), digests: array(16, 5), after: 1 });
    // Worked by hand: flags at 1024 (3 bytes), digests at 1088 (80 bytes, to 1168), after at 1216.
    expect(r.flags).toBeInstanceOf(ArrayRegion);
    expect([r.flags.ptr, r.flags.end, r.digests.ptr, r.digests.end, r.after, r.end]).toEqual([
      1024, 1027, 1088, 1168, 1216, 1217,
    ]);
    expect([r.digests.at(0), r.digests.at(3), r.digests.at(5), r.digests.byteLength]).toEqual([1088, 1136, 1168, 80]);
  });

  it("refuses an element index or a run outside the region with a RangeError", () => {
    const region = new ArrayRegion(128, 16, 4);
    for (const i of [-1, 5, 1.5, Number.NaN]) expect(() => region.at(i)).toThrow(RangeError);
    const memory = new Uint8Array(512);
    expect(() => region.view(memory, Uint32Array, 3, 2)).toThrow(RangeError);
    expect(() => region.bytes(memory, -1, 1)).toThrow(RangeError);
    expect(() => region.fill(memory, 1, 2, 3)).toThrow(RangeError);
    expect(() => region.copyIn(memory, new Uint8Array(32), 3)).toThrow(RangeError);
    expect(() => region.copyIn(memory, new Uint8Array(15))).toThrow(RangeError);
    expect(() => new ArrayRegion(0, 3, 1).view(memory, Uint32Array)).toThrow(RangeError);
    expect(() => array(0, 4)).toThrow(RangeError);
    // Nothing was written by the refused calls.
    expect(memory.every((b) => b === 0)).toBe(true);
  });

  it("views, copies and fills exactly the elements named, and nothing beside them", () => {
    const memory = new Uint8Array(256);
    const region = new ArrayRegion(64, 8, 4); // bytes 64..96
    region.copyIn(memory, Uint32Array.of(1, 2, 3, 4), 1); // elements 1 and 2: bytes 72..88
    expect([...memory.subarray(72, 88)]).toEqual([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]);
    expect([...region.view(memory, Uint32Array, 1, 2)]).toEqual([1, 2, 3, 4]);
    const into = new Uint32Array(10);
    region.copyOut(memory, into, 2, 3); // elements 0..2 (6 words) into words 4..9
    expect([...into]).toEqual([0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
    region.fill(memory, 0xff, 3, 1);
    expect([...memory.subarray(88, 97)]).toEqual([255, 255, 255, 255, 255, 255, 255, 255, 0]);
    expect(memory[63]).toBe(0);
  });

  it("a state record reads and writes its fields where the kernel does (AGED_FRONT, AGED_FILL)", () => {
    const arena = new Arena();
    const k = arena.k;
    const { bits, state } = arena.place({ bits: array(64, 4), state: k.AGED_STATE_BYTES.value });
    const record = new KernelRecord(state, { front: k.AGED_FRONT, fill: k.AGED_FILL });
    record.set(arena.u8, "front", 2);
    record.set(arena.u8, "fill", 7);
    bits.fill(arena.u8, 0xff);
    // The kernel makes the oldest slice (front - 1 = 1) the newest: clears it and zeroes the fill.
    k.agedShift(bits.ptr, bits.size, bits.length, state);
    expect([record.get(arena.u8, "front"), record.get(arena.u8, "fill")]).toEqual([1, 0]);
    expect([0, 1, 2, 3].map((s) => bits.bytes(arena.u8, s, 1).every((b) => b === 0xff))).toEqual([
      true,
      false,
      true,
      true,
    ]);
    expect(bits.bytes(arena.u8, 1, 1).every((b) => b === 0)).toBe(true);
  });
});

describe("record arrays and the partition router", () => {
  it("reads the kernel's match records (ND_MATCH_*) by field, as ndScan writes them", () => {
    const arena = new Arena();
    const k = arena.k;
    const { fps, ids, qs, out, dists, state } = arena.place({
      fps: array(8, 3),
      ids: array(4, 3),
      qs: array(8, 1),
      out: array(k.ND_MATCH_BYTES.value, 8),
      dists: array(1, 8),
      state: array(4, 1),
    });
    // Three pending entries (ids 10, 11, 12), one query equal to the second, k = 1: one match.
    fps.copyIn(arena.u8, BigUint64Array.of(0xf0n, 0x0fn, 0xff00n));
    ids.copyIn(arena.u8, Uint32Array.of(10, 11, 12));
    qs.copyIn(arena.u8, BigUint64Array.of(0x0fn));
    k.ndScan(0, 0, 0, fps.ptr, ids.ptr, 3, qs.ptr, 1, 1, out.ptr, dists.ptr, 8, state.ptr);
    const matches = new RecordArray(
      arena.u8,
      out,
      { query: k.ND_MATCH_QUERY, id: k.ND_MATCH_ID, position: k.ND_MATCH_POSITION },
      0,
      1,
    );
    expect([matches.length, matches.get(0, "query"), matches.get(0, "id"), matches.get(0, "position")]).toEqual([
      1, 0, 11, 1,
    ]);
    expect(() => new RecordArray(arena.u8, dists, { flag: 0 })).toThrow(RangeError);
    expect(() => matches.high("position")).toThrow(RangeError);
  });

  it("groups a batch by partition in order, cut into chunks, and routes elements, skip flags and result bytes", () => {
    expect(byPartition(6, (i) => [2, 0, 2, 2, 0, 1][i], 2)).toEqual([
      [2, [0, 2]],
      [2, [3]],
      [0, [1, 4]],
      [1, [5]],
    ]);
    const memory = new Uint8Array(1024);
    const from = new ArrayRegion(0, 8, 4);
    const parts = [new ArrayRegion(0, 8, 4), new ArrayRegion(256, 8, 4)];
    from.copyIn(memory, Uint32Array.of(1, 10, 2, 20, 3, 30, 4, 40));
    const seen: [number, number[], number[]][] = [];
    const out = new Uint8Array(6);
    const total = routeBatch(
      memory,
      from,
      4,
      (i) => i % 2,
      (p) => ({ memory, region: parts[p] }),
      (p, m, skip, flags) => {
        seen.push([p, [...parts[p].view(memory, Uint32Array, 0, m)], [...skip!.subarray(0, m)]]);
        for (let j = 0; j < m; j++) flags[j] = 10 * p + j + 1;
        return m;
      },
      out,
      2,
      Uint8Array.of(1, 0, 0, 1),
    );
    // Partition 0 stages into `from` itself: the elements were copied out before it ran.
    expect(seen).toEqual([
      [0, [1, 10, 3, 30], [1, 0]],
      [1, [2, 20, 4, 40], [0, 1]],
    ]);
    expect([...out]).toEqual([0, 0, 1, 11, 2, 12]);
    expect(total).toBe(4);
  });
});

/** Every .ts file under `dir`, relative to the repository root. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const GROWS = /memory\.grow\(|\.reserve\(/;
const ALIGNS = /\balignUp\(|\+ 63\) & ~63/;
// Addresses computed by hand: arithmetic on a pointer, a memory view indexed at a computed address,
// a typed view made over the memory at an offset (an array region's at/view/bytes do these), a
// DataView over the memory (a kernel record's get/set do that, by field name), or a region's bytes
// counted from its elements by hand (n digests as 16 * n bytes).
const ADDRESSES =
  /\b\w*Ptr\s*(\+|-|\*|>>>|>>)\s*[\w(]|\b(u8|u32)\[[^\]]*[-+>*]|new (Big)?(Uint|Int|Float)(8|16|32|64)Array\(\s*[\w.]*(u8|memory)\.buffer\s*,|\.(u8|u32)\.(subarray|slice)\(|new DataView\(\s*[\w.()]*(u8|memory)\.buffer|\.bytes\(\s*[\w.]*Ptr\s*,\s*\d+\s*\*/;

// A typed view over WebAssembly memory, whatever its name: bound from a region's view() or bytes()
// of a memory's bytes, or to an arena's u8/u32 itself (a subarray or a copy of either counts too).
const VIEW_BINDING =
  /\b(?:const|let|var)\s+(\w+)\s*=\s*(?:[^;\n]*\.(?:view|bytes)\(\s*[\w.()]*\b(?:u8|memory)\b|[\w.()]*\.(?:u8|u32)\s*(?:[;\n]|\.subarray\(|\.slice\())/g;
// Files allowed to index such a view by hand: none (the last two, simhash's and minhash's span
// reads, now ask the staging for the batch's bytes and its longest key).
const PENDING_VIEWS: string[] = [];

/**
 * Whether the code indexes such a view at a multiple of something (`x[3 * e + 1]`, `x[4*i]`,
 * `x.set(y, 4 * j)`, `x.subarray(16 * j, ...)`): an element's address worked out by hand, which
 * an array region (at, view, copyIn/copyOut) or a RecordArray (word, get) does in src/wasm/.
 */
function indexesViewByHand(text: string): boolean {
  return [...text.matchAll(VIEW_BINDING)].some(([, name]) =>
    new RegExp(`\\b${name}\\s*\\[[^\\]]*\\*|\\b${name}\\.(?:set|subarray|slice|fill)\\([^;]*\\*`).test(text),
  );
}

/** A source's code without its comments (doc comments name ranges such as [ptr, ptr + len)). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
}

/** The files (path -> text) outside src/wasm/ whose text matches `pattern` (a RegExp, or a test of the whole text). */
function offenders(files: ReadonlyMap<string, string>, pattern: RegExp | ((text: string) => boolean)): string[] {
  const hit = pattern instanceof RegExp ? (text: string) => pattern.test(text) : pattern;
  return [...files].filter(([path, text]) => !path.startsWith("src/wasm/") && hit(text)).map(([path]) => path);
}

describe("Accumulator (items that come one at a time, handed on a full batch at a time)", () => {
  it("hands on full batches as they fill and the partial last one at flush, each item once, in order", () => {
    const items = new Uint32Array(4);
    const seen: number[][] = [];
    const batch = new Accumulator(4, (n) => seen.push([...items.subarray(0, n)]));
    for (let i = 0; i < 11; i++) {
      items[batch.at] = i;
      batch.added();
    }
    expect(seen).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    batch.flush();
    batch.flush();
    expect(seen).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10],
    ]);
    expect(() => new Accumulator(0, () => undefined)).toThrow(RangeError);
  });
});

describe("ArrayRegion.packed (a table's slots as a serialized payload)", () => {
  it("keeps the elements in use, in order, by a flag word or by any nonzero byte, and insists on the count", () => {
    const arena = new Arena();
    const { slots } = arena.place({ slots: array(8, 5) });
    // Five slots of (value, flag): in use are 1 and 3 by flag; by any byte, also 4 (flag 0, value 9).
    slots.copyIn(arena.u8, Uint32Array.of(7, 0, 5, 1, 0, 0, 6, 2, 9, 0));
    expect([...new Uint32Array(slots.packed(arena.u8, 2, 4).buffer)]).toEqual([5, 1, 6, 2]);
    expect([...new Uint32Array(slots.packed(arena.u8, 4).buffer)]).toEqual([7, 0, 5, 1, 6, 2, 9, 0]);
    expect(() => slots.packed(arena.u8, 1, 4)).toThrow(/more than 1/);
    expect(() => slots.packed(arena.u8, 3, 4)).toThrow(/2 elements/);
  });
});

describe("memory is laid out and grown in src/wasm/ only", () => {
  const files = new Map(sources("src").map((path) => [path, readFileSync(join(root, path), "utf8")]));

  it("no structure grows WebAssembly memory itself, or reserves memory by an end it computed", () => {
    expect(files.size).toBeGreaterThan(100);
    expect(offenders(files, GROWS)).toEqual([]);
  });

  it("no structure aligns offsets by hand", () => {
    expect(offenders(files, ALIGNS)).toEqual([]);
  });

  it("no structure computes an address in WebAssembly memory by hand (array regions do)", () => {
    const stripped = new Map([...files].map(([path, text]) => [path, code(text)]));
    expect(offenders(stripped, ADDRESSES)).toEqual([]);
    expect(offenders(stripped, indexesViewByHand)).toEqual(PENDING_VIEWS);
  });

  it("the check names a view of memory indexed at a multiple by hand, whatever the view is called", () => {
    // The code this check was written against (near-dup results, Bloom routing, StoreDeduplicator), as it stood.
    const hand = [
      "const triples = out.view(arena.u8, Uint32Array, 0, count);\nfor (let e = 0; e < count; e++) { const id = triples[3 * e + 1]; }",
      "const pairs = front.staging.hashes.view(front.arena.u8, Uint32Array, 0, n).slice();\nfor (let i = 0; i < n; i++) g(pairs[4 * i] ^ pairs[4 * i + 3]);",
      "const dst = part.staging.hashes.view(part.arena.u8, Uint32Array, 0, list.length);\ndst.set(src, 4 * j);",
      "const words = staging.hashes.view(arena.u8, Uint32Array, 0, n);\nfor (let j = 0; j < n; j++) words[4 * j + 2] |= 1;",
      "const all = this.live().u8;\nconst x = all[8*i];",
      "const d = s.hashes.bytes(engine.arena.u8, 0, n);\nuse(d.subarray(16 * j, 16 * j + 16));",
    ];
    for (const text of hand)
      expect(offenders(new Map([["src/near-dup/forged.ts", code(text)]]), indexesViewByHand), text).toEqual([
        "src/near-dup/forged.ts",
      ]);
    const fine = [
      "const matches = new RecordArray(arena.u8, out, fields, 0, count);\nconst id = matches.word(e, idAt);",
      "const flags = staging.out.bytes(arena.u8, 0, n);\nfor (let i = 0; i < n; i++) flags[i] = flags[i] === 0 ? 0 : 1;",
      "const out = new Uint8Array(16 * n);\nout.set(x, 16 * at);",
    ];
    for (const text of fine)
      expect(offenders(new Map([["src/near-dup/fine.ts", code(text)]]), indexesViewByHand), text).toEqual([]);
    expect(offenders(new Map([["src/wasm/route.ts", code(hand[1])]]), indexesViewByHand)).toEqual([]);
  });

  it("the check names a structure file that does, and not src/wasm/", () => {
    const forged = new Map([
      ["src/exact/forged.ts", "const p = alignUp(base + n, 64);\narena.reserve(p + 16);"],
      ["src/wasm/arena.ts", "this.k.memory.grow(pages); alignUp(x, 64);"],
    ]);
    expect(offenders(forged, GROWS)).toEqual(["src/exact/forged.ts"]);
    expect(offenders(forged, ALIGNS)).toEqual(["src/exact/forged.ts"]);
    // One forged line a way of computing an address by hand, each caught on its own.
    const hand = [
      "k.run(this.digestsPtr + 16 * done, n);",
      "const w = arena.u32[this.statePtr >>> 2];",
      "if (u8[outPtr + j] !== 1) fail();",
      "const v = new Uint32Array(arena.u8.buffer, refs, n);",
      "out.set(arena.u8.subarray(at, at + n));",
      "new DataView(this.arena.u8.buffer).setFloat64(record + f.keys, n, true);",
      "return new DataView(this.live().u8.buffer, this.statsPtr);",
      "out.set(arena.bytes(staging.hashesPtr, 16 * n), 16 * at);",
    ];
    for (const line of hand)
      expect(offenders(new Map([["src/bloom/forged.ts", code(line)]]), ADDRESSES)).toEqual(["src/bloom/forged.ts"]);
    expect(
      offenders(
        new Map([
          [
            "src/bloom/fine.ts",
            code("// [ptr, ptr + len)\nk.run(this.digests.at(done), n); const all = new Uint8Array(memory.buffer);"),
          ],
        ]),
        ADDRESSES,
      ),
    ).toEqual([]);
  });
});
