// The region planner (src/wasm/regions.ts, Arena.place): regions are laid out in the order named,
// each on a cache line, none overlapping; memory grows only when a placed region reaches past it,
// and a plan one memory cannot hold is refused by name. Then the rule the planner exists for,
// held against the source: no file outside src/wasm/ grows memory or aligns offsets by hand.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FilterTooLargeError } from "../build/js/index.node.js";
import { Arena, MAX_ARENA_BYTES } from "../build/js/wasm/arena.js";
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

/** Every .ts file under `dir`, relative to the repository root. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const GROWS = /memory\.grow\(|\.reserve\(/;
const ALIGNS = /\balignUp\(|\+ 63\) & ~63/;

/** The files (path -> text) outside src/wasm/ whose text matches `pattern`. */
function offenders(files: ReadonlyMap<string, string>, pattern: RegExp): string[] {
  return [...files].filter(([path, text]) => !path.startsWith("src/wasm/") && pattern.test(text)).map(([path]) => path);
}

describe("memory is laid out and grown in src/wasm/ only", () => {
  const files = new Map(sources("src").map((path) => [path, readFileSync(join(root, path), "utf8")]));

  it("no structure grows WebAssembly memory itself, or reserves memory by an end it computed", () => {
    expect(files.size).toBeGreaterThan(100);
    expect(offenders(files, GROWS)).toEqual([]);
  });

  it("no structure aligns offsets by hand", () => {
    expect(offenders(files, ALIGNS)).toEqual([]);
  });

  it("the check names a structure file that does, and not src/wasm/", () => {
    const forged = new Map([
      ["src/dedup/forged.ts", "const p = alignUp(base + n, 64);\narena.reserve(p + 16);"],
      ["src/wasm/arena.ts", "this.k.memory.grow(pages); alignUp(x, 64);"],
    ]);
    expect(offenders(forged, GROWS)).toEqual(["src/dedup/forged.ts"]);
    expect(offenders(forged, ALIGNS)).toEqual(["src/dedup/forged.ts"]);
  });
});
