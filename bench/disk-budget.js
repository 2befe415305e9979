// The disk seen-set past its memory budget (openDiskSeenSet({ memory }): the sorted part on disk
// behind a filter and a block index) against the same set without a budget (every key in memory,
// what a user has otherwise), over stores of N URL keys. Each contender runs in its own process
// (bench/peers/disk-budget-run.js) under `flock /tmp/cs-bench.lock /usr/bin/time`, alternating,
// ROUNDS rounds (median by wall): open, 1 M absent keys asked, 1 M present ones, 1 M added (half
// present). Wall and CPU seconds of the whole process, peak RSS, keys a second, blocks read a key.
// The first open with a budget compacts the store (the fill left it unsorted): timed on its own.
// usage: node bench/disk-budget.js [N...]   (default 1e7 3e7 1e8; MEMORY bytes, default 256 MiB; ROUNDS=3)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lastJson, machine, table, timedRun } from "./common.js";

const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(1e7, 3e7, 1e8);
const MEMORY = Number(process.env.MEMORY ?? 256 * 2 ** 20);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim();

function run(...args) {
  const result = timedRun(
    [process.execPath, "--max-old-space-size=16384", "bench/peers/disk-budget-run.js", ...args.map(String)],
    { maxBuffer: 1 << 24 },
  );
  return { ...result, ...lastJson(result.stdout) };
}

const rows = [];
const mib = (MEMORY / 2 ** 20).toFixed(0);
for (const n of sizes) {
  const dir = mkdtempSync(join(process.env.TMP ?? "/tmp", "cs-disk-budget-"));
  try {
    const fill = run("fill", dir, n);
    rows.push([
      `${n.toExponential()}: fill (no budget)`,
      fill.wall.toFixed(1),
      fill.cpu.toFixed(1),
      fill.rss.toFixed(0),
      "",
      "",
      "",
      "",
      "",
    ]);
    // The first open with a budget compacts what the fill left unsorted.
    const first = run("work", dir, n, MEMORY);
    rows.push([
      `${n.toExponential()}: first open with ${mib} MiB (compacts)`,
      first.wall.toFixed(1),
      first.cpu.toFixed(1),
      first.rss.toFixed(0),
      first.open.toFixed(1),
      "",
      "",
      "",
      "",
    ]);
    const runs = { budget: [], whole: [] };
    for (let r = 0; r < ROUNDS; r++) {
      runs.budget.push(run("work", dir, n, MEMORY));
      runs.whole.push(run("work", dir, n));
    }
    for (const [name, label] of [
      ["budget", `memory ${mib} MiB`],
      ["whole", "no budget (all in memory)"],
    ]) {
      const m = [...runs[name]].sort((a, b) => a.wall - b.wall)[Math.floor(ROUNDS / 2)];
      const k = (step) => `${m[step].keysPerSecond.toLocaleString("en-US")} (${m[step].blocksPerKey})`;
      rows.push([
        `${n.toExponential()}: ${label}`,
        m.wall.toFixed(1),
        m.cpu.toFixed(1),
        m.rss.toFixed(0),
        m.open.toFixed(2),
        k("absent"),
        k("present"),
        k("add"),
        m.close.toFixed(2),
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `## The disk seen-set past its memory budget (${new Date().toISOString().slice(0, 10)}, commit ${commit}); median of ${ROUNDS}, alternating\n\n${machine()}\n`,
);
console.log(
  table(
    [
      "store, run",
      "wall s",
      "CPU s",
      "peak RSS MiB",
      "open s",
      "absent keys/s (blocks a key)",
      "present keys/s (blocks a key)",
      "adds/s, half new (blocks a key)",
      "close s",
    ],
    rows,
  ),
);
