// The browser entry as a bundler sees it (esbuild, the bundler Vite uses for dependencies): it
// bundles with the "browser" condition, pulls in no Node built-in and no Buffer, and stays within
// its size budget (gzip): core JS under 40 KB (openSeenSet with the browser backend and its OPFS
// worker included), the .wasm under 64 KB. Sizes are printed.
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;

describe("browser bundle", () => {
  it("bundles the package by name, Node-free, within the size budget", async () => {
    // An app folder with the package installed (a link), so "crawlsieve" resolves through its exports map.
    const app = mkdtempSync(join(tmpdir(), "cs-app-"));
    mkdirSync(join(app, "node_modules"));
    symlinkSync(root, join(app, "node_modules", "crawlsieve"));
    const result = await build({
      stdin: {
        contents:
          'import { init, BloomFilter, Deduplicator, simhash, NearDupIndex, openSeenSet } from "crawlsieve"; await init(); console.log(new BloomFilter({ items: 10, fpRate: 0.1 }), Deduplicator, simhash, NearDupIndex, openSeenSet);',
        resolveDir: app,
        sourcefile: "app.js",
      },
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      conditions: ["browser"],
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const js = result.outputFiles[0].contents;
    const text = new TextDecoder().decode(js);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((file) => file.endsWith("build/js/index.browser.js"))).toBe(true);
    expect(
      inputs.filter((file) =>
        /index\.node|lmdb-store|node_modules\/lmdb|\/threads\/|\/redis\/|html-to-text/.test(file),
      ),
    ).toEqual([]);
    expect(text).not.toMatch(/\bnode:|\bBuffer\b|\brequire\(/);
    const jsGzip = gzipSync(js, { level: 9 }).length;
    const wasmGzip = gzipSync(readFileSync(`${root}build/crawlsieve.wasm`), { level: 9 }).length;
    console.log(
      `browser bundle: JS ${(js.length / 1024).toFixed(1)} KB minified, ${(jsGzip / 1024).toFixed(1)} KB gzip; wasm ${(wasmGzip / 1024).toFixed(1)} KB gzip`,
    );
    expect(jsGzip).toBeLessThan(40 * 1024);
    expect(wasmGzip).toBeLessThan(64 * 1024);
  });
});
