// Runs that build on runs (issue 45 item 4's targets: a re-threshold of a 1e6-document index at
// least 5x faster than the full run; an --against run of 1e5 new documents against a 1e6-document
// index). One collection from bench/gen-clusters.js (150-word pages, one in ten a near copy of an
// earlier one, 1,000 copies of one page) is cut in two: the first DOCS documents are the old dump,
// the next NEW the new one. Each run is beside what a user does without an index: a full rerun at
// the new threshold, and a run over the old and new dumps together. Rounds alternate; medians of
// ROUNDS by wall, under flock with CPU seconds and peak RSS; index bytes a document on disk.
// usage: node bench/near-dup-index.bench.js   (DOCS=1e6, NEW=1e5, ROUNDS=3)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { machine, medianByWall, table, timedRun } from "./common.js";

const DOCS = Number(process.env.DOCS ?? 1e6);
const NEW = Number(process.env.NEW ?? 1e5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CLI = "build/js/cli/main.js";
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim();
const dir = mkdtempSync(join(process.env.TMP ?? "/tmp", "cs-bench-index-"));

const all = join(dir, "all.jsonl");
const made = spawnSync(process.execPath, ["bench/gen-clusters.js", String(DOCS + NEW), "1000", all, "0.1"], {
  stdio: "inherit",
});
if (made.status !== 0) throw new Error("gen-clusters failed");
// Cut by head and tail: a million pages are past the longest string V8 holds.
const old = join(dir, "old.jsonl");
const fresh = join(dir, "new.jsonl");
spawnSync("sh", ["-c", `head -n ${DOCS} '${all}' > '${old}' && tail -n +${DOCS + 1} '${all}' > '${fresh}'`]);
rmSync(all);

/** A timed near-dups run, stdout to a file kept as its MD5 and line count. */
function run(args) {
  const path = join(dir, "out");
  const fd = openSync(path, "w");
  try {
    const result = timedRun([process.execPath, CLI, "near-dups", ...args], { stdout: fd });
    const out = readFileSync(path);
    return {
      ...result,
      stdout: createHash("md5").update(out).digest("hex"),
      lines: out.toString().split("\n").length - 1,
    };
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

const index = join(dir, "index");
const jobs = {
  "full run, --save-index": () => {
    rmSync(index, { recursive: true, force: true });
    return run(["--dedup", old, "--save-index", index]);
  },
  "re-threshold: --index, J 0.9": () => run(["--index", index, "--threshold", "0.9", "--json"]),
  "instead: full run at J 0.9": () => run(["--dedup", old, "--threshold", "0.9"]),
  "new dump: --against the index": () => run(["--dedup", fresh, "--against", index]),
  "instead: old and new dumps in one run": () => run(["--dedup", old, fresh]),
};
const runs = Object.fromEntries(Object.keys(jobs).map((name) => [name, []]));
try {
  for (let r = 0; r < ROUNDS; r++) for (const [name, job] of Object.entries(jobs)) runs[name].push(job());
  const med = Object.fromEntries(Object.keys(jobs).map((name) => [name, medianByWall(runs[name])]));
  const indexBytes = readdirSync(index).reduce((n, f) => n + statSync(join(index, f)).size, 0);
  const rows = Object.keys(jobs).map((name) => [
    name,
    med[name].wall.toFixed(1),
    med[name].cpu.toFixed(1),
    med[name].rss.toFixed(0),
    med[name].lines.toLocaleString("en-US"),
  ]);
  const ratio = (a, b) => (med[b].wall / med[a].wall).toFixed(1);
  console.log(
    `## Saved near-duplicate indexes (${machine()}, commit ${commit}, ${new Date().toISOString().slice(0, 10)})\n`,
  );
  console.log(
    `${DOCS.toLocaleString("en-US")} old and ${NEW.toLocaleString("en-US")} new documents (bench/gen-clusters.js, one in ten a near copy); median of ${ROUNDS} alternating rounds by wall; sketching on the two cores (the default --threads).\n`,
  );
  console.log(table(["run", "wall s", "CPU s", "peak RSS MiB", "lines out"], rows));
  console.log(
    `\nRe-threshold ${ratio("re-threshold: --index, J 0.9", "instead: full run at J 0.9")}x faster than the full run; --against ${ratio("new dump: --against the index", "instead: old and new dumps in one run")}x faster than both dumps in one run. Index on disk: ${(indexBytes / DOCS).toFixed(0)} bytes a document (${(indexBytes / 2 ** 20).toFixed(0)} MiB).`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
