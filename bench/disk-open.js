// The open of a disk seen-set past its memory budget, with the filter and block index saved beside
// its log (fingerprints.log.index) against reading its sorted part whole (what every open did
// before, and what one still does when the saved index is missing): the same store, opened in a
// child process each time, alternating, median of 3, wall and CPU seconds and peak RSS. The store
// is DIR, made beforehand (for example by test/support/budget-fill-child.mjs); the saved index is
// taken away before each "read the part" open and saved again by it. With COLD=1 the page cache is
// dropped before each open (root only: /proc/sys/vm/drop_caches), so each reads from the disk.
// usage: [COLD=1] node bench/disk-open.js DIR [MEMORY]   (MEMORY in bytes, default 128 MiB)
import { execFileSync } from "node:child_process";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastJson, medianByWall, timedRun } from "./common.js";

const [dir, memoryArg] = process.argv.slice(2);
if (dir === undefined || !existsSync(join(dir, "fingerprints.log"))) {
  console.error("usage: node bench/disk-open.js DIR [MEMORY]: DIR holds a disk seen-set");
  process.exit(2);
}
const memory = Number(memoryArg ?? 128 << 20);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const index = join(dir, "fingerprints.log.index");
const child = `
  import { openSeenSet } from "${new URL("../build/js/index.node.js", import.meta.url).href}";
  const t = performance.now();
  const set = await openSeenSet({ backend: "disk", path: ${JSON.stringify(dir)}, memory: ${memory} });
  await set.hasMany(["https://absent.example/open"]);
  const seconds = (performance.now() - t) / 1000;
  console.log(JSON.stringify({ seconds, keys: set.stats.keys, scans: set.stats.diskPartScans }));
  await set.close();
`;
const cold = process.env.COLD === "1";
const open = () => {
  if (cold) {
    execFileSync("sync");
    writeFileSync("/proc/sys/vm/drop_caches", "3\n");
  }
  const run = timedRun(["node", "--input-type=module", "-e", child]);
  return { ...run, report: lastJson(run.stdout) };
};

const runs = { scan: [], saved: [] };
for (let round = 0; round < ROUNDS; round++) {
  rmSync(index, { force: true });
  runs.scan.push(open());
  runs.saved.push(open());
}
for (const [name, list] of Object.entries(runs)) {
  const scans = new Set(list.map((r) => r.report.scans));
  if (scans.size !== 1 || [...scans][0] !== (name === "scan" ? 1 : 0))
    throw new Error(`${name}: the opens read the part ${[...scans].join(", ")} times`);
}
const scan = medianByWall(runs.scan);
const saved = medianByWall(runs.saved);
const row = (name, r) =>
  `| ${name} | ${r.report.seconds.toFixed(2)} | ${r.wall.toFixed(2)} | ${r.cpu.toFixed(2)} | ${r.rss.toFixed(0)} |`;
console.log(
  `${saved.report.keys} keys, log ${(statSync(join(dir, "fingerprints.log")).size / 2 ** 20).toFixed(0)} MiB, index ${(statSync(index).size / 2 ** 20).toFixed(1)} MiB, budget ${(memory / 2 ** 20).toFixed(0)} MiB, median of ${ROUNDS}, page cache ${cold ? "dropped before each open" : "warm"}`,
);
console.log("| open | open s | process wall s | CPU s | peak RSS MiB |");
console.log("| --- | --- | --- | --- | --- |");
console.log(row("reads the sorted part (no saved index)", scan));
console.log(row("takes the saved filter and index", saved));
console.log(`ratio (open s): ${(scan.report.seconds / saved.report.seconds).toFixed(1)}x faster`);
