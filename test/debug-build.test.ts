// The same cases against the debug build (unoptimised, with assertions): the optimiser must not
// change a single answer. Instances come from @assemblyscript/loader, which supplies env.abort
// should a debug assertion ever fire.
import * as loader from "@assemblyscript/loader";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { setModule, setInstantiator } from "../build/js/wasm/module.js";
import { init } from "../build/js/wasm/node.js";
import {
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  Deduplicator,
  md5Hex,
  md5Many,
  toHex,
  xxh64,
} from "../build/js/index.common.js";
import { urls } from "./helpers.js";

const releaseBytes = readFileSync(new URL("../build/crawlsieve.wasm", import.meta.url));
const debugBytes = readFileSync(new URL("../build/crawlsieve.debug.wasm", import.meta.url));

const instantiated: WebAssembly.Module[] = [];
beforeAll(() => {
  setModule(new WebAssembly.Module(debugBytes));
  setInstantiator((module) => {
    instantiated.push(module);
    return loader.instantiateSync(module, {}).exports as unknown as WebAssembly.Exports;
  });
});

describe("debug build", () => {
  it("stays installed when the package's init() runs after it (what npm run test:debug relies on)", async () => {
    await init();
    new BloomFilter({ items: 10, fpRate: 0.1 }).dispose();
    // Only the debug build carries a name section (see "is a different binary" below).
    expect(WebAssembly.Module.customSections(instantiated.at(-1)!, "name")).toHaveLength(1);
  });

  it("dedups exactly, through table growth and removals", () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => `k${(i * 7919) % 9000}`);
    const dedup = new Deduplicator({ items: 100 });
    const seen = new Set<string>();
    expect(Array.from(dedup.checkMany(keys).isNew)).toEqual(keys.map((k) => (seen.has(k) ? 0 : (seen.add(k), 1))));
    const references = keys.filter((k) => k === "k0").length;
    for (let r = references - 1; r >= 0; r--) expect(dedup.remove("k0")).toEqual({ removed: true, count: r });
    expect(dedup.size).toBe(seen.size - 1);
    expect(dedup.check("k0").isNew).toBe(true);
  });

  it("is a different binary from the release build", () => {
    expect(debugBytes.equals(releaseBytes)).toBe(false);
    expect(WebAssembly.Module.customSections(new WebAssembly.Module(debugBytes), "name").length).toBe(1);
    expect(WebAssembly.Module.imports(new WebAssembly.Module(releaseBytes))).toEqual([]);
  });

  it("computes the same MD5 and XXH64", () => {
    expect(md5Hex("abc")).toBe("900150983cd24fb0d6963f7d28e17f72");
    expect(xxh64("abc")).toBe(0x44bc2cf5ad770999n);
    const keys = urls(3000, "debug");
    const digests = md5Many(keys);
    keys.forEach((key, i) =>
      expect(toHex(digests.subarray(16 * i, 16 * i + 16))).toBe(createHash("md5").update(key).digest("hex")),
    );
  });

  it("gives filters byte-identical to the release golden files", () => {
    const goldenKeys = Array.from(
      { length: 1000 },
      (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`,
    );
    for (const [name, make] of [
      ["bloom-v1.bin", () => new BloomFilter({ items: 1000, fpRate: 0.01 })],
      ["blocked-bloom-v1.bin", () => new BlockedBloomFilter({ items: 1000, fpRate: 0.01 })],
      ["counting-bloom-v1.bin", () => new CountingBloomFilter({ items: 1000, fpRate: 0.01 })],
    ] as const) {
      const filter = make();
      filter.addMany(goldenKeys);
      expect(
        Buffer.from(filter.serialize()).equals(readFileSync(new URL(`./golden/${name}`, import.meta.url))),
        name,
      ).toBe(true);
    }
  });
});
