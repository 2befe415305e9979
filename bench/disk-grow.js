// A fresh disk seen-set filled past its memory budget in one process (issue 46, items 0 and 4),
// beside a JavaScript Set of the same keys in the same run. Each contender runs in its own process
// (bench/peers/disk-grow-run.js) under `flock /tmp/cs-bench.lock /usr/bin/time`, alternating,
// ROUNDS rounds (median by wall): fill rate, absent / present / mixed (90% present) check rates,
// the longest batch's wait (a merge into the sorted part runs inside the batch that finds it
// due), disk bytes a key, peak RSS after the fill and at the end, reads and blocks a checked key.
// usage: node bench/disk-grow.js [N...]   (default 1e7; MEMORY bytes, default 16 MiB; ROUNDS=3)
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
const rows = [];
const notes = [];
for (const n of sizes) {
  const runs = { store: [], set: [] };
  for (let r = 0; r < ROUNDS; r++) for (const kind of ["store", "set"]) runs[kind].push(run(kind, n));
  const median = (kind) => [...runs[kind]].sort((a, b) => a.wall - b.wall)[Math.floor(ROUNDS / 2)];
  const store = median("store");
  const set = median("set");
  for (const [label, m] of [
    [`disk seen-set, memory ${mib(MEMORY)} MiB`, store],
    ["JavaScript Set", set],
  ]) {
    const reads = (step) => (m[step].readsAKey === undefined ? "" : ` (${m[step].readsAKey.toFixed(4)})`);
    rows.push([
      `${n.toExponential()}: ${label}`,
      m.wall.toFixed(1),
      m.cpu.toFixed(1),
      rate(m.fillPerSecond),
      rate(m.worstBatchMs),
      `${rate(m.absent.perSecond)}${reads("absent")}`,
      `${rate(m.present.perSecond)}${reads("present")}`,
      `${rate(m.mixed.perSecond)}${reads("mixed")}`,
      m.diskBytesAKey === undefined ? "" : m.diskBytesAKey.toFixed(2),
      `${mib(m.fillPeakRss)} / ${mib(m.peakRss)}`,
    ]);
  }
  const ratio = (f) => (f(store) / f(set)).toFixed(2);
  rows.push([
    `${n.toExponential()}: store / Set`,
    ratio((m) => m.wall),
    ratio((m) => m.cpu),
    ratio((m) => m.fillPerSecond),
    ratio((m) => m.worstBatchMs),
    ratio((m) => m.absent.perSecond),
    ratio((m) => m.present.perSecond),
    ratio((m) => m.mixed.perSecond),
    "",
    `${ratio((m) => m.fillPeakRss)} / ${ratio((m) => m.peakRss)}`,
  ]);
  notes.push(
    `${n.toExponential()}: filter ${store.filterBitsPerKey.toFixed(2)} bits a key (false-positive rate ${(100 * store.filterFpRate).toFixed(3)}%); blocks read an absent key ${store.absent.blocksAKey.toFixed(5)}, a present key ${store.present.blocksAKey.toFixed(5)}; walls of the ${ROUNDS} rounds: store ${runs.store.map((r) => r.wall.toFixed(1)).join(", ")}, Set ${runs.set.map((r) => r.wall.toFixed(1)).join(", ")}`,
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
      "absent keys/s (reads a key)",
      "present keys/s (reads a key)",
      "mixed 90% present keys/s (reads a key)",
      "disk bytes a key",
      "peak RSS MiB: fill / end",
    ],
    rows,
  ),
);
console.log(`\n${notes.join("\n")}`);
