// `dedup --store` past its memory budget, the issue's target as a curve: for each size N, an empty
// store takes `seq 1 N` under --memory (default 256MiB), then a second run takes a window over the
// store's end, `seq N-M+1 N+M` (M = N/50), which must print exactly `seq N+1 N+M`. Both outputs are
// checked against seq's own; each run is timed by /usr/bin/time under flock /tmp/cs-bench.lock
// (wall, user + sys CPU, peak RSS), and --stats gives the lines spilled and the bytes the process
// read and wrote (/proc/self/io: rchar, wchar), from which the bytes read per new key.
// With BEFORE=DIR (a checkout of another commit, built), the window run is timed three times for
// each build, alternating, each on its own copy of the store, and the medians are printed.
// usage: node bench/store-past-memory.js [N...]   (default 1e7 5e7 1e8; MEMORY=256MiB, TMP=/tmp, BEFORE=DIR)
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { machine, table } from "./common.js";

const MEMORY = process.env.MEMORY ?? "256MiB";
const TMP = process.env.TMP ?? "/tmp";
const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(1e7, 5e7, 1e8);
const CLI = "build/js/cli/main.js";
const BEFORE = process.env.BEFORE;
const commit = (dir) => spawnSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"]).stdout.toString().trim();

/** One run of `input | dedup --store` (with the build in `root`): its timing, its --stats, and whether its output is `expected`'s. */
function run(store, input, expected, root = ".") {
  const script = `set -o pipefail; ${input} | flock /tmp/cs-bench.lock /usr/bin/time -f "TIME %e %U %S %M" node ${join(root, CLI)} dedup --store ${store} --memory ${MEMORY} --tmp ${TMP} --stats 2> ${store}.err | md5sum; ${expected} | md5sum; cat ${store}.err`;
  const result = spawnSync("bash", ["-c", script], { maxBuffer: 1 << 24 });
  if (result.status !== 0) throw new Error(`${input} failed: ${result.stderr}`);
  const [got, want, ...err] = result.stdout.toString().trim().split("\n");
  const time = err.find((l) => l.startsWith("TIME "));
  const stats = JSON.parse(err.find((l) => l.startsWith("{")));
  const [wall, user, sys, rssKb] = time.slice(5).split(" ").map(Number);
  return { wall, cpu: user + sys, rss: rssKb / 1024, stats, exact: got.split(" ")[0] === want.split(" ")[0] };
}

const rows = [];
for (const n of sizes) {
  const dir = mkdtempSync(join(TMP, "cs-past-memory-"));
  const store = join(dir, "store");
  try {
    const m = n / 50;
    const first = run(store, `seq 1 ${n}`, `seq 1 ${n}`);
    const disk = statSync(join(store, "fingerprints.log")).size;
    const window = [`seq ${n - m + 1} ${n + m}`, `seq ${n + 1} ${n + m}`];
    const runs = [[`seq 1 ${n.toExponential()}`, first, n, ""]];
    const what = `seq ${(n - m + 1).toExponential(2)}..${(n + m).toExponential(2)}, store of ${n.toExponential()}`;
    if (BEFORE === undefined) runs.push([what, run(store, ...window), m, ""]);
    else {
      // Alternating, each run on a copy of the store as the first run left it (a run appends to it).
      const times = { now: [], before: [] };
      for (let i = 0; i < 3; i++) {
        for (const [build, root] of [["now", "."], ["before", BEFORE]]) {
          const copy = join(dir, `copy-${build}-${i}`);
          cpSync(store, copy, { recursive: true });
          times[build].push(run(copy, ...window, root));
          rmSync(copy, { recursive: true, force: true });
        }
      }
      const median = (rs) => [...rs].sort((a, b) => a.wall - b.wall)[1];
      runs.push([what, median(times.now), m, commit(".")], [what, median(times.before), m, commit(BEFORE)]);
    }
    for (const [what, r, fresh, build] of runs) {
      rows.push([
        what + (build === "" ? "" : ` (${build})`),
        r.wall.toFixed(1),
        r.cpu.toFixed(1),
        r.rss.toFixed(0),
        Math.round(r.stats.lines / r.wall).toLocaleString("en-US"),
        (r.stats.spilledLines ?? 0).toLocaleString("en-US"),
        r.stats.storeKeysRead === undefined ? "" : `${r.stats.storeKeysRead.toLocaleString("en-US")} / ${r.stats.storeKeysSetAside.toLocaleString("en-US")}`,
        ((r.stats.ioReadBytes - r.stats.bytesIn) / fresh).toFixed(0),
        (disk / n).toFixed(1),
        r.exact ? "exact" : "WRONG",
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`## dedup --store past --memory ${MEMORY} (${new Date().toISOString().slice(0, 10)}, commit ${commit(".")})${BEFORE === undefined ? "" : `; window runs: median of 3, alternating with ${commit(BEFORE)}`}\n\n${machine()}\n`);
console.log(table(["run", "wall s", "CPU s", "peak RSS MiB", "lines/s", "lines spilled", "store keys read / set aside at the end", "bytes read a new key (input aside)", "bytes a key on disk", "output"], rows));
