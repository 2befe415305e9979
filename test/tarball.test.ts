// The package as npm ships it: packed with `npm pack`, installed into an empty project by
// `npm install <tarball>`, and every exported entry (./durable-object bundled and run in workerd), the command, the shared-memory filter with
// its worker threads and the on-disk store used from there, as a user's code would.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { config } from "../examples/durable-object/build.js";
import { freePort, startWorkerd } from "../examples/durable-object/serve.js";

const root = new URL("../", import.meta.url).pathname;
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version as string;
let app = "";
let packed: string[] = [];

beforeAll(() => {
  const work = mkdtempSync(join(tmpdir(), "cs-tarball-"));
  // The build is already there (npm test builds first): pack what it made, without rebuilding.
  const report = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }),
  );
  packed = (report[0].files as { path: string }[]).map((f) => f.path);
  app = join(work, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "user-app", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(work, report[0].filename)], {
    cwd: app,
    stdio: "ignore",
  });
}, 240_000);

/** Runs an ES module in the user's project; returns what it printed. */
function runInApp(source: string): string {
  const file = join(app, `check-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  const result = spawnSync(process.execPath, [file], { cwd: app, encoding: "utf8", timeout: 180_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

describe("the packed package, installed from its tarball", () => {
  it("ships the modules every entry needs, its licence, and source maps that carry their sources", () => {
    for (const file of [
      "LICENSE",
      "README.md",
      "package.json",
      "build/crawlsieve.wasm",
      "build/crawlsieve-shared.wasm",
      "build/crawlsieve-kernels-shared.wasm",
      "build/js/index.node.js",
      "build/js/cli/main.js",
      "build/js/threads/worker.js",
    ]) {
      expect(packed, file).toContain(file);
    }
    expect(packed.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);
    // Only what runs: no build notes, no debug build, no text formats of the modules.
    expect(
      packed.filter(
        (f) =>
          f.startsWith("build/") &&
          !f.startsWith("build/js/") &&
          !/^build\/crawlsieve(-shared|-kernels-shared)?\.wasm$/.test(f),
      ),
    ).toEqual([]);
    const map = JSON.parse(readFileSync(join(app, "node_modules/crawlsieve/build/js/index.node.js.map"), "utf8"));
    expect(map.sourcesContent?.length).toBe(map.sources.length);
  });

  it("the main entry, ./html, ./redis, ./crawlsieve.wasm and ./package.json", () => {
    const out = runInApp(`
      import { readFileSync } from "node:fs";
      import { init, BloomFilter, md5Hex, canonicalizeUrl } from "crawlsieve";
      import { htmlToText } from "crawlsieve/html";
      import { fromNodeRedis, RedisBloomFilter, RedisDeduplicator } from "crawlsieve/redis";
      await init();
      const filter = new BloomFilter({ items: 1000, fpRate: 0.01 });
      const wasm = readFileSync(new URL(import.meta.resolve("crawlsieve/crawlsieve.wasm")));
      const pkg = JSON.parse(readFileSync(new URL(import.meta.resolve("crawlsieve/package.json")), "utf8"));
      console.log(JSON.stringify([filter.add("a"), filter.add("a"), md5Hex("abc"), canonicalizeUrl("http://Example.com/?b=1&a=2"),
        htmlToText("<main><p>Hello <b>world</b></p></main>").trim(), typeof fromNodeRedis, typeof RedisBloomFilter.open, typeof RedisDeduplicator.open,
        WebAssembly.validate(wasm), pkg.version]));
    `);
    expect(JSON.parse(out)).toEqual([
      true,
      false,
      "900150983cd24fb0d6963f7d28e17f72",
      "http://example.com/?a=2&b=1",
      "Hello world",
      "function",
      "function",
      "function",
      true,
      version,
    ]);
  });

  it("./durable-object, bundled for workerd from the installed package, keeps a seen-set in a Durable Object", async () => {
    const dir = join(app, "edge");
    mkdirSync(dir);
    writeFileSync(join(app, "worker.js"), readFileSync(join(root, "examples/durable-object/worker.js")));
    await build({
      entryPoints: [join(app, "worker.js")],
      absWorkingDir: app,
      bundle: true,
      format: "esm",
      conditions: ["workerd", "worker"],
      plugins: [
        {
          name: "wasm",
          setup: (b) => b.onResolve({ filter: /\.wasm$/ }, () => ({ path: "./crawlsieve.wasm", external: true })),
        },
      ],
      outfile: join(dir, "worker.js"),
      logLevel: "warning",
    });
    writeFileSync(
      join(dir, "crawlsieve.wasm"),
      readFileSync(join(app, "node_modules/crawlsieve/build/crawlsieve.wasm")),
    );
    const port = await freePort();
    writeFileSync(join(dir, "config.capnp"), config(join(dir, "storage"), port));
    mkdirSync(join(dir, "storage"));
    const server = await startWorkerd(dir, port);
    try {
      const add = async () =>
        (
          await fetch(`http://127.0.0.1:${port}/add?set=t&shards=2`, {
            method: "POST",
            body: JSON.stringify(["a", "b", "a"]),
          })
        ).json();
      expect([await add(), await add()]).toEqual([
        [1, 1, 0],
        [0, 0, 0],
      ]);
    } finally {
      await server.stop();
    }
  }, 180_000);

  it("the shared-memory filter written by two worker threads, and the LMDB store", () => {
    const out = runInApp(`
      import { mkdtempSync } from "node:fs";
      import { tmpdir } from "node:os";
      import { join } from "node:path";
      import { init, PartitionedBloomFilter, BloomWorkerPool, StoreDeduplicator, openLmdbStore } from "crawlsieve";
      await init();
      const keys = Array.from({ length: 20000 }, (_, i) => "https://pool.example/" + i);
      const filter = new PartitionedBloomFilter({ items: 20000, fpRate: 0.001, shards: 4 });
      const pool = await BloomWorkerPool.start(2);
      const fresh = await pool.addMany(filter, keys);
      const present = await pool.hasMany(filter, keys);
      await pool.close();
      const store = new StoreDeduplicator(openLmdbStore(join(mkdtempSync(join(tmpdir(), "cs-store-")), "s")), { items: 100 });
      const first = store.checkMany(["a", "b", "a"]).isNew;
      store.close();
      console.log(JSON.stringify([fresh.reduce((a, b) => a + b, 0), present.reduce((a, b) => a + b, 0), Array.from(first)]));
    `);
    const [fresh, present, first] = JSON.parse(out);
    expect(fresh).toBeGreaterThan(19_900); // a key may be a false positive of the keys before it
    expect(present).toBe(20_000);
    expect(first).toEqual([1, 1, 0]);
  });

  it("the command, as npx runs it", () => {
    const bin = join(app, "node_modules/.bin/crawlsieve");
    expect(existsSync(bin)).toBe(true);
    const dedup = spawnSync(bin, ["dedup"], { cwd: app, input: "b\na\nb\nc\na\n", encoding: "utf8" });
    expect(dedup.status, dedup.stderr).toBe(0);
    expect(dedup.stdout).toBe("b\na\nc\n");
    expect(spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout).toBe(`crawlsieve ${version}\n`);
  });

  it("every relative link of the README resolves inside the installed package", () => {
    const installed = join(app, "node_modules/crawlsieve");
    const readme = readFileSync(join(installed, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1])
      .filter((href) => !/^[a-z]+:/.test(href) && !href.startsWith("#"));
    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((href) => !existsSync(join(installed, href.split("#")[0])))).toEqual([]);
  });

  it('require("crawlsieve/crawlee") without Crawlee installed: one line naming the peer and the install command', () => {
    expect(existsSync(join(app, "node_modules/@crawlee/core"))).toBe(false);
    const result = spawnSync(
      process.execPath,
      ["-e", 'try { require("crawlsieve/crawlee") } catch (e) { console.error(e.stack); process.exit(1) }'],
      { cwd: app, encoding: "utf8" },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      "CrawlsieveError: crawlsieve/crawlee needs Crawlee, an optional peer dependency that is not installed: npm install crawlee\n",
    );
  });
});
