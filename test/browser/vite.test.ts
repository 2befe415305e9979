// The package in a Vite app: `import { init } from "crawlsieve"` built by Vite (production
// build), the .wasm emitted as an asset beside the bundle, and the built app running in real
// headless Chromium (the browser seen-set's OPFS worker included).
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { describe, expect, it } from "vitest";
import { launch, serve, watchProblems } from "./chromium.js";

const root = new URL("../../", import.meta.url).pathname;

describe("Vite", () => {
  it("builds an app that imports crawlsieve, and the built app runs in Chromium", async () => {
    const app = mkdtempSync(join(tmpdir(), "cs-vite-"));
    mkdirSync(join(app, "node_modules"));
    symlinkSync(root, join(app, "node_modules", "crawlsieve"));
    writeFileSync(
      join(app, "index.html"),
      '<!doctype html><html><body><script type="module" src="./main.js"></script></body></html>',
    );
    writeFileSync(
      join(app, "main.js"),
      `import { init, BloomFilter, simhash, openSeenSet } from "crawlsieve";
await init();
const filter = new BloomFilter({ items: 1000, fpRate: 0.01 });
filter.addMany(["https://a.example/", "https://b.example/"]);
// The browser seen-set starts its OPFS worker from code inside the bundle.
const seen = await openSeenSet({ backend: "browser", name: "vite" });
const seenFlags = Array.from(await seen.addMany(["https://a.example/", "https://a.example/"]));
document.body.dataset.result = JSON.stringify({ has: Array.from(filter.hasMany(["https://a.example/", "https://c.example/"])), fp: simhash("hello vite world").toString(16), storage: seen.storage, seenFlags });
`,
    );
    await build({ root: app, logLevel: "silent", build: { outDir: join(app, "dist"), target: "es2022" } });
    const assets = readdirSync(join(app, "dist", "assets"));
    expect(assets.some((name) => name.endsWith(".wasm"))).toBe(true);
    expect(assets.some((name) => name.endsWith(".js"))).toBe(true);
    const { server, origin } = await serve(join(app, "dist"));
    const browser = await launch();
    try {
      const page = await browser.newPage();
      const problems = watchProblems(page);
      await page.goto(`${origin}/index.html`);
      const handle = await page
        .waitForSelector("body[data-result]", { state: "attached", timeout: 120_000 })
        .catch((error) => {
          throw new Error(`${error.message}\n${problems.join("\n")}\nassets: ${assets.join(", ")}`);
        });
      const result = JSON.parse((await handle.getAttribute("data-result"))!);
      const node = await import("../../build/js/index.node.js");
      await node.init();
      expect(result).toEqual({
        has: [1, 0],
        fp: node.simhash("hello vite world").toString(16),
        storage: "opfs",
        seenFlags: [1, 0],
      });
    } finally {
      await browser.close();
      server.close();
    }
  }, 120_000);
});
