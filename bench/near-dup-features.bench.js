// What the near-duplicate defaults rest on, measured on the corpora of bench/near-dup-corpus.js:
// F1 of MinHashIndex (LSH + estimate) against exact Jaccard of word 3-shingles for sketch sizes
// 128-1024 and shingle sizes 2-4; sketching speed of text as it is (the manuals carry a pilcrow
// or an em dash on nearly every page) against the same text made ASCII, for MinHash and for
// SimHash, beside the plain-JS MinHash; and the memory of `near-dups` over a folder of HTML.
//
//   flock /tmp/cs-bench.lock node bench/near-dup-features.bench.js
import { spawnSync } from "node:child_process";
import { MinHashIndex, initSync, simhashMany, sketchMany } from "../build/js/index.node.js";
import { signature } from "./minhash-baseline.js";
import { CORPORA, loadCorpus } from "./near-dup-corpus.js";
import { machine, table } from "./common.js";

initSync();

function f1(pairs, truth, t) {
  let hits = 0;
  for (const { a, b } of pairs) if ((truth.get(`${a} ${b}`) ?? 0) >= t) hits++;
  const relevant = [...truth.values()].filter((s) => s >= t).length;
  const p = pairs.length ? hits / pairs.length : 1;
  const r = relevant ? hits / relevant : 1;
  return p + r ? (2 * p * r) / (p + r) : 0;
}

/** F1 at 0.9 / 0.8 for each sketch size and shingle size. */
export function sweepSuite(corpora = CORPORA) {
  const rows = [];
  for (const name of corpora) {
    const { docs, truth } = loadCorpus(name);
    const texts = docs.map((doc) => doc.text);
    const ids = texts.map((_, i) => i);
    const cell = (options) =>
      [0.9, 0.8]
        .map((threshold) => {
          const index = new MinHashIndex({ threshold, ...options });
          index.addMany(ids, texts);
          const score = f1(index.pairs(), truth, threshold).toFixed(3);
          index.dispose();
          return score;
        })
        .join(" / ");
    for (const sketchSize of [128, 256, 512, 1024]) rows.push([name, 3, sketchSize, cell({ sketchSize })]);
    for (const shingle of [2, 4]) rows.push([name, shingle, 1024, cell({ shingle, sketchSize: 1024 })]);
  }
  return [
    "#### F1 at J >= 0.9 / >= 0.8 by sketch size and shingle size (truth: word 3-shingles)\n",
    table(["corpus", "shingle", "sketch size", "F1 0.9 / 0.8"], rows),
    "",
  ].join("\n");
}

function rate(fn, texts) {
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  const times = [];
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    fn(texts);
    times.push((performance.now() - start) / 1000);
  }
  return bytes / 1e6 / times.sort((a, b) => a - b)[1];
}

/** MB/s of text as it is and made ASCII. */
export function unicodeSpeedSuite() {
  const { docs } = loadCorpus("python");
  const asIs = docs.map((doc) => doc.text);
  const ascii = asIs.map((text) => text.replace(/[^\x00-\x7f]/g, " "));
  const latin = ascii.map((text) => text.replace(/e/g, "é")); // every e accented: a worst case of non-ASCII letters
  const params = new MinHashIndex({ sketchSize: 1024 }).params;
  const share = asIs.filter((text, i) => text !== ascii[i]).length / asIs.length;
  const rows = [];
  for (const [name, fn] of [
    ["crawlsieve sketchMany (MinHash, 1024)", (texts) => sketchMany(texts, params)],
    ["crawlsieve simhashMany (SimHash)", (texts) => simhashMany(texts)],
    ["plain-JS MinHash 128", (texts) => texts.forEach((text) => signature(text))],
  ]) {
    const a = rate(fn, ascii);
    const b = rate(fn, asIs);
    const c = rate(fn, latin);
    rows.push([name, a.toFixed(1), b.toFixed(1), (b / a).toFixed(2), c.toFixed(1), (c / a).toFixed(2)]);
  }
  return [
    `#### Sketching speed (MB/s of UTF-8, median of 3) on the Python manuals: ${(100 * share).toFixed(0)}% of pages have a non-ASCII character\n`,
    table(["what", "made ASCII", "as it is", "ratio", "every e as é", "ratio"], rows),
    "",
  ].join("\n");
}

/** Peak RSS and time of `near-dups` over the Python manuals' HTML folders. */
export function folderMemorySuite() {
  const cli = new URL("../build/js/cli/main.js", import.meta.url).pathname;
  const deb = new URL("./out/deb/", import.meta.url).pathname;
  const folders = [
    "python3.9-doc_3.9.2-1/usr/share/doc/python3.9/html",
    "python3.11-doc_3.11.2-6+deb12u9/usr/share/doc/python3.11/html",
    "python3.13-doc_3.13.5-2+deb13u5/usr/share/doc/python3.13/html",
  ].map((f) => deb + f);
  const du = spawnSync("du", ["-cb", "--apparent-size", ...folders.map((f) => f)], { encoding: "utf8" })
    .stdout.trim()
    .split("\n")
    .pop()
    .split("\t")[0];
  const rows = [];
  for (const args of [
    ["--include", "*.html"],
    ["--include", "*.html", "--pairs"],
  ]) {
    const result = spawnSync(
      "/usr/bin/time",
      ["-f", "%M %e %U %S", process.execPath, cli, "near-dups", ...args, ...folders],
      { encoding: "utf8", maxBuffer: 1 << 28 },
    );
    const [rss, wall, user, sys] = result.stderr.trim().split("\n").pop().split(" ").map(Number);
    rows.push([
      `near-dups ${args.join(" ")}`,
      (Number(du) / 1e6).toFixed(0),
      (rss / 1024).toFixed(0),
      wall.toFixed(1),
      (user + sys).toFixed(1),
      result.stdout.split("\n").filter(Boolean).length,
    ]);
  }
  return [
    "#### near-dups over the three Python manuals' folders (HTML files read one at a time)\n",
    table(["command", "MB in the folders", "peak RSS MB", "wall s", "CPU s", "lines out"], rows),
    "",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const only = process.argv[2]; // speed, memory or sweep; all without
  console.log(`### Near-duplicate features and speed (${machine()})\n`);
  if (!only || only === "speed") console.log(unicodeSpeedSuite());
  if (!only || only === "memory") console.log(folderMemorySuite());
  if (!only || only === "sweep") console.log(sweepSuite());
}
