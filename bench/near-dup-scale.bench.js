// `near-dups --dedup --threshold 0.8 --removed R` against the plain-JS MinHash-LSH peer of
// datasketch's design (bench/minhash-lsh-peer.js, unverified and --verify) at 1e5, 1e6 and 1e7
// documents of bench/gen-clusters.js (150 words, one in ten a near copy; cached in bench/out with
// their planted truth): each tool a child process under /usr/bin/time, the tools alternating,
// stdout counted by wc -l; docs/s, MB/s, CPU s, peak RSS, bytes a document, and the scores of
// bench/near-dup-scale-score.js. Median of REPS runs (default 3 up to 1e5 documents, 1 above). A
// tool whose estimate from the previous size passes 18 GiB or 40 minutes is not run (FORCE=1
// runs it); a run is killed at 40 minutes. Each run takes /tmp/cs-bench.lock unless the caller
// holds it already (flock ... node bench/near-dup-scale.bench.js).
// usage: [CLI=build/js/cli/main.js] [SIZES=1e5,1e6,1e7] [REPS=n] [TOOLS=crawlsieve,crawlsieve-1t,peer,peer-verify] node bench/near-dup-scale.bench.js [SIZES]
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { machine } from "./common.js";
import { readPlanted } from "./planted-truth.js";
import { scoreRuns } from "./near-dup-scale-score.js";

const root = new URL("../", import.meta.url).pathname;
const cli = process.env.CLI ?? join(root, "build/js/cli/main.js");
const sizes = (process.argv[2] ?? process.env.SIZES ?? "1e5,1e6,1e7").split(",").map(Number);
const out = join(root, "bench/out");
mkdirSync(out, { recursive: true });
const scratch = mkdtempSync(join(out, "near-scale-runs-")); // one a run: two runs at once do not share files
const LOCK = "/tmp/cs-bench.lock";
const LIMIT_S = 2400;
const LIMIT_BYTES = 18 * 2 ** 30;

const peer = join(root, "bench/minhash-lsh-peer.js");
const allTools = [
  {
    name: "crawlsieve",
    label: "`near-dups --dedup --threshold 0.8`",
    argv: (r) => [cli, "near-dups", "--dedup", "--threshold", "0.8", "--removed", r],
  },
  {
    name: "crawlsieve-1t",
    label: "the same on one thread (`--threads 1`)",
    argv: (r) => [cli, "near-dups", "--dedup", "--threshold", "0.8", "--threads", "1", "--removed", r],
  },
  {
    name: "peer",
    label: "plain-JS MinHash-LSH, datasketch design (9x13, no verification)",
    argv: (r) => ["--max-old-space-size=18432", peer, "--threshold", "0.8", "--removed", r],
  },
  {
    name: "peer-verify",
    label: "the same + 128-slot estimate check (`--verify`)",
    argv: (r) => ["--max-old-space-size=18432", peer, "--threshold", "0.8", "--verify", "--removed", r],
  },
];
const toolNames = (process.env.TOOLS ?? "crawlsieve,peer,peer-verify").split(",");
const tools = allTools.filter((t) => toolNames.includes(t.name));

// Whether the caller holds the lock (flock(1) around this script): a file of this process is the
// lock file and the lock is taken (an open lock file alone is not a held lock).
const lockHeld =
  readdirSync("/proc/self/fd").some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === LOCK;
    } catch {
      return false;
    }
  }) && spawnSync("flock", ["-n", LOCK, "true"]).status !== 0;
const quote = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;

