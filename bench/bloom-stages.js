// Where the time of BloomFilter/BlockedBloomFilter addMany and hasMany goes, per key: each stage of
// the batch path timed on its own around every batch (encode the strings into WASM memory, hash
// them, set or test the bits), beside the whole call and the `bloomfilter` package's loop on the
// same keys. The bound of the ratio to `bloomfilter` is its time over our encode time: what
// crawlsieve would reach if hashing and setting bits cost nothing (both read every string once).
// usage: node bench/bloom-stages.js [keys=1e7] [standard|blocked]   (run it under flock /tmp/cs-bench.lock)
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as bloomfilter from "bloomfilter";
import { BlockedBloomFilter, BloomFilter, initSync } from "../build/js/index.node.js";
import { machine, table, urlKeys } from "./common.js";

initSync();
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const n = Number(process.argv[2] ?? 1e7);
// Which filters: "standard", "blocked" or both (the default).
const only = process.argv[3];
const ROUNDS = 3;
const fpRate = 0.01;
const keys = urlKeys(n, "in");
const probes = keys.slice(0, n / 2).concat(urlKeys(n / 2, "out"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const now = () => process.hrtime.bigint();

/** One pass of `op` over the keys with every stage timed; ns per key by stage. */
function staged(filter, list, op) {
  const store = filter.store;
  const part = store.front;
  const staging = part.staging;
  const { slots, hashes } = store.geometry;
  const blocked = store.geometry.layout === "blocked";
  const k = part.arena.k;
  const t = { encode: 0n, hash: 0n, bits: 0n };
  // A full collection first: the keys just made leave marking work that the next allocating
  // code would otherwise pay (the same gc() precedes every timed pass here and in bloom.bench.js).
  gc();
  for (let at = 0; at < list.length; ) {
    const t0 = now();
    const count = staging.encodeBatch(list, at);
    const t1 = now();
    staging.hashStaged(count);
    const t2 = now();
    const h = staging.hashesPtr;
    if (op === "add")
      blocked
        ? k.blockedSet(part.bitsPtr, slots, hashes, h, count, 0, staging.outPtr)
        : k.bloomSet(part.bitsPtr, slots, hashes, h, count, 0, staging.outPtr);
    else
      blocked
        ? k.blockedTest(part.bitsPtr, slots, hashes, h, count, staging.outPtr)
        : k.bloomTest(part.bitsPtr, slots, hashes, h, count, staging.outPtr);
    const t3 = now();
    t.encode += t1 - t0;
    t.hash += t2 - t1;
    t.bits += t3 - t2;
    at += count;
  }
  const per = (x) => Number(x) / list.length;
  return { encode: per(t.encode), hash: per(t.hash), bits: per(t.bits) };
}

function timed(fn, count) {
  gc();
  const t0 = now();
  fn();
  return Number(now() - t0) / count;
}

const rows = [];
for (const [name, Make] of [
  ["BloomFilter", BloomFilter],
  ["BlockedBloomFilter", BlockedBloomFilter],
]) {
  if (only !== undefined && (only === "blocked") !== (Make === BlockedBloomFilter)) continue;
  const runs = { addStages: [], hasStages: [], add: [], has: [], peerAdd: [], peerHas: [] };
  const plan = new BloomFilter({ items: n, fpRate });
  const { bits, hashes } = plan;
  plan.dispose();
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating: staged pass, whole call, peer, each on a fresh filter.
    let f = new Make({ items: n, fpRate });
    runs.addStages.push(staged(f, keys, "add"));
    runs.hasStages.push(staged(f, probes, "has"));
    f.dispose();
    f = new Make({ items: n, fpRate });
    runs.add.push(timed(() => f.addMany(keys), n));
    runs.has.push(timed(() => f.hasMany(probes), n));
    f.dispose();
    const peer = new bloomfilter.BloomFilter(bits, hashes);
    runs.peerAdd.push(
      timed(() => {
        for (let i = 0; i < n; i++) peer.add(keys[i]);
      }, n),
    );
    runs.peerHas.push(
      timed(() => {
        let h = 0;
        for (let i = 0; i < n; i++) h += peer.test(probes[i]) ? 1 : 0;
        return h;
      }, n),
    );
  }
  for (const op of ["add", "has"]) {
    const st = runs[`${op}Stages`];
    const encode = median(st.map((s) => s.encode));
    const hash = median(st.map((s) => s.hash));
    const bitsNs = median(st.map((s) => s.bits));
    const whole = median(runs[op]);
    const peer = median(runs[op === "add" ? "peerAdd" : "peerHas"]);
    rows.push([
      `${name} ${op}Many`,
      encode.toFixed(1),
      hash.toFixed(1),
      bitsNs.toFixed(1),
      whole.toFixed(1),
      peer.toFixed(1),
      (peer / whole).toFixed(2),
      (peer / encode).toFixed(1),
      (peer / (encode + hash)).toFixed(1),
    ]);
  }
}
console.log(
  `### Stages of addMany / hasMany, ${n.toExponential(0)} URL keys, ns per key (medians of ${ROUNDS}; ${machine()})\n`,
);
console.log(
  table(
    [
      "call",
      "encode",
      "hash (XXH64 pair)",
      "set / test bits",
      "whole call",
      "bloomfilter loop",
      "ratio",
      "bound: bloomfilter / encode",
      "bloomfilter / (encode + hash)",
    ],
    rows,
  ),
);
