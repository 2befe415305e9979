// The `bloomfilter` package alone in its own process (no crawlsieve code loaded): one pass of add
// over the same n URL keys bloom.bench.js uses, then has over the same probes, on a filter of the
// same m and k. Prints {"add": ns a key, "has": ns a key, "hits": n}. bloom.bench.js runs it once a
// round beside the in-process contenders, so the peer is also measured where no other library's
// allocations have moved its keys.
// usage: node bench/peers/bloomfilter-loop.js <keys> <m> <k>
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as bloomfilter from "bloomfilter";
import { urlKeys } from "../common.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const [n, m, k] = process.argv.slice(2).map(Number);
const keys = urlKeys(n, "in");
const probes = keys.slice(0, n / 2).concat(urlKeys(n, "out").slice(0, n / 2));
gc();
const f = new bloomfilter.BloomFilter(m, k);
let t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) f.add(keys[i]);
const add = Number(process.hrtime.bigint() - t0) / n;
t0 = process.hrtime.bigint();
let hits = 0;
for (let i = 0; i < n; i++) hits += f.test(probes[i]) ? 1 : 0;
const has = Number(process.hrtime.bigint() - t0) / n;
console.log(JSON.stringify({ add, has, hits }));
