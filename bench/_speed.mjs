import { initSync, BloomFilter, BlockedBloomFilter, md5Many, md5 } from "../build/js/index.node.js";
import * as BF from "bloomfilter"; import crypto from "node:crypto";
initSync();
const N = +process.argv[2] || 1e6;
const keys = Buffer.from(Array.from({length: N}, (_, i) => `https://www.example-${i % 997}.com/articles/${i}/index.html?utm=${i % 13}&page=${i}`).join("\n")).toString("latin1").split("\n");
const t = (name, fn) => { const s = performance.now(); fn(); const ms = performance.now() - s; console.log(name.padEnd(30), (N / ms / 1000).toFixed(2), "M/s"); };
for (let r = 0; r < 2; r++) {
let f = new BloomFilter({items: N, fpRate: 0.01}); t("ours addMany", () => f.addMany(keys)); t("ours hasMany", () => f.hasMany(keys));
f = new BloomFilter({items: N, fpRate: 0.01}); t("ours add single", () => { for (const k of keys) f.add(k); }); t("ours has single", () => { for (const k of keys) f.has(k); });
let b = new BlockedBloomFilter({items: N, fpRate: 0.01}); t("blocked addMany", () => b.addMany(keys)); t("blocked hasMany", () => b.hasMany(keys));
const bf = new BF.BloomFilter(f.bits, f.hashes); t("bloomfilter add", () => { for (const k of keys) bf.add(k); }); t("bloomfilter test", () => { for (const k of keys) bf.test(k); });
t("md5Many", () => md5Many(keys)); t("md5 single", () => { for (const k of keys) md5(k); }); t("crypto.hash", () => { for (const k of keys) crypto.hash("md5", k, "buffer"); });
}
