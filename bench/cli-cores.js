// `dedup` on one core and on two, and Node's start-up, as a user runs them: the command on a file
// with `taskset -c 0` (one core: the reads and writes on Node's thread pool share it with the
// kernel) against no taskset (two cores), alternating, median of ROUNDS, under the bench lock,
// with wall and CPU seconds; and `dedup` of an empty input (what start-up costs each run).
// Usage: node bench/cli-cores.js FILE [--approx]
import { spawnSync } from "node:child_process";

const [file, ...flags] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: node bench/cli-cores.js FILE [--approx]");
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;

/** One timed run: wall and CPU seconds and peak RSS, by /usr/bin/time under the bench lock. */
function timed(prefix, input) {
  const args = [
    "/tmp/cs-bench.lock",
    "/usr/bin/time",
    "-f",
    "TIME %e %U %S %M",
    ...prefix,
    process.execPath,
    CLI,
    "dedup",
    ...flags,
    input,
  ];
  const result = spawnSync("flock", args, {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const m = /TIME (\S+) (\S+) (\S+) (\d+)/.exec(result.stderr);
  if (result.status !== 0 || m === null) throw new Error(`dedup failed: ${result.stderr.slice(-500)}`);
  return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), rssMiB: Number(m[4]) / 1024 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const runs = { "one core (taskset -c 0)": [], "two cores": [], "start-up (empty input)": [] };
for (let r = 0; r < ROUNDS; r++) {
  runs["one core (taskset -c 0)"].push(timed(["taskset", "-c", "0"], file));
  runs["two cores"].push(timed([], file));
  runs["start-up (empty input)"].push(timed([], "/dev/null"));
}
console.log(`| dedup ${flags.join(" ")} ${file} | wall s (median of ${ROUNDS}) | CPU s | peak RSS MiB |`);
console.log("| --- | --- | --- | --- |");
for (const [name, list] of Object.entries(runs))
  console.log(
    `| ${name} | ${median(list.map((x) => x.wall)).toFixed(2)} | ${median(list.map((x) => x.cpu)).toFixed(2)} | ${median(list.map((x) => x.rssMiB)).toFixed(0)} |`,
  );
