import { lastJson, machine, table, timedRun } from "./common.js";

const SIZES = (process.env.SIZES ?? "1e7,1e8,3e8").split(",").map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ROUNDS_UP_TO = Number(process.env.ROUNDS_UP_TO ?? 1e8);
const BEFORE = process.env.BEFORE;
// A JavaScript Set holds at most 2^24 entries in V8: past that it is not run.
const SET_LIMIT = 2 ** 24;

function run(contender, count, build) {
  const result = timedRun(
    [
      process.execPath,
      "--max-old-space-size=16384",
      "bench/peers/seen-scale-run.js",
      contender,
      String(count),
      ...(build ? [build] : []),
    ],
    { maxBuffer: 1 << 24 },
  );
  return { ...result, ...lastJson(result.stdout) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const contenders = [
  ["this build", "crawlsieve", undefined],
  ...(BEFORE ? [[`build in ${BEFORE}`, "crawlsieve", BEFORE]] : []),
  ["JavaScript Set", "set", undefined],
];
const rows = [];
for (const size of SIZES) {
  const rounds = size <= ROUNDS_UP_TO ? ROUNDS : 1;
  const runs = new Map(contenders.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, contender, build] of contenders) {
      if (contender === "set" && size > SET_LIMIT) continue;
      const result = run(contender, size, build);
      runs.get(name).push(result);
      console.error(`${size} ${name} round ${r + 1}: ${JSON.stringify(result)}`);
    }
  }
  for (const [name] of contenders) {
    const results = runs.get(name);
    if (results.length === 0) {
      rows.push([size.toExponential(0), name, "not run: V8 caps a Set at 2^24 = 16,777,216 entries", "", "", "", ""]);
      continue;
    }
    const stopped = results.find((x) => x.stopped);
    const wall = median(results.map((x) => x.wall));
    const cpu = median(results.map((x) => x.cpu));
    const rss = median(results.map((x) => x.rss));
    rows.push([
      size.toExponential(0),
      name,
      stopped
        ? `stops after ${stopped.took.toLocaleString("en")} keys: ${stopped.stopped}`
        : `${wall.toFixed(1)} s (${results.length === 1 ? "1 round" : `median of ${results.length}`})`,
      cpu.toFixed(1),
      `${(rss / 1024).toFixed(2)} GiB`,
      stopped ? "" : String(results[0].bytesPerKey ?? ""),
      stopped ? "" : String(results[0].memories ?? ""),
    ]);
  }
}
console.log(`${machine()}\n`);
console.log(table(["keys", "contender", "wall", "CPU s", "peak RSS", "WebAssembly bytes / key", "memories"], rows));
