// The exact recrawl window in memory against what a user would pick instead, in one run: the exact
// set without a window (FingerprintSet: what the window costs) and the Bloom window
// (TimeWindowFilter, 30 day slices, each sized for N keys, at p = 1e-6 a query). N URL keys, each seen twice a day apart (2N
// sightings). Each run is its own process (bench/peers/window-run.js) under flock
// /tmp/cs-bench.lock; contenders alternate within a round, ROUNDS rounds (default 3), medians by
// wall time, CPU seconds beside. Prints a table: keys/s, the ratio to the exact window, table
// bytes a key and peak RSS. usage: N=1e7 ROUNDS=3 node bench/window.bench.js
import { spawnSync } from "node:child_process";
import { machine, table } from "./common.js";

const N = Number(process.env.N ?? 1e7);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONTENDERS = ["window", "window-map", "set", "bloom"];
const runner = new URL("./peers/window-run.js", import.meta.url).pathname;
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim();
const runs = Object.fromEntries(CONTENDERS.map((c) => [c, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const contender of CONTENDERS) {
    const result = spawnSync("flock", ["/tmp/cs-bench.lock", process.execPath, runner, contender, String(N)], {
      encoding: "utf8",
      maxBuffer: 1 << 24,
    });
    if (result.status !== 0) throw new Error(`${contender}: ${result.stderr}`);
    runs[contender].push(JSON.parse(result.stdout.trim().split("\n").pop()));
  }
}
const median = (list) => [...list].sort((a, b) => a.wall - b.wall)[Math.floor(list.length / 2)];
const base = median(runs.window);
console.log(`# window.bench.js, N = ${N} keys seen twice, ${ROUNDS} rounds, commit ${commit}, ${machine()}`);
console.log(
  table(
    ["contender", "sightings/s", "vs exact window", "wall s", "CPU s", "new", "table B/key", "peak RSS MiB"],
    CONTENDERS.map((c) => {
      const m = median(runs[c]);
      return [
        c,
        Math.round((2 * N) / m.wall).toLocaleString("en-US"),
        (base.wall / m.wall).toFixed(2),
        m.wall.toFixed(2),
        m.cpu.toFixed(2),
        m.fresh.toLocaleString("en-US"),
        m.bytesPerKey.toFixed(1),
        m.peakMiB.toFixed(0),
      ];
    }),
  ),
);
