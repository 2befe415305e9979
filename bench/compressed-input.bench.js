// Compressed input (issue 45 item 1's targets: .gz at most 1.3x the plain file's time, .zst at
// most 1.2x): `crawlsieve dedup` and `near-dups --dedup` on one generated file given plain, as
// Debian gzip's default output and as zstd's, beside what a user would type instead (the tool's
// own decoder in a pipe into crawlsieve, and into mawk for dedup). Rounds alternate; medians of
// ROUNDS (default 3) by wall, each run under flock with CPU seconds and peak RSS.
// usage: node bench/compressed-input.bench.js   (LINES=4e6 URL lines with repeats; DOCS=1e5 documents)
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { machine, medianByWall, table, timedRun, xorshift32 } from "./common.js";

const LINES = Number(process.env.LINES ?? 4e6);
const DOCS = Number(process.env.DOCS ?? 1e5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CLI = "build/js/cli/main.js";
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"]).stdout.toString().trim();
const dir = mkdtempSync(join(process.env.TMP ?? "/tmp", "cs-bench-compressed-"));

/** `plain` written, and its gzip (-6, the default) and zstd (-3, the default) copies beside it. */
function withCopies(name, text) {
  const plain = join(dir, name);
  writeFileSync(plain, text);
  writeFileSync(`${plain}.gz`, execFileSync("gzip", ["-n", "-c", plain], { maxBuffer: 1 << 30 }));
  writeFileSync(`${plain}.zst`, execFileSync("zstd", ["-q", "-c", plain], { maxBuffer: 1 << 30 }));
  return plain;
}

const next = xorshift32(45);
const urls = [];
for (let i = 0; i < LINES; i++) {
  const page = Math.floor(next() * LINES * 0.6);
  urls.push(`https://www.site-${page % 997}.example.com/page/${page}.html?ref=${page % 13}`);
}
const lines = withCopies("urls.txt", `${urls.join("\n")}\n`);
const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
const docs = [];
for (let i = 0; i < DOCS; i++) {
  const base = Math.floor(next() * DOCS * 0.7);
  const text = Array.from({ length: 120 }, (_, w) => words[(base * 7919 + w * 104729) % words.length]).join(" ");
  docs.push(JSON.stringify({ id: i, text }));
}
const records = withCopies("docs.jsonl", `${docs.join("\n")}\n`);

/** One timed run with its stdout in a file, kept as its MD5 (outputs run to hundreds of MB). */
function timed(argv, options = {}) {
  const path = join(dir, "out");
  const fd = openSync(path, "w");
  try {
    const run = timedRun(argv, { ...options, stdout: fd });
    return { ...run, stdout: createHash("md5").update(readFileSync(path)).digest("hex") };
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

const jobs = {
  "dedup plain": () => timed([process.execPath, CLI, "dedup", lines]),
  "dedup .gz": () => timed([process.execPath, CLI, "dedup", `${lines}.gz`]),
  "dedup .zst": () => timed([process.execPath, CLI, "dedup", `${lines}.zst`]),
  "gzip -dc \\| dedup": () => timed(`gzip -dc ${lines}.gz | ${process.execPath} ${CLI} dedup`, { shell: true }),
  "zstd -dc \\| dedup": () => timed(`zstd -dc ${lines}.zst | ${process.execPath} ${CLI} dedup`, { shell: true }),
  "zstd -dc \\| mawk": () => timed(`zstd -dc ${lines}.zst | LC_ALL=C mawk '!s[$0]++'`, { shell: true }),
  "near-dups plain": () => timed([process.execPath, CLI, "near-dups", "--dedup", records]),
  "near-dups .gz": () => timed([process.execPath, CLI, "near-dups", "--dedup", `${records}.gz`]),
  "near-dups .zst": () => timed([process.execPath, CLI, "near-dups", "--dedup", `${records}.zst`]),
};
const runs = Object.fromEntries(Object.keys(jobs).map((name) => [name, []]));
try {
  for (let r = 0; r < ROUNDS; r++) for (const [name, job] of Object.entries(jobs)) runs[name].push(job());
  const med = Object.fromEntries(Object.keys(jobs).map((name) => [name, medianByWall(runs[name])]));
  const same = (a, b) => med[a].stdout === med[b].stdout;
  if (
    !same("dedup plain", "dedup .gz") ||
    !same("dedup plain", "dedup .zst") ||
    !same("dedup plain", "zstd -dc \\| mawk")
  )
    throw new Error("dedup's output differs between the plain and compressed inputs");
  if (!same("near-dups plain", "near-dups .gz") || !same("near-dups plain", "near-dups .zst"))
    throw new Error("near-dups' output differs between the plain and compressed inputs");
  const mb = (path) => (statSync(path).size / 1e6).toFixed(1);
  const base = (name) => (name.startsWith("near-dups") ? med["near-dups plain"] : med["dedup plain"]);
  const rows = Object.keys(jobs).map((name) => [
    name,
    med[name].wall.toFixed(2),
    med[name].cpu.toFixed(2),
    (med[name].wall / base(name).wall).toFixed(2),
    med[name].rss.toFixed(0),
  ]);
  console.log(`## Compressed input (${machine()}, commit ${commit}, ${new Date().toISOString().slice(0, 10)})\n`);
  console.log(
    `${LINES.toLocaleString("en-US")} URL lines (${mb(lines)} MB; .gz ${mb(`${lines}.gz`)} MB, .zst ${mb(`${lines}.zst`)} MB) and ${DOCS.toLocaleString("en-US")} documents (${mb(records)} MB; .gz ${mb(`${records}.gz`)} MB, .zst ${mb(`${records}.zst`)} MB); median of ${ROUNDS} alternating rounds by wall.\n`,
  );
  console.log(table(["run", "wall s", "CPU s", "wall / plain", "peak RSS MiB"], rows));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
