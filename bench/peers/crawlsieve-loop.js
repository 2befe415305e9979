// crawlsieve's addMany and hasMany alone in their own process, as bench/peers/bloomfilter-loop.js
// runs `bloomfilter`: one pass of addMany over the same n URL keys, then hasMany over the same
// probes, on a fresh filter. Prints {"add": ns a key, "has": ns a key, "hits": n}.
// usage: node bench/peers/crawlsieve-loop.js <keys> <standard|blocked>
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { BlockedBloomFilter, BloomFilter, initSync } from "../../build/js/index.node.js";
import { urlKeys } from "../common.js";

initSync();
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const n = Number(process.argv[2]);
const Filter = process.argv[3] === "blocked" ? BlockedBloomFilter : BloomFilter;
const keys = urlKeys(n, "in");
const probes = keys.slice(0, n / 2).concat(urlKeys(n, "out").slice(0, n / 2));
gc();
const f = new Filter({ items: n, fpRate: 0.01 });
let t0 = process.hrtime.bigint();
f.addMany(keys);
const add = Number(process.hrtime.bigint() - t0) / n;
t0 = process.hrtime.bigint();
const hits = f.hasMany(probes).reduce((a, b) => a + b, 0);
const has = Number(process.hrtime.bigint() - t0) / n;
console.log(JSON.stringify({ add, has, hits }));
