// The package as users meet it: the exports map, the runtime entries, the release binary.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));

/** Every module reachable from an entry by static imports, with its import specifiers. */
function importGraph(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const source = readFileSync(file, "utf8");
    const specifiers = [...source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
    seen.set(file, specifiers);
    for (const s of specifiers) if (s.startsWith(".") && s.endsWith(".js")) visit(resolve(dirname(file), s));
  };
  visit(entry);
  return seen;
}

describe("package", () => {
  it("lists types first in every export condition and points at built files", () => {
    for (const [condition, target] of Object.entries(pkg.exports["."] as Record<string, Record<string, string>>)) {
      expect(Object.keys(target)[0], condition).toBe("types");
      for (const file of Object.values(target)) expect(() => readFileSync(new URL(file, root)), file).not.toThrow();
    }
  });

  it("resolves its own name to the Node entry", async () => {
    const self = await import("crawlsieve");
    await self.init();
    expect(self.md5Hex("abc")).toBe("900150983cd24fb0d6963f7d28e17f72");
  });

  // Issue 30 item 16: engines said >=20, but require() of an ES module (this package) needs 20.19.
  it("asks in engines for the Node that require() of the package needs, and require() works on it", () => {
    expect(pkg.engines.node).toBe(">=20.19");
    const [major, minor] = process.versions.node.split(".").map(Number);
    expect(major > 20 || (major === 20 && minor >= 19), process.versions.node).toBe(true);
    const out = spawnSync(
      process.execPath,
      ["-e", 'const c = require("crawlsieve"); c.initSync ? c.initSync() : 0; console.log(typeof c.BloomFilter)'],
      { cwd: new URL(".", root).pathname },
    );
    expect([out.status, out.stdout.toString().trim()]).toEqual([0, "function"]);
  });

  it("keeps Node built-ins out of the browser and worker entries", () => {
    for (const entry of [
      "build/js/index.browser.js",
      "build/js/index.workerd.js",
      "build/js/durable-object/index.js",
    ]) {
      const graph = importGraph(new URL(entry, root).pathname);
      expect(graph.size).toBeGreaterThan(5);
      for (const [file, specifiers] of graph) {
        // Only relative imports: no node: built-ins and no packages in the core.
        for (const s of specifiers) expect(s.startsWith("."), `${file} imports ${s}`).toBe(true);
        expect(readFileSync(file, "utf8"), file).not.toMatch(/\bBuffer\.|\bprocess\.|require\(/);
      }
    }
  });

  it("ships a release module that imports nothing and has no runtime dependencies", () => {
    const module = new WebAssembly.Module(readFileSync(new URL("build/crawlsieve.wasm", root)));
    expect(WebAssembly.Module.imports(module)).toEqual([]);
    expect(pkg.dependencies ?? {}).toEqual({});
  });
});
