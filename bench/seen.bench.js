// The in-memory seen-set against what a Node crawler author would use instead, on one generated
// crawl-order stream of link occurrences (pages of 1,250 links, 90% of them seen before): a
// JavaScript Set of the URLs, and node-crawler's own duplicate check (seenreq: a normaliser, MD5
// hex strings in a Set). Each contender runs in its own process (bench/peers/seen-stream.js),
// contenders alternate, 3 rounds, medians; wall and CPU seconds and peak RSS come from
// /usr/bin/time under flock /tmp/cs-bench.lock; bytes per URL is the memory still held after a
// full collection (heap + WebAssembly memory), grown from before the stream, per distinct URL.
// usage: node bench/seen.bench.js   (sizes: SEEN_SIZES="1e5x10,1e6x10,1e7x2")
import { spawnSync } from "node:child_process";
import { machine, table } from "./common.js";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SIZES = (process.env.SEEN_SIZES ?? "1e5x10,1e6x10,1e7x2").split(",").map((s) => s.split("x").map(Number));
// seenreq takes about 16 us a link: past 1e6 occurrences it is left out (1e7 would take minutes a round).
const CONTENDERS = ["crawlsieve-exact", "crawlsieve-bloom", "set", "seenreq"];
const NAMES = {
  "crawlsieve-exact": "openSeenSet memory (exact)",
  "crawlsieve-bloom": "openSeenSet memory, exact: false (p = 1e-6)",
  set: "JavaScript Set of URLs",
  seenreq: "seenreq (node-crawler skipDuplicates)",
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function run(contender, distinct, repeat) {
  const result = spawnSync(
    "flock",
    [
      "/tmp/cs-bench.lock",
      "/usr/bin/time",
      "-f",
      "TIME %e %U %S %M",
      process.execPath,
      "--expose-gc",
      "--max-old-space-size=8192",
      "bench/peers/seen-stream.js",
      contender,
      String(distinct),
      String(repeat),
    ],
    { encoding: "utf8", maxBuffer: 1 << 24 },
  );
  const line = result.stderr
    .trim()
    .split("\n")
    .find((l) => l.startsWith("TIME "));
  if (result.status !== 0 || line === undefined) throw new Error(`${contender} failed: ${result.stderr.slice(-500)}`);
  const [wall, user, sys, rssKb] = line.slice(5).split(" ").map(Number);
  return { wall, cpu: user + sys, rss: rssKb / 1024, ...JSON.parse(result.stdout) };
}

console.log(`# openSeenSet memory vs Set vs seenreq (${machine()})`);
for (const [distinct, repeat] of SIZES) {
  const occurrences = distinct * repeat;
  const contenders = CONTENDERS.filter((c) => c !== "seenreq" || occurrences <= 1e6);
  const runs = new Map(contenders.map((c) => [c, []]));
  for (let round = 0; round < ROUNDS; round++) for (const c of contenders) runs.get(c).push(run(c, distinct, repeat));
  for (const c of contenders) {
    const fresh = new Set(runs.get(c).map((r) => r.fresh));
    if (c !== "crawlsieve-bloom" && (fresh.size !== 1 || !fresh.has(distinct)))
      throw new Error(`${c} reported ${[...fresh]} new URLs where ${distinct} were`);
  }
  const stat = (c, key) => median(runs.get(c).map((r) => r[key]));
  const setSeconds = stat("set", "seconds");
  console.log(
    `\n## ${distinct.toExponential(0)} distinct URLs, ${occurrences.toExponential(0)} link occurrences (${Math.round(100 * (1 - 1 / repeat))}% seen before)\n`,
  );
  console.log(
    table(
      [
        "contender",
        "stream s",
        "M links/s",
        "vs Set",
        "process wall s",
        "CPU s",
        "peak RSS MiB",
        "bytes/URL held",
        "new reported",
      ],
      contenders.map((c) => [
        NAMES[c],
        stat(c, "seconds").toFixed(2),
        (occurrences / stat(c, "seconds") / 1e6).toFixed(2),
        `${(setSeconds / stat(c, "seconds")).toFixed(2)}x`,
        stat(c, "wall").toFixed(2),
        stat(c, "cpu").toFixed(2),
        stat(c, "rss").toFixed(0),
        stat(c, "bytesPerUrl").toFixed(1),
        String(median(runs.get(c).map((r) => r.fresh))),
      ]),
    ),
  );
}
