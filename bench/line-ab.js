// Before/after of the line kernel in one process: each build directory given (a copy of build/ from
// another commit, e.g. `git worktree add /tmp/old REV && (cd /tmp/old && npm run build)`) is loaded
// side by side, and LineDeduplicator.write runs over the whole file in 1 MiB chunks, the builds
// alternating round by round, so a slow minute on this shared machine hits both alike. Prints the
// kept bytes (the builds must agree) and each build's minimum and median CPU seconds.
// usage: node bench/line-ab.js FILE OPTIONS_JSON BUILD_DIR...   (ROUNDS=9 by default)
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [file, optionsJson, ...builds] = process.argv.slice(2);
if (file === undefined || builds.length === 0) throw new Error("usage: node bench/line-ab.js FILE OPTIONS_JSON BUILD_DIR...");
const options = JSON.parse(optionsJson);
const libraries = [];
for (const dir of builds) {
  const lib = await import(pathToFileURL(resolve(dir, "js/index.node.js")).href);
  await lib.init();
  libraries.push(lib);
}
const input = readFileSync(file);
const CHUNK = 1 << 20;
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const seconds = builds.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  libraries.forEach((lib, i) => {
    const dedup = new lib.LineDeduplicator({ ...options, inputBytes: input.length, chunkBytes: CHUNK });
    let kept = 0;
    const count = (bytes) => (kept += bytes.length);
    const start = process.cpuUsage();
    for (let at = 0; at < input.length; at += CHUNK) dedup.write(input.subarray(at, at + CHUNK), count);
    dedup.finish(count);
    const used = process.cpuUsage(start);
    seconds[i].push((used.user + used.system) / 1e6);
    if (round === 0) console.log(`${builds[i]}: ${kept} bytes kept, ${dedup.stats.unique} unique lines`);
    dedup.dispose();
  });
}
builds.forEach((dir, i) => {
  const sorted = [...seconds[i]].sort((a, b) => a - b);
  console.log(`${dir}: min ${sorted[0].toFixed(3)} s, median ${sorted[sorted.length >> 1].toFixed(3)} s CPU`);
});
