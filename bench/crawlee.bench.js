// crawlsieve/crawlee against plain Crawlee 3.18.1 (what a Crawlee user has without it).
// 1. Enqueue: a crawl-order stream of link occurrences (default 1e6, 90% of them seen before, in
//    spellings Crawlee's key folds) added page by page (500 links) into a RequestQueue over an
//    in-memory MemoryStorage, plain or through SieveRequestManager with a memory, lmdb or Redis
//    seen-set; as URL strings (addRequestsBatched: crawler.addRequests, context.addRequests) and
//    through Crawlee's enqueueLinks({ urls }) (which builds a Request per link first); one request
//    fetched and marked handled after each page (the sieve commits handled keys). Each run
//    in its own process (bench/peers/crawlee-enqueue.js) under flock /tmp/cs-bench.lock and
//    /usr/bin/time; contenders alternate, ROUNDS rounds, medians. Storage-client calls counted.
// 2. Frontier memory: N distinct URLs in Crawlee's own structures (RequestQueue over in-memory
//    MemoryStorage) against the crawlsieve Bloom backend at p = 1e-6 and the exact one
//    (bench/peers/crawlee-frontier.js), memory held after a full collection. Crawlee is measured
//    up to 2e6 (about 80 us and 1 KB a URL) and extrapolated to 1e7 from the slope between 1e6
//    and 2e6 (its LRU cache is full from 1e6 requests on, so the slope is what each further URL
//    costs); the seen-sets are measured at 1e7.
// usage: node bench/crawlee.bench.js   (npm run build first; redis-server on PATH)
//   ENQUEUE="1e6x1e5" ROUNDS=3 FRONTIER_CRAWLEE="1e5,1e6,2e6" FRONTIER_SIEVE="1e5,1e6,1e7"
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastJson, machine, table, timedRun } from "./common.js";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const [OCC, DISTINCT] = (process.env.ENQUEUE ?? "1e6x1e5").split("x").map(Number);
const FRONTIER_CRAWLEE = (process.env.FRONTIER_CRAWLEE ?? "1e5,1e6,2e6").split(",").filter(Boolean).map(Number);
const FRONTIER_SIEVE = (process.env.FRONTIER_SIEVE ?? "1e5,1e6,1e7").split(",").filter(Boolean).map(Number);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const NAMES = {
  plain: "plain Crawlee 3.18.1",
  memory: "sieve, memory (exact)",
  lmdb: "sieve, lmdb",
  redis: "sieve, Redis (exact)",
};

/** One child run under the benchmark lock; its JSON plus wall, CPU (user + sys) and peak RSS from /usr/bin/time. */
function timed(args) {
  const run = timedRun([process.execPath, ...args], { maxBuffer: 1 << 24 });
  return { ...run, ...lastJson(run.stdout) };
}

async function startRedis() {
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const p = probe.address().port;
      probe.close(() => resolve(p));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), "cs-bench-redis-"));
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  await new Promise((resolve) => child.stdout.on("data", (c) => String(c).includes("Ready to accept") && resolve()));
  const cpu = () => {
    const info = execFileSync("redis-cli", ["-p", String(port), "INFO", "cpu"], { encoding: "utf8" });
    return ["used_cpu_sys", "used_cpu_user"].reduce(
      (s, k) => s + Number(new RegExp(`${k}:([\\d.]+)`).exec(info)[1]),
      0,
    );
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    cpu,
    stop: () => (child.kill(), rmSync(dir, { recursive: true, force: true })),
  };
}

