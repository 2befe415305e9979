// `npm run bench:impcb` (issue 49 item 4): IMP-CB (a counting filter in front of an exact store, so
// a key the filter proves new costs no store read) against the plain exact store it fronts, in one
// run, on three tiers:
//  - memory: Deduplicator (counting filter + table) against the same Deduplicator with a one-counter
//    filter that always answers "maybe" (the table alone, same code), FingerprintSet (the plain
//    exact table of openSeenSet) and a JavaScript Set of the keys (what a user would pick);
//  - disk: StoreDeduplicator on LMDB (the only IMP-CB over a disk store today, deprecated) with its
//    filter and with the one-counter filter, against the disk seen-set (openDiskSeenSet) without a
//    budget (every key in memory) and with a 16 MiB budget (its keys stay on disk behind a Bloom
//    filter, cold-keys.ts: diskLookups / diskBlocksRead);
//  - Redis: RedisDeduplicator with `countingFilter` (IMP-CB inside a Lua script) and without (one
//    HINCRBY a key), and a plain Redis set (one SADD a key), on a redis-server started here.
// Workloads: the set already holds STORED old keys; a stream of N keys is checked in batches of
// 4,096, of them 0%, 50% or 90% old keys (repeats: where the filter must say "maybe" and the store
// be read) and the rest new. Keys: generated URLs (bench/common.js urlKeys), and in memory also real
// ones (the sample's Node.js documentation links and the paths of this machine's files under /usr).
// Each run is its own process (bench/peers/impcb-run.js) under flock /tmp/cs-bench.lock; contenders
// alternate within a round, ROUNDS rounds, medians by wall time.
// usage: node bench/impcb.bench.js   (env: ROUNDS=3, IMPCB_TIERS=memory,disk,redis,
//   IMPCB_MEMORY_KEYS=1e6, IMPCB_DISK_KEYS=2e5, IMPCB_DISK_STORED=1e6, IMPCB_REDIS_KEYS=2e5)
import { execSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { machine, startRedis, table } from "./common.js";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TIERS = (process.env.IMPCB_TIERS ?? "memory,disk,redis").split(",");
const MEMORY_KEYS = Number(process.env.IMPCB_MEMORY_KEYS ?? 1e6);
const DISK_KEYS = Number(process.env.IMPCB_DISK_KEYS ?? 2e5);
// At least 16 MiB / 24 bytes (about 700,000) keys, or the disk seen-set holds them all in memory even with its smallest budget.
const DISK_STORED = Number(process.env.IMPCB_DISK_STORED ?? 1e6);
const REDIS_KEYS = Number(process.env.IMPCB_REDIS_KEYS ?? 2e5);
const REPEATS = [0, 0.5, 0.9];
const RUNNER = "bench/peers/impcb-run.js";
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim();

const NAMES = {
  deduplicator: "Deduplicator (IMP-CB: counting filter + table)",
  "deduplicator-plain": "Deduplicator, one-counter filter (the table alone)",
  "fingerprint-set": "FingerprintSet (plain exact table)",
  "js-set": "JavaScript Set<string>",
  "lmdb-impcb": "StoreDeduplicator on LMDB (IMP-CB)",
  "lmdb-plain": "StoreDeduplicator on LMDB, one-counter filter (LMDB alone)",
  "disk-impcb": "openDiskDeduplicator (IMP-CB on the disk engine: counts in references.log)",
  disk: "disk seen-set, no budget (keys in memory)",
  "disk-budget": "disk seen-set, memory 16 MiB (keys on disk behind its filter)",
  "redis-impcb": "RedisDeduplicator + countingFilter (IMP-CB script)",
  "redis-plain": "RedisDeduplicator (one HINCRBY a key)",
  "redis-sadd": "plain Redis set (one SADD a key)",
};

/** One run of a contender in its own process, under the benchmark lock; its JSON line. */
function run(args) {
  const result = spawnSync(
    "flock",
    ["/tmp/cs-bench.lock", process.execPath, "--expose-gc", "--max-old-space-size=8192", RUNNER, ...args.map(String)],
    {
      encoding: "utf8",
      maxBuffer: 1 << 24,
    },
  );
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr.slice(-1500)}`);
  return JSON.parse(result.stdout.trim().split("\n").pop());
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x, digits = 0) =>
  x === undefined || Number.isNaN(x)
    ? ""
    : x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * Runs every contender of a tier over every workload, ROUNDS rounds, the contenders' order rotated
 * each round; returns one table row a (workload, contender), the median run by wall time.
 */
function tier(contenders, workloads, argsOf, plain) {
  const runs = new Map();
  for (let round = 0; round < ROUNDS; round++)
    for (const w of workloads)
      for (let i = 0; i < contenders.length; i++) {
        const c = contenders[(i + round) % contenders.length];
        const key = `${w.label}\t${c}`;
        if (!runs.has(key)) runs.set(key, []);
        const r = run(argsOf(c, w));
        if (r.added !== r.expectedNew)
          throw new Error(`${c} on ${w.label}: ${r.added} new keys, expected ${r.expectedNew}`);
        runs.get(key).push(r);
        process.stderr.write(`${w.label} ${c}: ${r.wall.toFixed(2)} s\n`);
      }
  const rows = [];
  const extra = [];
  for (const w of workloads) {
    const mid = (c) => {
      const list = runs.get(`${w.label}\t${c}`);
      // The run of median wall time for its counts; wall and CPU seconds each their own median.
      const cpu = median(list.map((r) => r.cpu + (r.serverCpu ?? 0)));
      return {
        ...list.find((r) => r.wall === median(list.map((x) => x.wall))),
        walls: list.map((r) => r.wall),
        cpuTotal: cpu,
      };
    };
    const base = mid(plain);
    for (const c of contenders) {
      const m = mid(c);
      rows.push([
        w.label,
        NAMES[c],
        fmt(m.n / m.wall),
        fmt(m.n / m.cpuTotal),
        (base.wall / m.wall).toFixed(2),
        (base.cpuTotal / m.cpuTotal).toFixed(2),
        m.reads === undefined ? "" : (m.reads / m.n).toFixed(3),
        fmt(m.avoided),
        m.filterBits === undefined ? "" : m.filterBits.toFixed(1),
        fmt(m.peakRss),
      ]);
      extra.push({ workload: w.label, contender: c, ...m });
    }
  }
  return { rows, extra };
}

const HEADER = [
  "workload",
  "contender",
  "keys/s (wall)",
  "keys/s (CPU; Redis: client + server)",
  "speed / plain store (wall)",
  "(CPU)",
  "store reads a key",
  "reads avoided",
  "filter bits a key",
  "peak RSS MiB (keys included)",
];

/** Real keys, one a line: the sample's documentation links and file:// URLs of the files under /usr (what this machine has). */
function realKeys(file) {
  const links = spawnSync("sort", ["-u", "examples/nodejs-doc-links.txt"], { encoding: "utf8", maxBuffer: 1 << 28 })
    .stdout.split("\n")
    .filter(Boolean);
  const paths = spawnSync("find", ["/usr", "-type", "f"], { encoding: "utf8", maxBuffer: 1 << 28 })
    .stdout.split("\n")
    .filter(Boolean)
    .map((p) => `file://${encodeURI(p)}`);
  // Interleaved, so old and new halves both hold links and paths; distinct, in a fixed order.
  const all = [...new Set([...links, ...paths].sort())];
  writeFileSync(file, `${all.join("\n")}\n`, "latin1");
  return { count: all.length, links: links.length, paths: paths.length };
}

