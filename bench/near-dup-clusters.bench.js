// What a huge cluster costs `crawlsieve near-dups`: wall time and peak RSS of the built CLI, run as
// a child process under /usr/bin/time, on the collections of bench/gen-clusters.js (6,666 copies of
// one page among 20,000 documents; 200,000 documents of which one in ten is a near copy), for
// groups (--json), --dedup --removed and --pairs (counted, not kept).
// usage: flock /tmp/cs-bench.lock node bench/near-dup-clusters.bench.js [CLI]   (CLI: default build/js/cli/main.js)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../", import.meta.url).pathname;
const cli = process.argv[2] ?? join(root, "build/js/cli/main.js");
const collections = [
  { file: join(root, "bench/out/clusters.jsonl"), args: ["20000", "6666"] },
  { file: join(root, "bench/out/near200k.jsonl"), args: ["200000", "0", "", "0.1"] },
];
const scratch = mkdtempSync(join(tmpdir(), "cs-clusters-bench-"));

/** Runs the CLI with `args` on `file`; returns seconds, peak RSS in MB, exit code and stdout lines. */
function measure(args, file) {
  const out = join(scratch, "out");
  const result = spawnSync(
    "/bin/sh",
    [
      "-c",
      `/usr/bin/time -f "%e %M" "${process.execPath}" "${cli}" near-dups ${args.join(" ")} < "${file}" > "${out}"`,
    ],
    { encoding: "utf8", timeout: 900_000 },
  );
  const [seconds, kb] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  const lines = existsSync(out) ? readFileSync(out).reduce((n, byte) => n + (byte === 10 ? 1 : 0), 0) : 0;
  const error = result.stderr.includes("crawlsieve:")
    ? result.stderr
        .split("\n")
        .find((line) => line.startsWith("crawlsieve:"))
        .slice(0, 80)
    : "";
  return { seconds, mb: Math.round(kb / 1024), code: result.status, lines, error };
}

console.log(
  `near-dups on huge clusters, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, CLI ${cli}`,
);
console.log("| collection | command | exit | output lines | s | peak RSS MB |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const { file, args } of collections) {
  if (!existsSync(file))
    spawnSync(
      process.execPath,
      [join(root, "bench/gen-clusters.js"), args[0], args[1], file, ...(args[3] ? [args[3]] : [])],
      { stdio: "inherit" },
    );
  const modes = [["--json"], ["--dedup", "--removed", join(scratch, "removed.jsonl")], ["--pairs"]];
  for (const mode of modes) {
    const m = measure(mode, file);
    const shown = mode.map((a) => (a.startsWith(scratch) ? "R" : a)).join(" ");
    console.log(
      `| ${file.split("/").at(-1)} | near-dups ${shown} | ${m.code}${m.error ? ` (${m.error})` : ""} | ${m.lines} | ${m.seconds} | ${m.mb} |`,
    );
  }
}
rmSync(scratch, { recursive: true, force: true });
