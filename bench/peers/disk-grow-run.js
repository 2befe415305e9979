// One contender of bench/disk-grow.js in its own process: "store" fills a fresh disk seen-set
// with a memory budget (keys as spans of one reused buffer), "nobudget" the same set without one
// (every key in memory), "set" a JavaScript Set of the same key strings; then each answers 1 M
// absent keys, 1 M present ones and 1 M mixed (90% present), in batches of 100,000 (only the calls
// are timed: making the keys is not), and a store is closed and opened again (timed). Prints one
// JSON line: keys a second of each step, the longest batch, the peak RSS after the fill, the
// store's bytes on disk, its reads (4 KiB blocks) a key of each check and its open seconds.
// usage: node bench/peers/disk-grow-run.js store|nobudget|set DIR N MEMORY
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { openSeenSet } from "../../build/js/index.node.js";

const [kind, dir, nArg, memoryArg] = process.argv.slice(2);
const N = Number(nArg);
const MEMORY = Number(memoryArg);
const BATCH = 100_000;
const CHECKS = 1_000_000;
const keyOf = (v) => `https://s${v % 40}.example/p/${v}`;
const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) * 1024;
/** xorshift32: the same present keys in both contenders. */
let seed = 0x9e3779b9;
const next = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};

const encoder = new TextEncoder();
const data = new Uint8Array(64 * BATCH);
const spans = new Uint32Array(2 * BATCH);
function spansOf(from, to) {
  let at = 0;
  for (let i = from; i < to; i++) {
    spans[2 * (i - from)] = at;
    at += encoder.encodeInto(keyOf(i), data.subarray(at)).written;
    spans[2 * (i - from) + 1] = at;
  }
  return { data: data.subarray(0, at), spans: spans.subarray(0, 2 * (to - from)) };
}

const options = { backend: "disk", path: dir, ...(kind === "store" ? { memory: MEMORY } : {}) };
const stored = kind !== "set";
const set = stored ? await openSeenSet(options) : new Set();
let fillMs = 0;
let worstMs = 0;
for (let i = 0; i < N; i += BATCH) {
  const to = Math.min(N, i + BATCH);
  if (stored) {
    const keys = spansOf(i, to);
    const t = performance.now();
    await set.addSpans(keys.data, keys.spans);
    const ms = performance.now() - t;
    fillMs += ms;
    worstMs = Math.max(worstMs, ms);
  } else {
    const keys = Array.from({ length: to - i }, (_, j) => keyOf(i + j));
    const t = performance.now();
    for (const key of keys) set.add(key);
    const ms = performance.now() - t;
    fillMs += ms;
    worstMs = Math.max(worstMs, ms);
  }
}
const fillPeakRss = hwm();
const result = {
  kind,
  n: N,
  fillPerSecond: Math.round(N / (fillMs / 1000)),
  worstBatchMs: Math.round(worstMs),
  fillPeakRss,
};
const steps = {
  absent: (i) => `https://absent.example/q/${i}`,
  present: () => keyOf(Math.floor(next() * N)),
  mixed: (i) => (next() < 0.9 ? keyOf(Math.floor(next() * N)) : `https://absent.example/m/${i}`),
};
for (const [step, make] of Object.entries(steps)) {
  let ms = 0;
  let found = 0;
  const before = stored ? set.stats : undefined;
  for (let i = 0; i < CHECKS; i += BATCH) {
    const keys = Array.from({ length: BATCH }, (_, j) => make(i + j));
    const t = performance.now();
    if (stored) found += (await set.hasMany(keys)).reduce((a, b) => a + b, 0);
    else for (const key of keys) found += set.has(key) ? 1 : 0;
    ms += performance.now() - t;
  }
  result[step] = { perSecond: Math.round(CHECKS / (ms / 1000)), found };
  if (stored && before.diskBlocksRead !== undefined) {
    const after = set.stats;
    result[step].blocksAKey = (after.diskBlocksRead - before.diskBlocksRead) / CHECKS;
    result[step].readsAKey = (after.diskReads - before.diskReads) / CHECKS;
  }
}
result.peakRss = hwm();
if (stored) {
  const { filterBitsPerKey, filterFpRate, diskLookups } = set.stats;
  Object.assign(result, { filterBitsPerKey, filterFpRate, diskLookups });
  await set.close();
  const bytes = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
  result.diskBytesAKey = bytes / N;
  // Opened again: the file read (with a budget, its sorted part once into the filter and index) until the first answer.
  const t = performance.now();
  const again = await openSeenSet(options);
  await again.hasMany(["https://absent.example/open"]);
  result.openSeconds = (performance.now() - t) / 1000;
  await again.close();
}
result.openPeakRss = hwm();
process.stdout.write(`${JSON.stringify(result)}\n`);
