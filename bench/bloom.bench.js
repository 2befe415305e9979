// Bloom filter add and has on URL strings at p = 0.01, crawlsieve against `bloomfilter` and
// `bloom-filters` in the same process. Peers are given the same m and k where they allow it.
import * as bloomfilter from "bloomfilter";
import bloomFilters from "bloom-filters";
import { BlockedBloomFilter, BloomFilter, initSync } from "../build/js/index.node.js";
import { keysPerSecond, millions, table, urlKeys } from "./common.js";

initSync();

// bloom-filters hashes in pure JavaScript 64-bit emulation and manages about 1e5 keys/s: it is
// timed on a sample of keys against a filter of full size, and its rate reported per key.
const SLOW_PEER_SAMPLE = 200_000;

/** Runs the suite at `n` keys; returns markdown. */
export async function bloomSuite(n) {
  const fpRate = 0.01;
  const keys = urlKeys(n, "in");
  const absent = urlKeys(n, "out");
  const probes = keys.slice(0, n / 2).concat(absent.slice(0, n / 2));
  const sample = keys.slice(0, SLOW_PEER_SAMPLE);
  const sampleProbes = probes.filter((_, i) => i % Math.ceil(n / SLOW_PEER_SAMPLE) === 0);
  // The same keys as lines of one buffer, as the CLI reads them: no JavaScript string per key.
  const pieces = [];
  for (let i = 0; i < n; i += 1_000_000) pieces.push(Buffer.from(keys.slice(i, i + 1_000_000).join("\n") + "\n", "latin1"));
  const text = Buffer.concat(pieces);
  const spans = new Uint32Array(2 * n);
  for (let i = 0, at = 0; i < n; i++) {
    spans[2 * i] = at;
    at += keys[i].length;
    spans[2 * i + 1] = at;
    at++;
  }
  const plan = new BloomFilter({ items: n, fpRate });
  const { bits, hashes } = plan;
  plan.dispose();

  // Every add pass starts from an empty filter of its own (made in beforeEach, not timed).
  let ours, oursSingle, blocked, peer, slow, spanned;
  const adds = await keysPerSecond(
    `add ${n}`,
    { count: n, overrides: { "bloom-filters add": sample.length } },
    [
      {
        name: "crawlsieve addMany",
        fn: () => ours.addMany(keys),
        options: { beforeEach: () => { ours?.dispose(); ours = new BloomFilter({ items: n, fpRate }); } },
      },
      {
        name: "crawlsieve add",
        fn: () => { for (let i = 0; i < keys.length; i++) oursSingle.add(keys[i]); },
        options: { beforeEach: () => { oursSingle?.dispose(); oursSingle = new BloomFilter({ items: n, fpRate }); } },
      },
      {
        name: "crawlsieve blocked addMany",
        fn: () => blocked.addMany(keys),
        options: { beforeEach: () => { blocked?.dispose(); blocked = new BlockedBloomFilter({ items: n, fpRate }); } },
      },
      {
        name: "crawlsieve blocked addSpans",
        fn: () => spanned.addSpans(text, spans),
        options: { beforeEach: () => { spanned?.dispose(); spanned = new BlockedBloomFilter({ items: n, fpRate }); } },
      },
      {
        name: "bloomfilter add",
        fn: () => { for (let i = 0; i < keys.length; i++) peer.add(keys[i]); },
        options: { beforeEach: () => { peer = new bloomfilter.BloomFilter(bits, hashes); } },
      },
      {
        name: "bloom-filters add",
        fn: () => { for (let i = 0; i < sample.length; i++) slow.add(sample[i]); },
        options: { beforeEach: () => { slow = bloomFilters.BloomFilter.create(n, fpRate); } },
      },
    ],
  );
  // The filters now hold all n keys (the last pass of each add task) but bloom-filters, which got
  // the sample: fill it too (untimed), so every has runs on a full filter.
  for (let i = sample.length; i < keys.length; i++) slow.add(keys[i]);
  const hits = { ours: 0, peer: 0 };
  const has = await keysPerSecond(
    `has ${n}`,
    { count: n, overrides: { "bloom-filters has": sampleProbes.length } },
    [
      { name: "crawlsieve hasMany", fn: () => { hits.ours = ours.hasMany(probes).reduce((a, b) => a + b, 0); } },
      { name: "crawlsieve has", fn: () => { let h = 0; for (let i = 0; i < probes.length; i++) h += oursSingle.has(probes[i]) ? 1 : 0; hits.single = h; } },
      { name: "crawlsieve blocked hasMany", fn: () => { hits.blocked = blocked.hasMany(probes).reduce((a, b) => a + b, 0); } },
      { name: "crawlsieve blocked hasSpans", fn: () => spanned.hasSpans(text, spans) },
      { name: "bloomfilter has", fn: () => { let h = 0; for (let i = 0; i < probes.length; i++) h += peer.test(probes[i]) ? 1 : 0; hits.peer = h; } },
      { name: "bloom-filters has", fn: () => { let h = 0; for (let i = 0; i < sampleProbes.length; i++) h += slow.has(sampleProbes[i]) ? 1 : 0; } },
    ],
  );
  const fp = (h) => ((h - n / 2) / (n / 2)).toExponential(2);
  const rows = [];
  for (const [op, r] of [["add", adds], ["has", has]]) {
    const batch = r.get(`crawlsieve ${op}Many`);
    const single = r.get(`crawlsieve ${op}`);
    const blockedRate = r.get(`crawlsieve blocked ${op}Many`);
    const bf = r.get(`bloomfilter ${op}`);
    const bfs = r.get(`bloom-filters ${op}`);
    rows.push([`${op}, batch (${op}Many)`, millions(batch), millions(bf), (batch / bf).toFixed(2), millions(bfs), (batch / bfs).toFixed(0)]);
    rows.push([`${op}, blocked batch`, millions(blockedRate), millions(bf), (blockedRate / bf).toFixed(2), millions(bfs), (blockedRate / bfs).toFixed(0)]);
    rows.push([`${op}, single-key calls`, millions(single), millions(bf), (single / bf).toFixed(2), millions(bfs), (single / bfs).toFixed(0)]);
    const spannedRate = r.get(`crawlsieve blocked ${op}Spans`);
    rows.push([`${op}, blocked, byte spans (CLI path, no strings)`, millions(spannedRate), millions(bf), (spannedRate / bf).toFixed(2), millions(bfs), (spannedRate / bfs).toFixed(0)]);
  }
  const memory = table(
    ["filter", "bits per key", "measured FP rate"],
    [
      [`crawlsieve BloomFilter (m=${bits}, k=${hashes})`, (ours.bits / n).toFixed(3), fp(hits.ours)],
      [`crawlsieve BlockedBloomFilter (k=${blocked.hashes})`, (blocked.bits / n).toFixed(3), fp(hits.blocked)],
      [`bloomfilter (same m, k)`, (peer.buckets.length * 32 / n).toFixed(3), fp(hits.peer)],
      [`bloom-filters (its own sizing)`, (slow.size / n).toFixed(3), "-"],
      ["theory: -ln p / (ln 2)^2", (-Math.log(fpRate) / Math.LN2 ** 2).toFixed(3), String(fpRate)],
    ],
  );
  for (const f of [ours, oursSingle, blocked, spanned]) f.dispose();
  return [
    `### Bloom filter, ${n.toExponential(0)} URL keys (60-100 bytes), p = ${fpRate}`,
    "",
    table(["operation", "crawlsieve M keys/s", "bloomfilter M keys/s", "ratio", "bloom-filters M keys/s", "ratio"], rows),
    "",
    memory,
    "",
  ].join("\n");
}
