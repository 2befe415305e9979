// Before/after of the batch paths in one process: Deduplicator.checkMany, FingerprintSet.addMany and
// md5Many of 1e6 URL strings, each build directory given (a copy of build/ from another commit) loaded
// side by side and run alternately, CPU milliseconds (min and median of R rounds).
// usage: R=11 node bench/batch-ab.js BUILD_DIR...
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
const builds = process.argv.slice(2);
const libs = [];
for (const b of builds) { const m = await import(pathToFileURL(resolve(b, "js/index.node.js")).href); await m.init(); libs.push(m); }
const N = 1_000_000;
const keys = Array.from({ length: N }, (_, i) => `https://example.org/path/${i % 700000}/page-${(i * 7919) % 100003}.html?q=${i}`);
const ops = {
  dedupCheck: (lib) => { const d = new lib.Deduplicator({ items: N, fpRate: 0.01 }); d.checkMany(keys); d.dispose?.(); },
  fpsetAdd: (lib) => { if (!lib.FingerprintSet) return; const s = new lib.FingerprintSet({ items: N }); s.addMany(keys); s.dispose?.(); },
  md5Many: (lib) => { lib.md5Many(keys); },
};
const R = Number(process.env.R ?? 7);
for (const [name, op] of Object.entries(ops)) {
  const t = builds.map(() => []);
  for (let r = 0; r < R; r++) libs.forEach((lib, i) => { const s = process.cpuUsage(); op(lib); const u = process.cpuUsage(s); t[i].push((u.user + u.system) / 1e3); });
  console.log(name, builds.map((b, i) => { const s = [...t[i]].sort((a, b) => a - b); return `${b}: min ${s[0].toFixed(0)} med ${s[R >> 1].toFixed(0)} ms`; }).join(" | "));
}
