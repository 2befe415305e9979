// `npm run bench:cli`: `crawlsieve dedup` against what a user would run instead, on the same file
// in one run: awk '!s[$0]++' (mawk), sort -u, a Node Set script, the `bloomfilter` package, and
// the floors wc -l (reading) and md5sum (reading and hashing). Tools alternate, 3 rounds, medians;
// each run is timed by /usr/bin/time (wall, user + sys CPU, peak RSS) under flock
// /tmp/cs-bench.lock, and writes its output to a file, as a user would.
// usage: node bench/cli.bench.js [FILE...]   (default: the shipped sample, the real streams
// bench/out/crawl-fragments.txt and crawl-stream.txt when bench/crawl-stream.sh has built them,
// and bench/out/mirror-12m.txt, generated with
// `node bench/gen-mirror.js 12000000 bench/out/mirror-12m.txt` when missing)
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { createHash } from "node:crypto";
import { machine, table, timedRun } from "./common.js";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const OUT = "bench/out/cli-out.txt";
const CLI = "build/js/cli/main.js";
const files = process.argv.slice(2);
if (files.length === 0) {
  files.push("examples/nodejs-doc-links.txt", "bench/out/mirror-12m.txt");
  if (!existsSync(files[1]))
    spawnSync(process.execPath, ["bench/gen-mirror.js", "12000000", files[1]], { stdio: "inherit" });
  // The real crawl-order streams, when bench/crawl-stream.sh has built them (it needs apt-get).
  for (const real of ["bench/out/crawl-stream.txt", "bench/out/crawl-fragments.txt"])
    if (existsSync(real)) files.splice(1, 0, real);
}

/** One timed run: stdout to OUT; returns wall and CPU seconds, peak RSS in MiB. */
function timed(command) {
  mkdirSync(dirname(OUT), { recursive: true });
  const out = openSync(OUT, "w");
  try {
    return timedRun(command, { stdout: out, env: { LC_ALL: "C" } });
  } finally {
    closeSync(out);
  }
}

