// `npm run bench:cli-scale`: exact `dedup` as the number of distinct lines grows, against mawk's
// '!s[$0]++' and `sort -u` where they finish, on lines generated and piped (nothing stored):
// bench/peers/gen-lines.c writes N distinct 16-hex-digit lines in no sorted order. Each tool's
// wall and CPU seconds and peak RSS come from /usr/bin/time around the tool alone (the generator
// runs on the other core), under flock /tmp/cs-bench.lock; every run's line count is checked
// against N (all lines are distinct, so an exact tool prints N). Sizes up to 1e7 alternate the
// tools 3 rounds and take medians; larger sizes run once. Writes bench/out/cli-scale.json and the
// charts bench/cli-scale.svg (time) and bench/cli-scale-memory.svg (bytes per line).
// usage: node bench/cli-scale.js [N...]   (default 1e6 1e7 1e8 3e8 1e9; MAWK_MAX and SORT_MAX
// cap the sizes those two are run at: mawk 1e7 (its time grows faster than N: 3 s at 1e6, 60 s
// at 1e7 here), sort -u 1e8; BEFORE=DIR adds the build of another checkout, DIR/build, as a tool:
// a change's before and after in the same run; AB_ENV="NAME=VALUE" adds this build run under that
// environment (e.g. CRAWLSIEVE_HUGE_PAGES=0); MERGE=1 keeps the rows of bench/out/cli-scale.json
// for the sizes and tools not run this time, so a long size can be run on its own)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { lineChart } from "./chart.js";
import { machine, table } from "./common.js";

const GEN = "bench/out/gen-lines";
mkdirSync("bench/out", { recursive: true });
execFileSync("gcc", ["-O2", "-o", GEN, "bench/peers/gen-lines.c"]);
// CHARTS_ONLY=1: no runs; the table and charts drawn again from bench/out/cli-scale.json.
const sizes = process.env.CHARTS_ONLY
  ? []
  : (process.argv.length > 2 ? process.argv.slice(2) : ["1e6", "1e7", "1e8", "3e8", "1e9"]).map(Number);
const MAWK_MAX = Number(process.env.MAWK_MAX ?? 1e7);
const SORT_MAX = Number(process.env.SORT_MAX ?? 1e8);
const tools = [
  { name: "crawlsieve dedup", cmd: "node build/js/cli/main.js dedup", max: Infinity },
  { name: "mawk '!s[$0]++'", cmd: "mawk '!s[$0]++'", max: MAWK_MAX },
  { name: "sort -u", cmd: "sort -u -S 50% -T bench/out", max: SORT_MAX },
];
if (process.env.AB_ENV)
  tools.splice(1, 0, {
    name: `crawlsieve dedup (${process.env.AB_ENV})`,
    cmd: `env ${process.env.AB_ENV} node build/js/cli/main.js dedup`,
    max: Infinity,
  });
if (process.env.BEFORE)
  tools.splice(1, 0, {
    name: `crawlsieve dedup (before: ${process.env.BEFORE_NAME ?? process.env.BEFORE})`,
    cmd: `node ${process.env.BEFORE}/build/js/cli/main.js dedup`,
    max: Infinity,
  });

/** One run of `tool` on N generated lines: wall, CPU seconds, peak RSS (bytes) and the lines it printed. */
function run(tool, n) {
  const timeFile = "bench/out/cli-scale.time";
  const script = `${GEN} ${n} | /usr/bin/time -f "%e %U %S %M" -o ${timeFile} ${tool.cmd} | wc -l`;
  const result = spawnSync("flock", ["/tmp/cs-bench.lock", "sh", "-c", script], {
    env: { ...process.env, LC_ALL: "C" },
    maxBuffer: 1 << 20,
  });
  if (result.status !== 0) throw new Error(`${tool.name} at ${n}: ${result.stderr}`);
  const [wall, user, sys, rssKb] = readFileSync(timeFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
  const printed = Number(result.stdout.toString().trim());
  if (printed !== n) throw new Error(`${tool.name} printed ${printed} of ${n} distinct lines`);
  return { wall, cpu: user + sys, rss: rssKb * 1024 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
for (const n of sizes) {
  const rounds = n <= 1e7 ? 3 : 1;
  const runs = new Map(tools.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) for (const tool of tools) if (n <= tool.max) runs.get(tool.name).push(run(tool, n));
  for (const tool of tools) {
    const list = runs.get(tool.name);
    if (list.length === 0) continue;
    const row = {
      n,
      tool: tool.name,
      wall: median(list.map((x) => x.wall)),
      cpu: median(list.map((x) => x.cpu)),
      rss: median(list.map((x) => x.rss)),
      rounds,
    };
    results.push(row);
    console.error(
      `${n.toExponential(0)} ${tool.name}: ${row.wall} s wall, ${row.cpu.toFixed(1)} s CPU, ${(row.rss / 2 ** 20).toFixed(0)} MiB`,
    );
  }
}

if (process.env.MERGE || process.env.CHARTS_ONLY) {
  const kept = JSON.parse(readFileSync("bench/out/cli-scale.json", "utf8")).filter(
    (old) => !results.some((r) => r.n === old.n && r.tool === old.tool),
  );
  results.unshift(...kept);
  results.sort((a, b) => a.n - b.n);
}
const base = new Map(results.filter((r) => r.tool === "crawlsieve dedup").map((r) => [r.n, r]));
console.log(`${machine()}\n`);
console.log(
  table(
    ["distinct lines", "tool", "wall s", "CPU s", "peak RSS MiB", "bytes per line (RSS / N)", "wall vs crawlsieve"],
    results.map((r) => [
      r.n.toExponential(0),
      r.tool,
      r.wall.toFixed(2),
      r.cpu.toFixed(1),
      (r.rss / 2 ** 20).toFixed(0),
      (r.rss / r.n).toFixed(1),
      (r.wall / base.get(r.n).wall).toFixed(2) + "x",
    ]),
  ),
);
writeFileSync("bench/out/cli-scale.json", JSON.stringify(results, null, 2));
const names = [...new Set(results.map((r) => r.tool))];
const series = (metric) =>
  names
    .map((name) => ({
      name,
      points: results.filter((r) => r.tool === name).map((r) => ({ x: Math.log10(r.n), y: metric(r) })),
    }))
    .filter((s) => s.points.length > 0);
writeFileSync(
  "bench/cli-scale.svg",
  lineChart({
    title: "Exact line dedup: seconds per million lines",
    xLabel: "log10 of distinct lines",
    yLabel: "wall seconds per 1e6 lines",
    series: series((r) => (r.wall / r.n) * 1e6),
  }),
);
writeFileSync(
  "bench/cli-scale-memory.svg",
  lineChart({
    title: "Exact line dedup: peak RSS per distinct line",
    xLabel: "log10 of distinct lines",
    yLabel: "bytes per line",
    series: series((r) => r.rss / r.n),
  }),
);
