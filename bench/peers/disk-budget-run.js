// One contender of bench/disk-budget.js in its own process, over the store in DIR holding the URL
// keys 0 .. N-1 (https://www.site-I%997.example.com/p/I.html). `fill` adds them, a million a
// call (no budget: all in memory). `work` opens the store (with MEMORY bytes, or none: every key in
// memory), asks 1 M absent keys, 1 M present ones (spread over the store), and adds 1 M keys of
// which half are present, then forgets the new half again (untimed) so every run finds the same
// keys. Prints JSON: seconds of each step, keys a second, blocks read a key.
// usage: node bench/peers/disk-budget-run.js fill|work DIR N [MEMORY]
import { openDiskSeenSet } from "../../build/js/index.node.js";

const [what, dir, countText, memoryText] = process.argv.slice(2);
const count = Number(countText);
const url = (i) => `https://www.site-${i % 997}.example.com/p/${i}.html`;
const keys = (from, n, step = 1) => Array.from({ length: n }, (_, i) => url(from + i * step));
const seconds = (t) => +((performance.now() - t) / 1000).toFixed(2);

if (what === "fill") {
  const set = await openDiskSeenSet(dir, { durable: false, items: count });
  const t = performance.now();
  for (let i = 0; i < count; i += 1_000_000) await set.addMany(keys(i, Math.min(1_000_000, count - i)));
  await set.close();
  console.log(JSON.stringify({ fill: seconds(t) }));
} else {
  const memory = memoryText === undefined ? undefined : Number(memoryText);
  let t = performance.now();
  const set = await openDiskSeenSet(dir, { durable: false, memory });
  await set.size();
  const open = seconds(t);
  const blocks = () => set.stats.diskBlocksRead ?? 0;
  const M = 1_000_000;
  // Made a slice at a time, so the process holds one slice of strings: absent keys lie past the
  // store, present ones are every (count / M)-th key, the adds half new and half present.
  const stride = Math.max(1, Math.floor(count / M));
  const absent = (i, n) => keys(count + 10 * M + i, n);
  const present = (i, n) => keys(i * stride, n, stride);
  const mixed = (i, n) => (i < M / 2 ? keys(count + 20 * M + i, n) : present(i - M / 2, n));
  const result = { open };
  for (const [name, slice, call] of [
    ["absent", absent, "hasMany"],
    ["present", present, "hasMany"],
    ["add", mixed, "addMany"],
  ]) {
    const before = blocks();
    t = performance.now();
    for (let i = 0; i < M; i += 100_000) await set[call](slice(i, 100_000));
    const s = seconds(t);
    result[name] = {
      seconds: s,
      keysPerSecond: Math.round(M / s),
      blocksPerKey: +((blocks() - before) / M).toFixed(4),
    };
  }
  for (let i = 0; i < M / 2; i += 100_000) await set.removeMany(mixed(i, 100_000));
  t = performance.now();
  await set.close();
  result.close = seconds(t);
  console.log(JSON.stringify(result));
}
