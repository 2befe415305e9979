// Before/after of the line kernel in one process: LineDeduplicator.write over the whole file in
// 1 MiB chunks, each build given (bench/common.js loadBuilds) run in turn round by round. Prints
// the kept bytes (the builds must agree) and each build's minimum and median CPU seconds.
// usage: node bench/line-ab.js FILE OPTIONS_JSON BUILD_DIR...   (ROUNDS=9 by default)
import { readFileSync } from "node:fs";
import { alternateCpu, loadBuilds } from "./common.js";

const [file, optionsJson, ...dirs] = process.argv.slice(2);
if (file === undefined || dirs.length === 0)
  throw new Error("usage: node bench/line-ab.js FILE OPTIONS_JSON BUILD_DIR...");
const options = JSON.parse(optionsJson);
const builds = await loadBuilds(dirs);
const input = readFileSync(file);
const CHUNK = 1 << 20;

const times = alternateCpu(builds, Number(process.env.ROUNDS ?? 9), ({ dir, lib }, round) => {
  const dedup = new lib.LineDeduplicator({ ...options, inputBytes: input.length, chunkBytes: CHUNK });
  let kept = 0;
  const count = (bytes) => (kept += bytes.length);
  for (let at = 0; at < input.length; at += CHUNK) dedup.write(input.subarray(at, at + CHUNK), count);
  dedup.finish(count);
  if (round === 0) console.log(`${dir}: ${kept} bytes kept, ${dedup.stats.unique} unique lines`);
  dedup.dispose();
});
dirs.forEach((dir, i) =>
  console.log(`${dir}: min ${times[i].min.toFixed(3)} s, median ${times[i].median.toFixed(3)} s CPU`),
);