const generated = (n, repeats) => ({ label: `${Math.round(100 * repeats)}% repeats, ${fmt(n)} URLs`, n, repeats });
const startLoad = loadavg()[0].toFixed(1);
const out = [];
out.push(
  `## IMP-CB against the plain exact store it fronts: \`npm run bench:impcb\` (${new Date().toISOString().slice(0, 10)}, commit ${commit})\n`,
);
out.push(
  `${machine()}; redis-server ${TIERS.includes("redis") ? String(execSync("redis-server --version")).match(/v=(\S+)/)[1] : "(not run)"}. Medians of ${ROUNDS} rounds, the contenders alternating; each run its own process under flock /tmp/cs-bench.lock.\n`,
);
const details = [];

if (TIERS.includes("memory")) {
  mkdirSync("bench/out", { recursive: true });
  const file = "bench/out/impcb-real-keys.txt";
  const real = realKeys(file);
  const workloads = [
    ...REPEATS.map((r) => generated(MEMORY_KEYS, r)),
    { label: `50% repeats, ${fmt(real.count >> 1)} real keys`, n: real.count >> 1, repeats: 0.5, file },
  ];
  const contenders = ["deduplicator", "deduplicator-plain", "fingerprint-set", "js-set"];
  const t = tier(
    contenders,
    workloads,
    (c, w) => ["memory", c, w.repeats, w.n, w.n, ...(w.file ? [w.file] : [])],
    "deduplicator-plain",
  );
  out.push(
    `### In memory: the set holds as many old keys as the stream has keys\n\nReal keys: ${fmt(real.count)} distinct (${fmt(real.links)} distinct links of examples/nodejs-doc-links.txt, ${fmt(real.paths)} file:// URLs of the files under /usr on this machine), sorted; the first half are the old keys, the second the new.\n`,
  );
  out.push(table(HEADER, t.rows), "");
  details.push(...t.extra);
}