/** One run of `argv` (node arguments) on `input`: wall, user+sys, peak RSS, exit, kept lines, stderr's last words. */
function run(argv, input, tag) {
  const timeFile = join(scratch, `${tag}.time`);
  const errFile = join(scratch, `${tag}.err`);
  rmSync(timeFile, { force: true });
  const command = `${lockHeld ? "" : `flock ${LOCK} `}timeout ${LIMIT_S} /usr/bin/time -o ${quote(timeFile)} -f "%e %U %S %M" ${quote(process.execPath)} ${argv.map(quote).join(" ")} < ${quote(input)} 2> ${quote(errFile)} | wc -l`;
  const result = spawnSync("/bin/sh", ["-c", command], { encoding: "utf8", maxBuffer: 1 << 20 });
  const timeLines = existsSync(timeFile) ? readFileSync(timeFile, "utf8").trim().split("\n") : [];
  const last = timeLines.at(-1)?.split(" ").map(Number) ?? [];
  const exitLine = timeLines.find((l) => l.startsWith("Command"));
  const code =
    last.length !== 4
      ? "killed (time limit)"
      : exitLine
        ? exitLine
            .replace("Command exited with non-zero status ", "")
            .replace("Command terminated by signal ", "signal ")
        : "0";
  const stderr = existsSync(errFile)
    ? readFileSync(errFile, "utf8")
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("minhash-lsh-peer:"))
    : [];
  return {
    wall: last[0],
    cpu: last[1] + last[2],
    rssKb: last[3],
    code,
    kept: Number(result.stdout.trim()),
    error: code === "0" ? "" : (stderr.find((l) => /crawlsieve:|Error/.test(l)) ?? stderr.at(-1) ?? "").slice(0, 160),
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (x, d = 0) =>
  Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }) : "-";
const pct = (n, d) => `${n} / ${d} (${d === 0 ? "-" : ((100 * n) / d).toFixed(2)}%)`;

const nodeRss = run(["-e", "0"], "/dev/null", "node-e-0").rssKb * 1024;
console.log(
  `near-dups at scale against the peer, ${new Date().toISOString().slice(0, 10)}, ${machine()}; CLI ${cli}; \`node -e 0\` peak RSS ${fmt(nodeRss / 2 ** 20)} MB; lock ${lockHeld ? "held by the caller" : `${LOCK} taken per run`}`,
);
const header =
  "| documents | tool | runs | exit | wall s | CPU s | docs/s | MB/s | peak RSS MB | B/doc (RSS; RSS - node) | kept (truth) | removed: duplicate_of kept at exact J >= 0.75 | pairs J >= 0.9 both kept | removal F1 | crawlsieve / this: docs/s, RSS |";
