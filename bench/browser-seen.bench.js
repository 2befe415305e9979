// The browser seen-set (openSeenSet({ backend: "browser" }), in OPFS and in IndexedDB) against the
// usual way (one IndexedDB row per key: in one durable transaction per batch, get each key and put
// the absent ones), in one real headless Chromium, in the same run. A page on loopback adds
// batches of 1,000 URL keys (60-100 bytes) into a fresh set per contender: keys per second (all
// keys new, then all repeats), bytes of storage per key (navigator.storage.estimate, by store),
// and how long opening the set again takes (the table is loaded from the store).
// usage: node bench/browser-seen.bench.js   (BROWSER_KEYS=100000 by default)
import { createReadStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { chromium } from "playwright-core";
import { machine, table } from "./common.js";

const KEYS = Number(process.env.BROWSER_KEYS ?? 100_000);
const BATCH = 1000;
const root = new URL("../", import.meta.url).pathname;
const TYPES = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };

// The page and the build, on 127.0.0.1 (a secure context, as OPFS needs).
const server = createServer((request, response) => {
  const path = normalize(join(root, new URL(request.url ?? "/", "http://x").pathname));
  if (path === join(root, "blank.html"))
    return void response
      .writeHead(200, { "content-type": "text/html" })
      .end('<!doctype html><link rel="icon" href="data:,">');
  if (!path.startsWith(join(root, "build") + "/") || !statSync(path, { throwIfNoEntry: false })?.isFile())
    return void response.writeHead(404).end();
  response.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" });
  createReadStream(path).pipe(response);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const profile = mkdtempSync(join(tmpdir(), "cs-browser-bench-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu"],
});
const page = await context.newPage();
await page.goto(`${origin}/blank.html`);

// Everything below runs in the page; one string, so no bundler or transform rewrites import().
const results = await page.evaluate(`(async () => {
  const cs = await import("/build/js/index.browser.js");
  await cs.init();
  const KEYS = ${KEYS}, BATCH = ${BATCH};
  const keys = Array.from({ length: KEYS }, (_, i) => "https://www.example.com/section-" + (i % 97) + "/articles/" + i + "/some-readable-slug?ref=list&page=" + (i % 13));
  const usage = async () => { const e = await navigator.storage.estimate(); return (e.usageDetails?.fileSystem ?? 0) + (e.usageDetails?.indexedDB ?? 0); };

  /** The usual way: one row per key, checked and inserted in one durable transaction per batch. */
  async function rowPerKey(name) {
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open(name, 1);
      open.onupgradeneeded = () => open.result.createObjectStore("keys");
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    return {
      addMany: (batch) => new Promise((resolve, reject) => {
        const tx = db.transaction("keys", "readwrite", { durability: "strict" });
        const store = tx.objectStore("keys");
        const flags = new Uint8Array(batch.length);
        batch.forEach((key, i) => {
          const got = store.get(key);
          got.onsuccess = () => { if (got.result === undefined) { flags[i] = 1; store.put(1, key); } };
        });
        tx.oncomplete = () => resolve(flags);
        tx.onabort = () => reject(tx.error);
      }),
      close: async () => db.close(),
    };
  }

  const contenders = {
    "crawlsieve OPFS": () => cs.openSeenSet({ backend: "browser", name: "bench-opfs", storage: "opfs" }),
    "crawlsieve IndexedDB": () => cs.openSeenSet({ backend: "browser", name: "bench-idb", storage: "indexeddb" }),
    "IndexedDB row per key": () => rowPerKey("bench-rows"),
  };
  const out = [];
  for (const [name, open] of Object.entries(contenders)) {
    const before = await usage();
    const set = await open();
    const rate = async () => {
      let fresh = 0;
      const started = performance.now();
      for (let i = 0; i < KEYS; i += BATCH) for (const flag of await set.addMany(keys.slice(i, i + BATCH))) fresh += flag;
      return { perSecond: KEYS / ((performance.now() - started) / 1000), fresh };
    };
    const added = await rate();
    const repeated = await rate();
    await set.close();
    const openStarted = performance.now();
    const again = await open();
    const reopenMs = performance.now() - openStarted;
    await again.close();
    out.push({ name, added, repeated, bytesPerKey: ((await usage()) - before) / KEYS, reopenMs });
  }
  return out;
})()`);

const version = await page.evaluate("navigator.userAgent.match(/Chrome\\/([\\d.]+)/)?.[1]");
await context.close();
server.close();
rmSync(profile, { recursive: true, force: true });

console.log(
  `browser seen-sets, ${KEYS.toLocaleString("en-US")} URL keys in batches of ${BATCH} (${machine()}, Chromium ${version}, ${new Date().toISOString().slice(0, 10)})`,
);
const peer = results.find((r) => r.name === "IndexedDB row per key");
console.log(
  table(
    ["contender", "new keys/s", "repeats/s", "vs row per key (new)", "bytes/key stored", "open again"],
    results.map((r) => [
      r.name,
      Math.round(r.added.perSecond).toLocaleString("en-US"),
      Math.round(r.repeated.perSecond).toLocaleString("en-US"),
      `${(r.added.perSecond / peer.added.perSecond).toFixed(2)}x`,
      r.bytesPerKey.toFixed(1),
      `${r.reopenMs.toFixed(0)} ms`,
    ]),
  ),
);
for (const r of results)
  if (r.added.fresh !== KEYS || r.repeated.fresh !== 0)
    throw new Error(`${r.name}: ${r.added.fresh} new then ${r.repeated.fresh}`);