function digest(file) {
  return createHash("md5").update(readFileSync(file)).digest("hex");
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function suite(file) {
  const distinct = Number(spawnSync("sh", ["-c", `LC_ALL=C mawk '!s[$0]++' '${file}' | wc -l`]).stdout.toString());
  const tools = [
    { name: "crawlsieve dedup (exact, xxh128)", cmd: ["node", CLI, "dedup", file], exact: true },
    { name: "crawlsieve dedup --hash md5", cmd: ["node", CLI, "dedup", "--hash", "md5", file], exact: true },
    { name: "crawlsieve dedup --approx (p = 0.001)", cmd: ["node", CLI, "dedup", "--approx", file] },
    { name: "awk '!s[$0]++' (mawk)", cmd: ["mawk", "!s[$0]++", file], exact: true, reference: true },
    { name: "sort -u", cmd: ["sort", "-u", file] },
    { name: "Node Set script", cmd: ["node", "bench/peers/set-dedup.js", file], exact: true },
    {
      name: "bloomfilter package (p = 0.001)",
      cmd: ["node", "bench/peers/bloomfilter-dedup.js", file, String(distinct), "0.001"],
    },
    { name: "wc -l (floor: read)", cmd: ["wc", "-l", file] },
    { name: "md5sum (floor: read + hash)", cmd: ["md5sum", file] },
  ];
  const runs = new Map(tools.map((t) => [t.name, []]));
  const outputs = new Map();
  for (let round = 0; round < ROUNDS; round++) {
    for (const tool of tools) {
      try {
        runs.get(tool.name).push(timed(tool.cmd));
        if (round === 0)
          outputs.set(tool.name, {
            digest: digest(OUT),
            lines: readFileSync(OUT).reduce((n, b) => n + (b === 10 ? 1 : 0), 0),
          });
      } catch (error) {
        runs.get(tool.name).push({ wall: NaN, cpu: NaN, rss: NaN, error: String(error).slice(0, 200) });
      }
    }
  }
  const stat = (name, key) => median(runs.get(name).map((r) => r[key]));
  const awk = tools.find((t) => t.reference).name;
  const wc = tools[7].name;
  const md5sum = tools[8].name;
  const reference = outputs.get(awk);
  const rows = tools.map((t) => {
    const o = outputs.get(t.name);
    const check =
      t.name === wc || t.name === md5sum
        ? ""
        : o === undefined
          ? "failed"
          : t.exact
            ? o.digest === reference.digest
              ? "= awk"
              : "DIFFERS"
            : `${o.lines} lines (awk ${reference.lines})`;
    return [
      t.name,
      stat(t.name, "wall").toFixed(2),
      stat(t.name, "cpu").toFixed(2),
      stat(t.name, "rss").toFixed(0),
      (stat(t.name, "wall") / stat(awk, "wall")).toFixed(3),
      (stat(t.name, "rss") / stat(awk, "rss")).toFixed(3),
      (stat(t.name, "wall") / stat(wc, "wall")).toFixed(1),
      (stat(t.name, "wall") / stat(md5sum, "wall")).toFixed(2),
      check,
    ];
  });
  const size = statSync(file).size;
  const lines = Number(spawnSync("wc", ["-l", file]).stdout.toString().split(" ")[0]);
  return (
    `### ${file}: ${lines.toLocaleString("en-US")} lines, ${distinct.toLocaleString("en-US")} distinct, ${(size / 2 ** 20).toFixed(0)} MiB\n\n` +
    table(
      ["tool", "wall s", "CPU s", "peak RSS MiB", "wall / awk", "RSS / awk", "wall / wc -l", "wall / md5sum", "output"],
      rows,
    ) +
    `\n\nMedians of ${ROUNDS} alternating rounds; output written to a file. Raw runs: ${JSON.stringify(Object.fromEntries([...runs].map(([k, v]) => [k, v.map((r) => r.wall)])))}\n`
  );
}

/** Issue 14's bound: one 200 MB line costs crawlsieve at most 5x what md5sum takes on the same file. */
function longLineSuite() {
  const file = "bench/out/line-200m.txt";
  if (!existsSync(file))
    spawnSync("sh", ["-c", `head -c 200000000 /dev/zero | tr '\\0' a > ${file} && echo >> ${file}`]);
  const tools = [
    { name: "crawlsieve md5 FILE", cmd: ["node", CLI, "md5", file] },
    { name: "crawlsieve dedup FILE", cmd: ["node", CLI, "dedup", file] },
    {
      name: "crawlsieve dedup < FILE (a pipe: sh -c 'cat FILE | ...')",
      cmd: ["sh", "-c", `cat ${file} | node ${CLI} dedup`],
    },
    { name: "md5sum FILE", cmd: ["md5sum", file] },
  ];
  const runs = new Map(tools.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) for (const tool of tools) runs.get(tool.name).push(timed(tool.cmd));
  const stat = (name, key) => median(runs.get(name).map((r) => r[key]));
  const floor = tools[3].name;
  const rows = tools.map((t) => [
    t.name,
    stat(t.name, "wall").toFixed(2),
    stat(t.name, "cpu").toFixed(2),
    stat(t.name, "rss").toFixed(0),
    (stat(t.name, "wall") / stat(floor, "wall")).toFixed(2),
  ]);
  return (
    `### One 200 MB line (${file})\n\n` +
    table(["tool", "wall s", "CPU s", "peak RSS MiB", "wall / md5sum"], rows) +
    `\n\nMedians of ${ROUNDS} alternating rounds.\n`
  );
}

const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim();
console.log(`## ${new Date().toISOString().slice(0, 10)} — bench:cli at ${commit} — ${machine()}\n`);
if (process.env.ONLY !== "long-line") for (const file of files) console.log(suite(file));
if (process.argv.length === 2) console.log(longLineSuite());
