// `near-dups --dedup` against exact Jaccard on real mail (the SpamAssassin public corpus, bodies
// as bench/near-dup-corpus.js takes them, no crawlsieve code in the truth): the issue 28 targets,
// at least 99% of removed records naming a kept duplicate_of at exact J >= 0.75 and at most 1% of
// the true pairs at J >= 0.9 keeping both records, for --keep first and --keep longest, and that
// every record lands in exactly one of stdout and the removed file.
// usage: flock /tmp/cs-bench.lock node bench/near-dup-dedup-eval.js [THRESHOLD]   (default 0.8)
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jaccardJoin, mail, shingleSet, words } from "./near-dup-corpus.js";

const root = new URL("../", import.meta.url).pathname;
const cli = join(root, "build/js/cli/main.js");
const out = join(root, "bench/out");
const threshold = process.argv[2] ?? "0.8";
mkdirSync(out, { recursive: true });

const docs = mail().filter((doc) => words(doc.text).length > 0);
const input = join(out, "mail-dedup.jsonl");
const lines = docs.map((doc, i) => JSON.stringify({ id: i, text: doc.text }));
writeFileSync(input, lines.map((line) => `${line}\n`).join(""));
const sets = docs.map((doc) => shingleSet(doc.text));
const exact = (i, j) => {
  const [a, b] = sets[i].size < sets[j].size ? [sets[i], sets[j]] : [sets[j], sets[i]];
  let common = 0;
  for (const s of a) if (b.has(s)) common++;
  return common / (a.size + b.size - common);
};
const truth = [...jaccardJoin(sets, 0.9).keys()].map((key) => key.split(" ").map(Number));
console.log(
  `mail: ${docs.length} documents, ${truth.length} pairs at exact J >= 0.9; near-dups --dedup --threshold ${threshold}, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}`,
);
console.log(
  "| --keep | kept | removed | every record once | duplicate_of kept | removed at exact J >= 0.75 | pairs J >= 0.9 both kept | s |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const keep of ["first", "longest"]) {
  const removedFile = join(out, `mail-dedup-removed-${keep}.jsonl`);
  const started = performance.now();
  const result = spawnSync(
    process.execPath,
    [cli, "near-dups", "--dedup", "--threshold", threshold, "--keep", keep, "--removed", removedFile, input],
    { maxBuffer: 1 << 30 },
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (result.status !== 0) throw new Error(result.stderr.toString());
  const keptLines = result.stdout.toString().split("\n").slice(0, -1);
  const kept = keptLines.map((line) => JSON.parse(line).id);
  const removed = readFileSync(removedFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const seen = new Array(docs.length).fill(0);
  for (const id of kept) seen[id]++;
  for (const r of removed) seen[r.id]++;
  const verbatim =
    keptLines.every((line, i) => line === lines[kept[i]]) && kept.every((id, i) => i === 0 || kept[i - 1] < id);
  const once = seen.every((n) => n === 1) && verbatim;
  const isKept = new Set(kept);
  const ofKept = removed.filter((r) => isKept.has(r.duplicate_of)).length;
  const close = removed.filter((r) => isKept.has(r.duplicate_of) && exact(r.id, r.duplicate_of) >= 0.75).length;
  const both = truth.filter(([i, j]) => isKept.has(i) && isKept.has(j)).length;
  const pct = (n, d) => `${n} / ${d} (${d === 0 ? "-" : ((100 * n) / d).toFixed(2)}%)`;
  console.log(
    `| ${keep} | ${kept.length} | ${removed.length} | ${once ? "yes" : "NO"} | ${pct(ofKept, removed.length)} | ${pct(close, removed.length)} | ${pct(both, truth.length)} | ${seconds} |`,
  );
}
