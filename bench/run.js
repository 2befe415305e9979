// `npm run bench`: every suite, peers in the same process, markdown on stdout (paste into
// bench/RESULTS.md). `node bench/run.js bloom`, `md5`, `url`, `dedup`, `window`, `multidim`, `parallel`, `simhash`, `simhash-eval` or `redis` runs one suite (PAPER_SIZES=5e5,1e6 limits the paper's sizes); BENCH_SIZES=1e6 limits sizes.
import { bloomSuite } from "./bloom.bench.js";
import { md5Suite } from "./md5.bench.js";
import { urlSuite } from "./url.bench.js";
import { paperSuite, throughputSuite } from "./dedup.bench.js";
import { machine } from "./common.js";
import { windowSuite } from "./window.bench.js";
import { multiDimSuite } from "./multidim.bench.js";
import { parallelSuite } from "./parallel.bench.js";
import { nearDupIndexSuite, simhashSpeedSuite } from "./simhash.bench.js";
import { simhashEvalSuite } from "./simhash-eval.bench.js";
import { redisSuite } from "./redis.bench.js";
import { nearDupEvalSuite } from "./near-dup-eval.bench.js";

const only = process.argv[2];
const sizes = (process.env.BENCH_SIZES ?? "1e6,1e7").split(",").map(Number);
console.log(`## ${new Date().toISOString().slice(0, 10)} — ${machine()}\n`);
if (!only || only === "md5") console.log(await md5Suite());
if (!only || only === "url") console.log(await urlSuite());
if (!only || only === "dedup") {
  console.log(await throughputSuite());
  console.log(await paperSuite(process.env.PAPER_SIZES ? process.env.PAPER_SIZES.split(",").map(Number) : undefined));
}
if (!only || only === "bloom") for (const n of sizes) console.log(await bloomSuite(n));
if (!only || only === "window") console.log(await windowSuite());
if (!only || only === "multidim") console.log(await multiDimSuite());
if (!only || only === "parallel") console.log(await parallelSuite());
if (!only || only === "simhash") {
  console.log(await simhashSpeedSuite());
  console.log(await nearDupIndexSuite());
}
if (!only || only === "simhash-eval") console.log(await simhashEvalSuite());
if (!only || only === "redis") console.log(await redisSuite());
// Only when asked: it needs the corpora of bench/near-dup-corpus.sh (Debian packages) first.
if (only === "near-dup-eval") console.log(nearDupEvalSuite());
