// The Durable Object seen-set (crawlsieve/durable-object, one shard) against the usual way (one
// SQLite row per key, bench/peers/row-per-key-object.js), both in one real workerd with
// SQLite-backed objects on local disk, in the same run. A client in this process posts batches
// of 1,000 URL keys (60-100 bytes) through the example Worker, alternating contenders, each into
// a fresh set: keys per second per object (all keys new, then all repeats), bytes of SQLite
// storage per key (the object's files after workerd stops), and how long the first call after a
// restart takes (the table is loaded from its rows). Memory per key is the FingerprintSet's
// WebAssembly memory, measured here in Node (the same class the object runs).
// usage: node bench/durable-object.bench.js   (DO_KEYS=200000 by default; DO_ONLY=crawlsieve
// leaves the peer out, for a run at the per-object cap)
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDurableWorker } from "../examples/durable-object/build.js";
import { freePort, startWorkerd } from "../examples/durable-object/serve.js";
import { FingerprintSet, initSync } from "../build/js/index.node.js";
import { machine, table } from "./common.js";

const KEYS = Number(process.env.DO_KEYS ?? 200_000);
const BATCH = 1000;
const dir = mkdtempSync(join(tmpdir(), "cs-do-bench-"));
const storage = join(dir, "storage");
const port = await freePort();
await buildDurableWorker({
  out: join(dir, "out"),
  storage,
  port,
  entry: new URL("./peers/row-per-key-object.js", import.meta.url).pathname,
  classes: ["RowPerKeyObject"],
});

const allKeys = Array.from(
  { length: KEYS },
  (_, i) => `https://www.example.com/section-${i % 97}/articles/${i}/some-readable-slug?ref=list&page=${i % 13}`,
);
const paths = { crawlsieve: "/add?set=bench&shards=1", "row per key": "/rows/add?set=bench" };
if (process.env.DO_ONLY === "crawlsieve") delete paths["row per key"];

/** Posts keys (all by default) in batches; keys per second and how many were new. */
async function run(path, keys = allKeys) {
  let fresh = 0;
  const start = performance.now();
  for (let at = 0; at < keys.length; at += BATCH) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      body: JSON.stringify(keys.slice(at, at + BATCH)),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    for (const flag of await response.json()) fresh += flag;
  }
  return { rate: keys.length / ((performance.now() - start) / 1000), fresh };
}

/** Bytes of the largest object's SQLite files in a namespace folder (the bench set, not the warm-up one; WAL included). */
function objectBytes(folder) {
  const sizes = new Map();
  for (const name of readdirSync(folder)) {
    const id = name.split(".")[0];
    sizes.set(id, (sizes.get(id) ?? 0) + statSync(join(folder, name)).size);
  }
  return Math.max(...sizes.values());
}

let server = await startWorkerd(join(dir, "out"), port);
// Warm-up: 10 batches of other keys into another set of each kind, so neither pays for JIT and first loads.
for (const path of Object.values(paths))
  await run(
    path.replace("set=bench", "set=warm"),
    Array.from({ length: 10 * BATCH }, (_, i) => `https://warm.example/${i}`),
  );
const rates = {};
for (const pass of ["new", "repeat"]) {
  for (const [name, path] of Object.entries(paths)) {
    const { rate, fresh } = await run(path);
    if (fresh !== (pass === "new" ? KEYS : 0)) throw new Error(`${name} ${pass}: ${fresh} new of ${KEYS}`);
    rates[`${name} ${pass}`] = rate;
  }
}
await server.stop();
const folders = readdirSync(storage);
const bytes = Object.fromEntries(
  Object.keys(paths).map((name) => {
    const folder = folders.find((f) => f.includes(name === "crawlsieve" ? "SeenSetDurableObject" : "RowPerKeyObject"));
    return [name, objectBytes(join(storage, folder))];
  }),
);

// The first call after a restart waits for the object to load its rows.
server = await startWorkerd(join(dir, "out"), port);
const restarts = {};
for (const [name, path] of Object.entries(paths)) {
  const start = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    body: JSON.stringify(allKeys.slice(0, 1)),
  });
  if ((await response.json())[0] !== 0) throw new Error(`${name}: a key was lost over the restart`);
  restarts[name] = performance.now() - start;
}
await server.stop();

initSync();
const memory = [1e5, 1e6, 2e6].map((n) => {
  const set = new FingerprintSet();
  const batch = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
  let peak = 0;
  for (let at = 0; at < n; at += batch.length) {
    set.addMany(batch.map((k) => `${k}:${at}`));
    peak = Math.max(peak, set.byteLength);
  }
  const row = [
    n.toLocaleString("en"),
    (set.byteLength / 2 ** 20).toFixed(1),
    (set.byteLength / n).toFixed(1),
    (peak / n).toFixed(1),
  ];
  set.dispose();
  return row;
});

console.log(
  `## ${new Date().toISOString().slice(0, 10)}: Durable Object seen-set, ${KEYS.toLocaleString("en")} keys, batches of ${BATCH}\n`,
);
console.log(`Machine: ${machine()}\n`);
console.log(
  table(
    ["contender", "keys/s new", "keys/s repeat", "storage bytes/key", "first call after restart (ms)"],
    Object.keys(paths).map((name) => [
      name,
      Math.round(rates[`${name} new`]).toLocaleString("en"),
      Math.round(rates[`${name} repeat`]).toLocaleString("en"),
      (bytes[name] / KEYS).toFixed(1),
      restarts[name].toFixed(0),
    ]),
  ),
);
if (paths["row per key"])
  console.log(
    `\nnew keys: crawlsieve / row per key = ${(rates["crawlsieve new"] / rates["row per key new"]).toFixed(2)}x; repeats: ${(rates["crawlsieve repeat"] / rates["row per key repeat"]).toFixed(2)}x\n`,
  );
console.log(table(["keys in one object", "table MiB", "bytes/key now", "bytes/key at peak"], memory));
