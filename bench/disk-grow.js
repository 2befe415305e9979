// A fresh disk seen-set filled past its memory budget in one process (issue 46, items 0, 4 and 6),
// beside the same set without a budget and a JavaScript Set of the same keys (up to SET_MAX keys,
// default 3e7) in the same run. Each contender runs in its own process
// (bench/peers/disk-grow-run.js) under `flock /tmp/cs-bench.lock /usr/bin/time`, alternating,
// ROUNDS rounds (median by wall): fill rate, absent / present / mixed (90% present) check rates,
// the longest batch's wait, the open time of the filled store, disk bytes a key, peak RSS after
// the fill and at the end, reads and blocks a checked key. `npm run bench:disk-scale` is the
// curve: 1e7 and 1e8 keys under 2 GiB, one round (3e8 and 1e9 by hand: hours).
// usage: node bench/disk-grow.js [N...]   (default 1e7; MEMORY bytes, default 16 MiB; ROUNDS=3; NO_BUDGET=0 leaves that contender out)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lastJson, machine, table, timedRun } from "./common.js";

const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(1e7);
const MEMORY = Number(process.env.MEMORY ?? 16 * 2 ** 20);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim();

/** One contender's run: its report, with the process's wall and CPU seconds and peak RSS. */
function run(kind, n) {
  const dir = mkdtempSync(join(process.env.TMP ?? "/tmp", "cs-disk-grow-"));
  try {
    const result = timedRun(
      [
        process.execPath,
        "--max-old-space-size=16384",
        "bench/peers/disk-grow-run.js",
        kind,
        dir,
        String(n),
        String(MEMORY),
      ],
      { maxBuffer: 1 << 24 },
    );
    return { wall: result.wall, cpu: result.cpu, ...lastJson(result.stdout) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mib = (bytes) => (bytes / 2 ** 20).toFixed(0);
const rate = (x) => x.toLocaleString("en-US");
/** The contenders: the store with its budget, the same store without one, a Set of the key strings as far as it fits. */
const SET_MAX = Number(process.env.SET_MAX ?? 3e7);
const NO_BUDGET = process.env.NO_BUDGET !== "0";
const label = {
  store: `disk seen-set, memory ${mib(MEMORY)} MiB`,
  nobudget: "disk seen-set, no budget",
  set: "JavaScript Set",
};
const rows = [];
const notes = [];
for (const n of sizes) {
  const kinds = ["store", ...(NO_BUDGET ? ["nobudget"] : []), ...(n <= SET_MAX ? ["set"] : [])];
  const runs = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let r = 0; r < ROUNDS; r++) for (const kind of kinds) runs[kind].push(run(kind, n));
  const median = (kind) => [...runs[kind]].sort((a, b) => a.wall - b.wall)[Math.floor(ROUNDS / 2)];
  const medians = Object.fromEntries(kinds.map((kind) => [kind, median(kind)]));
  for (const kind of kinds) {
    const m = medians[kind];
    const reads = (step) =>
      m[step].readsAKey === undefined
        ? ""
        : ` (${m[step].readsAKey.toFixed(4)}; ${rate(Math.round(m[step].readsAKey * 1e5))} a batch)`;
    rows.push([
      `${n.toExponential()}: ${label[kind]}`,
      m.wall.toFixed(1),
      m.cpu.toFixed(1),
      rate(m.fillPerSecond),
      rate(m.worstBatchMs),
      m.openSeconds === undefined ? "" : m.openSeconds.toFixed(2),
      `${rate(m.absent.perSecond)}${reads("absent")}`,
      `${rate(m.present.perSecond)}${reads("present")}`,
      `${rate(m.mixed.perSecond)}${reads("mixed")}`,
      m.diskBytesAKey === undefined ? "" : m.diskBytesAKey.toFixed(2),
      `${mib(m.fillPeakRss)} / ${mib(m.peakRss)}`,
    ]);
  }
  const store = medians.store;
  for (const other of kinds.slice(1)) {
    const them = medians[other];
    const ratio = (f) => (f(them) === undefined ? "" : (f(store) / f(them)).toFixed(2));
    rows.push([
      `${n.toExponential()}: store / ${other === "set" ? "Set" : "no budget"}`,
      ratio((m) => m.wall),
      ratio((m) => m.cpu),
      ratio((m) => m.fillPerSecond),
      ratio((m) => m.worstBatchMs),
      ratio((m) => m.openSeconds),
      ratio((m) => m.absent.perSecond),
      ratio((m) => m.present.perSecond),
      ratio((m) => m.mixed.perSecond),
      "",
      `${ratio((m) => m.fillPeakRss)} / ${ratio((m) => m.peakRss)}`,
    ]);
  }
  const walls = kinds.map((kind) => `${kind} ${runs[kind].map((r) => r.wall.toFixed(1)).join(", ")}`).join("; ");
  const filter =
    store.filterBitsPerKey === undefined
      ? "every key in memory (within the budget: no sorted part)"
      : `filter ${store.filterBitsPerKey.toFixed(2)} bits a key (false-positive rate ${(100 * store.filterFpRate).toFixed(3)}%); blocks read an absent key ${store.absent.blocksAKey.toFixed(5)}, a present key ${store.present.blocksAKey.toFixed(5)}`;
  notes.push(
    `${n.toExponential()}: ${filter}; walls of the ${ROUNDS} rounds: ${walls}${n > SET_MAX && SET_MAX > 0 ? `; no Set past ${SET_MAX.toExponential()} keys (SET_MAX): its strings outgrow this machine's memory` : ""}`,
  );
}
console.log(
  `## A fresh disk seen-set filled past its memory budget (${new Date().toISOString().slice(0, 10)}, commit ${commit}); median of ${ROUNDS}, alternating\n\n${machine()}\n`,
);
console.log(
  table(
    [
      "keys: contender",
      "wall s",
      "CPU s",
      "fill keys/s",
      "longest batch ms",
      "open s",
      "absent keys/s (reads a key; a batch of 100,000)",
      "present keys/s (reads a key; a batch)",
      "mixed 90% present keys/s (reads a key; a batch)",
      "disk bytes a key",
      "peak RSS MiB: fill / end",
    ],
    rows,
  ),
);
console.log(`\n${notes.join("\n")}`);
