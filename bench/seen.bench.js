import { lastJson, machine, table, timedRun } from "./common.js";

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
  const result = timedRun(
    [
      process.execPath,
      "--expose-gc",
      "--max-old-space-size=8192",
      "bench/peers/seen-stream.js",
      contender,
      String(distinct),
      String(repeat),
    ],
    { maxBuffer: 1 << 24 },
  );
  return { ...result, ...lastJson(result.stdout) };
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