if (TIERS.includes("disk")) {
  const root = mkdtempSync(join(process.env.TMP ?? tmpdir(), "cs-impcb-disk-"));
  try {
    const fills = {};
    for (const kind of ["lmdb-impcb", "lmdb-plain", "disk-impcb", "disk"]) {
      const started = performance.now();
      run(["fill", kind, DISK_STORED, join(root, kind), DISK_KEYS]);
      fills[kind] = (performance.now() - started) / 1000;
    }
    const contenders = ["lmdb-impcb", "lmdb-plain", "disk-impcb", "disk", "disk-budget"];
    const dirOf = (c) => join(root, c === "disk-budget" ? "disk" : c);
    const t = tier(
      contenders,
      REPEATS.map((r) => generated(DISK_KEYS, r)),
      (c, w) => ["disk", c, w.repeats, w.n, DISK_STORED, dirOf(c)],
      "lmdb-plain",
    );
    out.push(
      `### On disk: the store holds ${fmt(DISK_STORED)} old keys (filled once, untimed: ${Object.entries(fills)
        .map(([k, s]) => `${k} ${s.toFixed(1)} s`)
        .join(", ")}); each run's new keys are removed again after it\n`,
    );
    out.push(table(HEADER, t.rows), "");
    const disk = t.extra.filter((e) => e.contender.startsWith("disk") || e.contender.startsWith("lmdb"));
    out.push(
      table(
        [
          "workload",
          "contender",
          "open s",
          "store reads (LMDB gets / blocks read)",
          "disk seen-set: diskLookups",
          "diskBlocksRead",
          "wall s of the 3 runs",
        ],
        disk.map((e) => [
          e.workload,
          NAMES[e.contender],
          e.open.toFixed(2),
          fmt(e.reads),
          fmt(e.diskLookups),
          fmt(e.blocksRead),
          e.walls.map((w) => w.toFixed(2)).join(", "),
        ]),
      ),
      "",
    );
    details.push(...t.extra);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (TIERS.includes("redis")) {
  const server = await startRedis("cs-impcb-redis-");
  try {
    const contenders = ["redis-impcb", "redis-plain", "redis-sadd"];
    const t = tier(
      contenders,
      REPEATS.map((r) => generated(REDIS_KEYS, r)),
      (c, w) => ["redis", c, w.repeats, w.n, w.n, server.url],
      "redis-plain",
    );
    out.push(
      `### Redis: the set holds as many old keys as the stream has keys (FLUSHALL and refilled before each run, untimed); one client, batches of 4,096 pipelined\n`,
    );
    out.push(table(HEADER, t.rows), "");
    out.push(
      table(
        [
          "workload",
          "contender",
          "client commands a key",
          "client writes (round trips)",
          "server commands a key (inside scripts too)",
          "server commands",
          "Redis CPU s",
          "client CPU s",
          "wall s",
        ],
        t.extra.map((e) => {
          const total = Object.values(e.server).reduce((s, c) => s + c, 0);
          return [
            e.workload,
            NAMES[e.contender],
            (e.commands / e.n).toFixed(2),
            fmt(e.trips),
            (total / e.n).toFixed(2),
            Object.entries(e.server)
              .map(([c, k]) => `${c} ${fmt(k)}`)
              .join(", "),
            e.serverCpu.toFixed(2),
            e.cpu.toFixed(2),
            e.wall.toFixed(2),
          ];
        }),
      ),
      "",
    );
    details.push(...t.extra);
  } finally {
    server.stop();
  }
}

out.push(
  `Load average (1 min) at the start ${startLoad}, at the end ${loadavg()[0].toFixed(1)}: the 2 cores were shared with other jobs, so read CPU seconds where walls disagree.`,
);
console.log(out.join("\n"));
mkdirSync("bench/out", { recursive: true });
writeFileSync("bench/out/impcb-runs.json", JSON.stringify(details, null, 1));
