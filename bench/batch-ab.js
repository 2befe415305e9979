// Before/after of the batch paths in one process: Deduplicator.checkMany, FingerprintSet.addMany
// and md5Many of 1e6 URL strings, each build given (bench/common.js loadBuilds) run in turn round
// by round; CPU milliseconds, minimum and median of R rounds.
// usage: R=11 node bench/batch-ab.js BUILD_DIR...
import { alternateCpu, loadBuilds } from "./common.js";

const builds = await loadBuilds(process.argv.slice(2));
const N = 1_000_000;
const keys = Array.from(
  { length: N },
  (_, i) => `https://example.org/path/${i % 700000}/page-${(i * 7919) % 100003}.html?q=${i}`,
);
/** Runs `call` on a fresh structure and frees its memory, so rounds do not pile instances up. */
const fresh = (make, call) => (lib) => {
  const structure = make(lib);
  call(structure);
  structure.dispose();
};
const calls = {
  "Deduplicator.checkMany": fresh(
    (lib) => new lib.Deduplicator({ items: N, fpRate: 0.01 }),
    (d) => d.checkMany(keys),
  ),
  "FingerprintSet.addMany": fresh(
    (lib) => new lib.FingerprintSet({ items: N }),
    (s) => s.addMany(keys),
  ),
  md5Many: (lib) => lib.md5Many(keys),
};
const rounds = Number(process.env.R ?? 7);
for (const [name, call] of Object.entries(calls)) {
  const times = alternateCpu(builds, rounds, ({ lib }) => call(lib));
  console.log(
    name,
    builds
      .map(
        ({ dir }, i) => `${dir}: min ${(times[i].min * 1e3).toFixed(0)} med ${(times[i].median * 1e3).toFixed(0)} ms`,
      )
      .join(" | "),
  );
}
