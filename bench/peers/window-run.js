// One contender of bench/window.bench.js in its own process (its peak RSS is its own): N URL keys
// in batches of 4,096, each key seen twice (the second pass a day later, inside the window), into
// the exact window (ExactWindowSet, uniform TTL or a TTL map of 100 host rules), the exact set
// with no window (FingerprintSet) or the Bloom window (TimeWindowFilter at p = 1e-6). Prints one
// JSON line: wall and CPU seconds of both passes, keys reported new, table bytes a key, peak RSS.
// usage: node bench/peers/window-run.js CONTENDER N
import { readFileSync } from "node:fs";
import { FingerprintSet, initSync, TimeWindowFilter } from "../../build/js/index.node.js";
import { ExactWindowSet } from "../../build/js/window/exact-window-set.js";
import { urlKeys } from "../common.js";

initSync();
const BATCH = 4096;
const [contender, n] = [process.argv[2], Number(process.argv[3])];
const keys = urlKeys(n, "page");
let now = Date.UTC(2026, 0, 1);
const clock = () => now;
const hosts = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`host${i}.example`, `${1 + (i % 30)}d`]));
const make = {
  window: () => new ExactWindowSet({ ttl: "30d", items: n, now: clock }),
  "window-map": () => new ExactWindowSet({ ttl: "30d", ttlMap: hosts, items: n, now: clock }),
  set: () => new FingerprintSet({ items: n }),
  bloom: () =>
    // Sized for the keys of the day they all arrive in: a slice holds what one day records.
    new TimeWindowFilter({ granularity: "day", slices: 30, itemsPerSlice: n, fpRate: 1e-6 / 30, now: clock }),
}[contender];
const set = make();
const add = contender === "bloom" ? (b) => set.seenMany(b) : (b) => set.addMany(b);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let fresh = 0;
for (let pass = 0; pass < 2; pass++) {
  for (let at = 0; at < n; at += BATCH) {
    const flags = add(keys.slice(at, at + BATCH));
    for (const f of flags) fresh += contender === "bloom" ? 1 - f : f;
  }
  now += 86_400_000;
}
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const peak = Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
console.log(
  JSON.stringify({
    contender,
    n,
    wall,
    cpu: (cpu.user + cpu.system) / 1e6,
    fresh,
    bytesPerKey: set.byteLength / n,
    peakMiB: peak,
  }),
);
