import { timedRun } from "./common.js";

const [file, ...flags] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: node bench/cli-cores.js FILE [--approx]");
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;

/** One timed run: wall and CPU seconds and peak RSS, by /usr/bin/time under the bench lock. */
function timed(prefix, input) {
  return timedRun([...prefix, process.execPath, CLI, "dedup", ...flags, input], { stdout: "ignore" });
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
    `| ${name} | ${median(list.map((x) => x.wall)).toFixed(2)} | ${median(list.map((x) => x.cpu)).toFixed(2)} | ${median(list.map((x) => x.rss)).toFixed(0)} |`,
  );