console.log(`# crawlsieve/crawlee vs plain Crawlee 3.18.1 (${machine()})`);
const redis = await startRedis();
try {
  for (const [path, contenders] of [
    ["add", ["plain", "memory", "lmdb", "redis"]],
    ["links", ["plain", "memory"]],
  ]) {
    const runs = new Map(contenders.map((c) => [c, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of contenders) {
        const before = c === "redis" ? redis.cpu() : 0;
        const r = timed(["bench/peers/crawlee-enqueue.js", c, path, String(OCC), String(DISTINCT), redis.url]);
        r.redisCpu = c === "redis" ? redis.cpu() - before : 0;
        // Correctness first: every distinct URL queued once, and (with the sieve) sent to storage once.
        if (r.queued !== r.distinct)
          throw new Error(`${c}/${path}: ${r.queued} requests queued for ${r.distinct} distinct URLs`);
        if (c !== "plain" && r.batchItems + r.addRequestCalls !== r.distinct)
          throw new Error(`${c}/${path}: ${r.batchItems} storage adds for ${r.distinct} keys`);
        if (c !== "plain" && r.committed !== r.handled)
          throw new Error(`${c}/${path}: ${r.committed} keys committed for ${r.handled} handled requests`);
        runs.get(c).push(r);
      }
    }
    const stat = (c, k) => median(runs.get(c).map((r) => r[k]));
    const plain = stat("plain", "seconds");
    const first = runs.get("plain")[0];
    console.log(
      `\n## ${path === "add" ? "addRequestsBatched(URL strings)" : "enqueueLinks({ urls })"}: ${first.occurrences.toExponential(0)} link occurrences, ${first.distinct.toExponential(0)} distinct (${Math.round(100 * (1 - first.distinct / first.occurrences))}% seen before), pages of 500\n`,
    );
    console.log(
      table(
        [
          "contender",
          "stream s",
          "k links/s",
          "vs plain",
          "process wall s",
          "CPU s",
          "redis-server CPU s",
          "peak RSS MiB",
          "storage calls",
          "requests sent to storage",
        ],
        contenders.map((c) => [
          NAMES[c],
          stat(c, "seconds").toFixed(2),
          (first.occurrences / stat(c, "seconds") / 1e3).toFixed(0),
          `${(plain / stat(c, "seconds")).toFixed(2)}x`,
          stat(c, "wall").toFixed(2),
          stat(c, "cpuSeconds").toFixed(2),
          c === "redis" ? stat(c, "redisCpu").toFixed(2) : "",
          stat(c, "rss").toFixed(0),
          String(stat(c, "batchCalls") + stat(c, "addRequestCalls")),
          String(stat(c, "batchItems")),
        ]),
      ),
    );
  }
} finally {
  redis.stop();
}

// Frontier memory.
const frontier = [];
for (const n of FRONTIER_CRAWLEE)
  frontier.push([
    "crawlee",
    n,
    timed(["--expose-gc", "--max-old-space-size=16384", "bench/peers/crawlee-frontier.js", "crawlee", String(n)]),
  ]);
for (const n of FRONTIER_SIEVE)
  for (const c of ["bloom", "exact"])
    frontier.push([c, n, timed(["--expose-gc", "bench/peers/crawlee-frontier.js", c, String(n)])]);
const FRONTIER_NAMES = {
  crawlee: "Crawlee RequestQueue (in-memory storage)",
  bloom: "crawlsieve memory, exact: false, p = 1e-6",
  exact: "crawlsieve memory (exact)",
};
console.log("\n## Frontier memory: N distinct URLs, memory held after a full collection\n");
console.log(
  table(
    ["structure", "URLs", "MiB held", "bytes/URL", "seconds to add", "peak RSS MiB"],
    frontier.map(([c, n, r]) => [
      FRONTIER_NAMES[c],
      n.toExponential(0),
      (r.bytes / 2 ** 20).toFixed(1),
      r.bytesPerUrl.toFixed(1),
      r.seconds.toFixed(2),
      r.rss.toFixed(0),
    ]),
  ),
);
const crawleeAt = (n) => frontier.find(([c, m]) => c === "crawlee" && m === n)?.[2].bytes;
const top = Math.max(...FRONTIER_CRAWLEE);
const below = Math.max(...FRONTIER_CRAWLEE.filter((n) => n < top));
if (crawleeAt(top) !== undefined && crawleeAt(below) !== undefined && top < 1e7) {
  const slope = (crawleeAt(top) - crawleeAt(below)) / (top - below);
  const at1e7 = crawleeAt(top) + (1e7 - top) * slope;
  const bloom1e7 = frontier.find(([c, m]) => c === "bloom" && m === 1e7)?.[2].bytes;
  console.log(
    `\nCrawlee at 1e7 URLs, extrapolated from ${top.toExponential(0)} plus ${(1e7 - top).toExponential(1)} URLs at the ${below.toExponential(0)}-${top.toExponential(0)} slope of ${slope.toFixed(0)} bytes/URL: ` +
      `${(at1e7 / 2 ** 30).toFixed(1)} GiB` +
      (bloom1e7
        ? `, against ${(bloom1e7 / 2 ** 20).toFixed(1)} MiB measured for the Bloom seen-set at 1e7 (${(at1e7 / bloom1e7).toFixed(0)}x).`
        : "."),
  );
}
