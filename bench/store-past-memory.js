// `dedup --store` past its memory budget, the issue's target as a curve: for each size N, an empty
// store takes `seq 1 N` under --memory (default 256MiB), then a second run takes a window over the
// store's end, `seq N-M+1 N+M` (M = N/50), which must print exactly `seq N+1 N+M`; that run
// compacts the store at its end (it found N keys unsorted). Against the compacted store two more
// runs: three lines (two old, one new), and a second window `seq N+M-W+1 N+M+W` (W = N/100).
// Every output is checked against seq's own; each run is timed by /usr/bin/time under flock
// /tmp/cs-bench.lock (wall, user + sys CPU, peak RSS), and --stats gives the lines spilled, the
// sorted records read and the bytes the process read and wrote (/proc/self/io: rchar, wchar), from
// which the bytes read per new key.
// With BEFORE=DIR (a checkout of another commit, built), each run after the first is timed three
// times for each build, alternating, each on its own copy of the store, and the medians printed.
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
/** The median run by wall time. */
const median = (rs) => [...rs].sort((a, b) => a.wall - b.wall)[Math.floor(rs.length / 2)];

/**
 * `input | dedup` on a copy of `store` for this build (and the one BEFORE, alternating, three each):
 * [label, run, build] rows of the medians. With `keep`, this build's last copy is kept there.
 */
function timed(dir, store, input, expected, what, keep) {
  const builds =
    BEFORE === undefined
      ? [["now", "."]]
      : [
          ["now", "."],
          ["before", BEFORE],
        ];
  const times = { now: [], before: [] };
  const rounds = BEFORE === undefined ? 1 : 3;
  for (let i = 0; i < rounds; i++) {
    for (const [build, root] of builds) {
      const copy = join(dir, `copy-${build}-${i}`);
      cpSync(store, copy, { recursive: true });
      // The copy's dirty pages written back now, not during the run's own flushes.
      spawnSync("sync");
      times[build].push(run(copy, input, expected, root));
      if (keep !== undefined && build === "now" && i === rounds - 1) {
        rmSync(keep, { recursive: true, force: true });
        cpSync(copy, keep, { recursive: true });
      }
      rmSync(copy, { recursive: true, force: true });
    }
  }
  return builds.map(([build, root]) => [what, median(times[build]), BEFORE === undefined ? "" : commit(root)]);
}

for (const n of sizes) {
  const dir = mkdtempSync(join(TMP, "cs-past-memory-"));
  const store = join(dir, "store");
  const compacted = join(dir, "compacted");
  try {
    const m = n / 50;
    const w = n / 100;
    const first = run(store, `seq 1 ${n}`, `seq 1 ${n}`);
    const disk = statSync(join(store, "fingerprints.log")).size;
    const e = (x) => x.toExponential(2);
    const runs = [[`seq 1 ${n.toExponential()}`, first, n, ""]];
    for (const [what, r, build] of timed(
      dir,
      store,
      `seq ${n - m + 1} ${n + m}`,
      `seq ${n + 1} ${n + m}`,
      `window seq ${e(n - m + 1)}..${e(n + m)} (compacts at its end)`,
      compacted,
    ))
      runs.push([what, r, m, build]);
    const top = n + m;
    const three = `printf '%s\\n' 7 ${top - 5} ${top + 1}`;
    for (const [what, r, build] of timed(
      dir,
      compacted,
      three,
      `echo ${top + 1}`,
      `3 lines (1 new), compacted store of ${e(top)}`,
    ))
      runs.push([what, r, 1, build]);
    for (const [what, r, build] of timed(
      dir,
      compacted,
      `seq ${top - w + 1} ${top + w}`,
      `seq ${top + 1} ${top + w}`,
      `window seq ${e(top - w + 1)}..${e(top + w)}, compacted store`,
    ))
      runs.push([what, r, w, build]);
    for (const [what, r, fresh, build] of runs) {
      rows.push([
        what + (build === "" ? "" : ` (${build})`),
        r.wall.toFixed(1),
        r.cpu.toFixed(1),
        r.rss.toFixed(0),
        Math.round(r.stats.lines / r.wall).toLocaleString("en-US"),
        (r.stats.spilledLines ?? 0).toLocaleString("en-US"),
        r.stats.storeKeysRead === undefined
          ? ""
          : `${r.stats.storeKeysRead.toLocaleString("en-US")} / ${r.stats.storeKeysSetAside.toLocaleString("en-US")}`,
        r.stats.sortedRecords === undefined ? "" : `${r.stats.sortedRecordsRead} / ${r.stats.sortedRecords}`,
        ((r.stats.ioReadBytes - r.stats.bytesIn) / fresh).toFixed(0),
        (disk / n).toFixed(1),
        r.exact ? "exact" : "WRONG",
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `## dedup --store past --memory ${MEMORY} (${new Date().toISOString().slice(0, 10)}, commit ${commit(".")})${BEFORE === undefined ? "" : `; runs after the first: median of 3, alternating with ${commit(BEFORE)}`}\n\n${machine()}\n`,
);
console.log(
  table(
    [
      "run",
      "wall s",
      "CPU s",
      "peak RSS MiB",
      "lines/s",
      "lines spilled",
      "store keys read / set aside at the end",
      "sorted records read / held",
      "bytes read a new key (input aside)",
      "bytes a key on disk",
      "output",
    ],
    rows,
  ),
);
