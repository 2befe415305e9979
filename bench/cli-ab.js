// Before/after of the command line: each case's `crawlsieve dedup` run by every build given, in
// turn round by round (alternating, so a noisy neighbour hits both), under /usr/bin/time. Prints
// each build's median wall and CPU seconds and peak RSS a case, and the ratio to the first build;
// the builds must print the same bytes. Cases: whole lines in memory and with --store, a field,
// a JSON key and canonical URLs, on inputs made here (random URLs with repeats).
// usage: flock /tmp/cs-bench.lock node bench/cli-ab.js BUILD_DIR... (ROUNDS=3, LINES=2000000)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dirs = process.argv.slice(2);
if (dirs.length === 0) throw new Error("usage: node bench/cli-ab.js BUILD_DIR...");
const rounds = Number(process.env.ROUNDS ?? 3);
const lines = Number(process.env.LINES ?? 2_000_000);
const work = mkdtempSync(join(tmpdir(), "cs-cli-ab-"));

// A reproducible generator (xorshift), URLs of a crawl: hosts, paths, query orders, repeats.
let state = 0x9e3779b9;
const next = () => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 2 ** 32;
};
const urls = [];
const tsv = [];
const json = [];
for (let i = 0; i < lines; i++) {
  const k = Math.floor(next() * lines * 0.4);
  const url = `https://www${k % 97}.example.com/section/${k % 1013}/page-${k}?b=${k % 7}&a=${k % 5}`;
  urls.push(url);
  tsv.push(`${i}\t${url}\t${k % 3}`);
  json.push(`{"id":${i},"page":{"url":"${url}","lang":"en"},"n":${k % 11}}`);
}
const files = { urls: join(work, "urls.txt"), tsv: join(work, "pages.tsv"), json: join(work, "pages.jsonl") };
writeFileSync(files.urls, urls.join("\n") + "\n");
writeFileSync(files.tsv, tsv.join("\n") + "\n");
writeFileSync(files.json, json.join("\n") + "\n");

const cases = [
  ["whole lines", [files.urls]],
  ["whole lines --store", ["--store", "STORE", files.urls]],
  ["--field 2", ["--field", "2", files.tsv]],
  ["--json-key page.url", ["--json-key", "page.url", files.json]],
  ["--canonicalize", ["--canonicalize", files.urls]],
  ["--field 2 --store", ["--field", "2", "--store", "STORE", files.tsv]],
];

const results = {};
for (const [name, args] of cases) {
  results[name] = dirs.map(() => ({ wall: [], cpu: [], rss: [], digest: undefined }));
  for (let round = 0; round < rounds; round++) {
    dirs.forEach((dir, b) => {
      const store = join(work, `store-${b}`);
      rmSync(store, { recursive: true, force: true });
      const out = join(work, "out.txt");
      const argv = args.map((a) => (a === "STORE" ? store : a));
      const run = spawnSync(
        "/usr/bin/time",
        [
          "-f",
          "%e %U %S %M",
          "sh",
          "-c",
          `"$0" "$@" > ${out}`,
          process.execPath,
          join(dir, "build/js/cli/main.js"),
          "dedup",
          ...argv,
        ],
        { encoding: "utf8" },
      );
      if (run.status !== 0) throw new Error(`${dir} ${name}: ${run.stderr}`);
      const [wall, user, sys, rss] = run.stderr.trim().split("\n").pop().split(" ").map(Number);
      const r = results[name][b];
      r.wall.push(wall);
      r.cpu.push(user + sys);
      r.rss.push(rss);
      const digest = createHash("sha1").update(readFileSync(out)).digest("hex");
      if (r.digest !== undefined && r.digest !== digest)
        throw new Error(`${dir} ${name}: output differs between rounds`);
      r.digest = digest;
    });
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `${lines.toLocaleString("en-US")} lines, ${rounds} rounds alternating; median wall s / CPU s / peak RSS MiB; ratio = this build's wall / the first build's`,
);
for (const [name] of cases) {
  const row = results[name];
  const same = row.every((r) => r.digest === row[0].digest);
  const base = median(row[0].wall);
  console.log(
    `${name.padEnd(22)} ${row.map((r, b) => `${dirs[b]}: ${median(r.wall).toFixed(2)} / ${median(r.cpu).toFixed(2)} / ${(median(r.rss) / 1024).toFixed(0)} (x${(median(r.wall) / base).toFixed(3)})`).join("   ")}${same ? "" : "   OUTPUTS DIFFER"}`,
  );
}
rmSync(work, { recursive: true, force: true });
