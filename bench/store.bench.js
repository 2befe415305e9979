// `npm run bench:store`: `dedup --store DIR` (the disk seen-set) against `dedup` in memory, on the
// same file in one run, with awk '!s[$0]++' (mawk) as the reference output and, on files of at
// most LMDB_LINES lines, the previous LMDB store (bench/peers/lmdb-store-dedup.js). Three
// alternating rounds, medians; each run timed by /usr/bin/time (wall, user + sys CPU, peak RSS)
// under flock /tmp/cs-bench.lock, output written to a file. "first" runs start from an empty
// store (every distinct line written); "again" runs resume the store the first run left (every
// line seen: what a restarted crawler pays). Also: bytes a key on disk, and the time to open a
// store and count its keys.
// usage: node bench/store.bench.js [FILE...]   (default: bench/out/crawl-stream.txt and
// crawl-fragments.txt when bench/crawl-stream.sh built them, and bench/out/mirror-12m.txt)
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { createHash } from "node:crypto";
import { machine, table, timedRun } from "./common.js";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const LMDB_LINES = Number(process.env.LMDB_LINES ?? 3_000_000);
const OUT = "bench/out/store-out.txt";
const CLI = "build/js/cli/main.js";
const files = process.argv.slice(2);
if (files.length === 0) {
  for (const real of ["bench/out/crawl-stream.txt", "bench/out/crawl-fragments.txt"])
    if (existsSync(real)) files.push(real);
  files.push("bench/out/mirror-12m.txt");
  if (!existsSync("bench/out/mirror-12m.txt"))
    spawnSync(process.execPath, ["bench/gen-mirror.js", "12000000", "bench/out/mirror-12m.txt"], { stdio: "inherit" });
}

/** One timed run: stdout to OUT; wall and CPU seconds, peak RSS in MiB. */
function timed(command) {
  mkdirSync(dirname(OUT), { recursive: true });
  const out = openSync(OUT, "w");
  try {
    return timedRun(command, { stdout: out, env: { LC_ALL: "C" } });
  } finally {
    closeSync(out);
  }
}

const digest = () => createHash("md5").update(readFileSync(OUT)).digest("hex");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dirBytes = (dir, names) =>
  names.reduce((n, name) => n + (existsSync(`${dir}/${name}`) ? statSync(`${dir}/${name}`).size : 0), 0);

function suite(file) {
  const lines = Number(spawnSync("wc", ["-l", file]).stdout.toString().split(" ")[0]);
  const store = "bench/out/store-disk";
  const lmdb = "bench/out/store-lmdb";
  const tools = [
    { name: "awk '!s[$0]++' (mawk)", cmd: ["mawk", "!s[$0]++", file], reference: true },
    { name: "crawlsieve dedup (in memory)", cmd: ["node", CLI, "dedup", file] },
    {
      name: "crawlsieve dedup --store: first run",
      cmd: ["node", CLI, "dedup", "--store", store, file],
      before: () => rmSync(store, { recursive: true, force: true }),
    },
    {
      name: "crawlsieve dedup --store: again (all seen)",
      cmd: ["node", CLI, "dedup", "--store", store, file],
      empty: true,
    },
  ];
  if (lines <= LMDB_LINES) {
    tools.push({
      name: "previous --store (LMDB): first run",
      cmd: ["node", "bench/peers/lmdb-store-dedup.js", lmdb, file],
      before: () => rmSync(lmdb, { recursive: true, force: true }),
    });
    tools.push({
      name: "previous --store (LMDB): again",
      cmd: ["node", "bench/peers/lmdb-store-dedup.js", lmdb, file],
      empty: true,
    });
  }
  const runs = new Map(tools.map((t) => [t.name, []]));
  const checks = new Map();
  for (let round = 0; round < ROUNDS; round++) {
    for (const tool of tools) {
      tool.before?.();
      runs.get(tool.name).push(timed(tool.cmd));
      if (round === 0) checks.set(tool.name, digest());
    }
  }
  const reference = checks.get(tools[0].name);
  const emptyDigest = createHash("md5").update("").digest("hex");
  const stat = (name, key) => median(runs.get(name).map((r) => r[key]));
  const memory = tools[1].name;
  const distinct = Number(spawnSync("sh", ["-c", `LC_ALL=C mawk '!s[$0]++' '${file}' | wc -l`]).stdout.toString());
  const diskBytes = dirBytes(store, ["fingerprints.log"]);
  const lmdbBytes = lines <= LMDB_LINES ? dirBytes(lmdb, ["fingerprints.mdb", "counting-filter.csiv"]) : NaN;
  const rows = tools.map((t) => [
    t.name,
    stat(t.name, "wall").toFixed(2),
    stat(t.name, "cpu").toFixed(2),
    stat(t.name, "rss").toFixed(0),
    (stat(t.name, "wall") / stat(memory, "wall")).toFixed(2),
    t.name.includes("LMDB")
      ? (lmdbBytes / distinct).toFixed(1)
      : t.name.includes("--store")
        ? (diskBytes / distinct).toFixed(1)
        : "",
    t.empty
      ? checks.get(t.name) === emptyDigest
        ? "empty, as it must be"
        : "PRINTED LINES AGAIN"
      : checks.get(t.name) === reference
        ? "= awk"
        : "DIFFERS",
  ]);
  // Opening the store the first runs left: read, checked and loaded into memory.
  const open = timed([
    "node",
    "--input-type=module",
    "-e",
    `import { openSeenSet } from "./build/js/index.node.js"; const t = performance.now(); const s = await openSeenSet({ backend: "disk", path: "${store}" }); const n = await s.size(); console.log(n, performance.now() - t); await s.close();`,
  ]);
  const [keys, openMs] = readFileSync(OUT, "utf8").trim().split(" ").map(Number);
  // The same store reopened by the command line (its keys read into the line table), on an empty input: median of ROUNDS.
  const reopens = Array.from({ length: ROUNDS }, () => timed(["node", CLI, "dedup", "--store", store]));
  const reopen = {
    wall: median(reopens.map((r) => r.wall)),
    cpu: median(reopens.map((r) => r.cpu)),
    rss: median(reopens.map((r) => r.rss)),
  };
  return (
    `### ${file}: ${lines.toLocaleString("en-US")} lines, ${distinct.toLocaleString("en-US")} distinct, ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB\n\n` +
    table(["tool", "wall s", "CPU s", "peak RSS MiB", "wall / in memory", "bytes a key on disk", "output"], rows) +
    `\n\nOpening the disk store of ${keys.toLocaleString("en-US")} keys (read, checked, loaded) took ${openMs.toFixed(0)} ms (process ${open.wall.toFixed(2)} s, peak RSS ${open.rss.toFixed(0)} MiB); \`dedup --store\` on an empty input, the whole process (median of ${ROUNDS}): ${reopen.wall.toFixed(2)} s, ${reopen.cpu.toFixed(2)} CPU s, peak RSS ${reopen.rss.toFixed(0)} MiB (walls ${reopens.map((r) => r.wall.toFixed(2)).join(", ")}).\n` +
    `Medians of ${ROUNDS} alternating rounds. Raw walls: ${JSON.stringify(Object.fromEntries([...runs].map(([k, v]) => [k, v.map((r) => r.wall)])))}\n`
  );
}

const head = `## --store against in memory (${new Date().toISOString().slice(0, 10)}, commit ${spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim()})\n\n${machine()}\n\n`;
console.log(head + files.map(suite).join("\n"));