const rows = [];
console.log(`${header}\n${header.replace(/[^|]+/g, " --- ")}`);
const previous = new Map(); // tool -> { docs, wall, rss } at the last size run
const notes = [];
for (const docs of sizes) {
  const input = join(out, `near-scale-${docs}.jsonl`);
  const plantedFile = join(out, `near-scale-${docs}.planted.txt`);
  if (!existsSync(input) || !existsSync(plantedFile)) {
    const started = performance.now();
    const g = spawnSync(
      process.execPath,
      [join(root, "bench/gen-clusters.js"), String(docs), "0", input, "0.1", plantedFile, "0.8"],
      { stdio: "inherit" },
    );
    if (g.status !== 0) throw new Error(`gen-clusters.js failed at ${docs}`);
    notes.push(`${docs}: generated in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  const bytes = statSync(input).size;
  const reps = Number(process.env.REPS ?? (docs <= 1e5 ? 3 : 1));
  const active = tools.filter((tool) => {
    const p = previous.get(tool.name);
    if (!p || process.env.FORCE === "1") return true;
    if (p.failed) return (notes.push(`${docs}: ${tool.name} not run: it failed at ${fmt(p.docs)} documents`), false);
    const wall = (p.wall * docs) / p.docs;
    const rss = (p.rss * docs) / p.docs;
    if (wall * reps <= LIMIT_S && rss <= LIMIT_BYTES) return true;
    notes.push(
      `${docs}: ${tool.name} not run: from ${p.docs} documents it would take about ${fmt(wall / 60)} min and ${fmt(rss / 2 ** 30, 1)} GiB (limits 40 min, 18 GiB)`,
    );
    return false;
  });
  const results = new Map(active.map((t) => [t.name, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const tool of active) {
      if (results.get(tool.name).some((r) => r.code !== "0")) continue; // failed: not run again
      const tag = `${docs}-${tool.name}-${rep}`;
      const r = run(tool.argv(join(scratch, `${tag}.removed.jsonl`)), input, tag);
      r.removedFile = join(scratch, `${tag}.removed.jsonl`);
      results.get(tool.name).push(r);
      process.stderr.write(
        `${docs} ${tool.name} run ${rep + 1}/${reps}: exit ${r.code}, ${r.wall} s, ${fmt(r.rssKb / 1024)} MB, ${r.kept} kept ${r.error}\n`,
      );
    }
  }
  const truth = readPlanted(plantedFile);
  const scored = active.filter((t) => results.get(t.name).every((r) => r.code === "0"));
  // Runs of one tool give the same output: the first is scored, the others' kept counts compared.
  const scores = await scoreRuns(
    input,
    docs,
    truth,
    scored.map((t) => ({ removedFile: results.get(t.name)[0].removedFile, keptCount: results.get(t.name)[0].kept })),
  );
  const summary = new Map();
  for (const tool of active) {
    const rs = results.get(tool.name);
    const s = scores[scored.indexOf(tool)];
    const ok = rs.every((r) => r.code === "0");
    const wall = median(rs.map((r) => r.wall));
    const rss = median(rs.map((r) => r.rssKb)) * 1024;
    previous.set(tool.name, ok ? { docs, wall, rss } : { docs, failed: true });
    if (ok && rs.some((r) => r.kept !== rs[0].kept))
      notes.push(`${docs}: ${tool.name} kept counts differ between runs: ${rs.map((r) => r.kept).join(", ")}`);
    summary.set(tool.name, { wall, rss, ok });
    const cs = summary.get("crawlsieve");
    const ratio =
      tool.name !== "crawlsieve" && cs?.ok && ok
        ? `${(wall / cs.wall).toFixed(2)}x, ${(cs.rss / rss).toFixed(2)}x`
        : "";
    rows.push([
      fmt(docs),
      tool.label,
      rs.length,
      ok ? "0" : `${rs.at(-1).code}${rs.at(-1).error ? ` (${rs.at(-1).error})` : ""}`,
      `${fmt(wall, 1)}${rs.length > 1 ? ` (${rs.map((r) => fmt(r.wall, 1)).join(", ")})` : ""}`,
      fmt(median(rs.map((r) => r.cpu)), 1),
      ok ? fmt(docs / wall) : "-",
      ok ? fmt(bytes / wall / 1e6, 1) : "-",
      fmt(rss / 2 ** 20),
      ok ? `${fmt(rss / docs)}; ${fmt((rss - nodeRss) / docs)}` : "-",
      s
        ? `${fmt(s.kept)} (${fmt(s.truthKept)}, ${(((s.kept - s.truthKept) / s.truthKept) * 100).toFixed(2)}%)${s.everyRecordOnce ? "" : " NOT every record once"}`
        : "-",
      s
        ? `${pct(s.precision.close, s.precision.of)}${s.precision.sampled ? ` (a sample of ${fmt(s.removed)})` : ""}`
        : "-",
      s ? pct(s.bothKept.n, s.bothKept.of) : "-",
      s ? s.f1.toFixed(4) : "-",
      ratio,
    ]);
  }
  notes.push(
    `${docs}: ${fmt(bytes / 1e6)} MB of JSON lines; truth: ${fmt(truth.removed.size)} planted copies removed by a first-kept dedup at exact J >= 0.8, ${fmt(truth.pairs.filter((p) => p[2] >= 0.9).length)} planted pairs at J >= 0.9; ${reps} run(s) a tool`,
  );
  console.log(rows.map((r) => `| ${r.join(" | ")} |`).join("\n"));
  rows.length = 0;
}
rmSync(scratch, { recursive: true, force: true });
for (const note of notes) console.log(`- ${note}`);
console.log(
  "- Published, not measured here (the projects' own pages: rensa README, github.com/beowolx/rensa, in its earlier version; datatrove MinhashConfig defaults, github.com/huggingface/datatrove; NeMo Curator fuzzy-dedup defaults, github.com/NVIDIA/NeMo-Curator): rensa 512 B/doc (128 x u32), 1.8 M short rows (wikitext) in 44 s (~41 k rows/s), datasketch 1,725 s on the same; datatrove 952 B/doc on disk (14 x 8 bands, 5-grams, no verification), ~0.8-0.9 MB/s per task; NeMo Curator 1,040 B/doc (20 x 13, char 24-grams).",
);
