// Present keys of a disk seen-set past its budget, for an A/B of two builds on one store: "fill"
// adds keys 0..N-1 (bench/peers/disk-grow-run.js's URLs) to DIR under 16 MiB; "ask" asks 1 M
// random present keys in calls of 100,000 and prints keys a second and the set's stats as JSON.
// usage: ROOT=<a checkout with build/> node bench/peers/disk-present-run.js fill|ask DIR N
const root = process.env.ROOT ?? new URL("../..", import.meta.url).pathname;
const { openSeenSet } = await import(`${root}/build/js/index.node.js`);
const [step, dir, nArg] = process.argv.slice(2);
const n = Number(nArg);
const keyOf = (v) => `https://s${v % 40}.example/p/${v}`;
const set = await openSeenSet({ backend: "disk", path: dir, memory: 16 * 2 ** 20 });
if (step === "fill") {
  for (let i = 0; i < n; i += 100_000)
    await set.addMany(Array.from({ length: Math.min(100_000, n - i) }, (_, k) => keyOf(i + k)));
} else {
  const batches = Array.from({ length: 10 }, () =>
    Array.from({ length: 100_000 }, () => keyOf(Math.floor(Math.random() * n))),
  );
  const t = performance.now();
  let found = 0;
  for (const keys of batches) found += (await set.hasMany(keys)).reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - t) / 1000;
  console.log(JSON.stringify({ found, perSecond: Math.round(1e6 / seconds), stats: set.stats }));
}
await set.close();
