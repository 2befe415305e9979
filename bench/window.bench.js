// Sliding windows at equal memory: TimeWindowFilter (a ring of whole Bloom slices, one per
// granule) against AgePartitionedFilter (k + l one-hash slices that shift every generation).
// Both remember at least the last W inserts and shift every g = W / l inserts, so they promise
// the same expiry bounds [W, W + g]; the time window gets the age-partitioned filter's bytes.
// Measured at full load (the current generation full): FP on a million absent keys, the share
// of keys still reported by age (how exact the expiry is), and seen() throughput.
import { AgePartitionedFilter, initSync, sizing, TimeWindowFilter } from "../build/js/index.node.js";
import { millions, table, urlKeys } from "./common.js";

initSync();

const MINUTE = 60_000;
const count = (flags) => flags.reduce((a, b) => a + b, 0);

/** Streams keys through seenMany, `perTick` at a time, calling tick() after each full generation. */
function stream(filter, keys, generation, tick) {
  const started = performance.now();
  for (let i = 0; i < keys.length; i += generation) {
    filter.seenMany(keys.slice(i, i + generation));
    if (i + generation < keys.length) tick();
  }
  return keys.length / ((performance.now() - started) / 1000);
}

/** Runs the comparison for a window of `window` inserts at FP rate `fpRate`, with l = `slack` (default k). */
export async function windowCase(window, fpRate, slack) {
  const apbf = new AgePartitionedFilter({ items: window, fpRate, slack });
  const { hashes: k, slack: l, generation: g } = apbf.size;
  const slices = l + 1;
  const sliceBits = (apbf.byteLength * 8) / slices;
  const sliceFp = Math.exp((-sliceBits / g) * Math.LN2 * Math.LN2);
  let clock = Date.UTC(2026, 0, 1);
  const twf = new TimeWindowFilter({
    granularity: "minute",
    slices,
    itemsPerSlice: g,
    fpRate: sliceFp,
    now: () => clock,
  });
  // Enough generations that every slice of both has turned over, ending with a full generation.
  const keys = urlKeys((k + l + 6) * g, "window");
  const rateApbf = stream(apbf, keys, g, () => {});
  const rateTwf = stream(twf, keys, g, () => (clock += MINUTE));
  const absent = urlKeys(1_000_000, "absent-window");
  const fp = (filter) => count(filter.hasMany(absent)) / absent.length;
  const twfFormula =
    1 -
    Math.pow(
      1 -
        sizing.bloomFpRate({
          bits: sliceBits,
          hashes: sizing.optimalBloom({ items: g, fpRate: sliceFp }).hashes,
          items: g,
        }),
      slices,
    );
  const rows = [
    ["memory (bytes)", twf.byteLength.toLocaleString("en-US"), apbf.byteLength.toLocaleString("en-US")],
    [
      "slices",
      `${slices} Bloom slices of ${g.toLocaleString("en-US")} keys`,
      `${k + l} one-hash slices (k = ${k}, l = ${l})`,
    ],
    ["FP at full load: formula", twfFormula.toExponential(2), sizing.agePartitionedFpRate(apbf.size).toExponential(2)],
    ["FP at full load: measured (1e6 absent keys)", fp(twf).toExponential(2), fp(apbf).toExponential(2)],
    ["seen() throughput (M keys/s)", millions(rateTwf), millions(rateApbf)],
  ];
  // Share of inserted keys still reported present, by age in generations (g inserts).
  const ages = [
    [0, l],
    [l, l + 1],
    [l + 1, l + 2],
    [l + 2, l + 3],
    [l + 3, l + 5],
    [l + 5, k + l],
    [k + l, k + l + 5],
  ];
  for (const [from, to] of ages) {
    const part = keys.slice(keys.length - to * g, keys.length - from * g);
    const label = `keys aged ${from}-${to} generations (${((from * g) / window).toFixed(2)}-${((to * g) / window).toFixed(2)} W)`;
    rows.push([
      label,
      (count(twf.hasMany(part)) / part.length).toFixed(4),
      (count(apbf.hasMany(part)) / part.length).toFixed(4),
    ]);
  }
  twf.dispose();
  apbf.dispose();
  return [
    `#### W = ${window.toLocaleString("en-US")} inserts, target FP ${fpRate}, expiry step g = W / ${l}\n`,
    `Both promise: every key among the last W inserts is reported; none older than W + g (barring false positives), g = ${g.toLocaleString("en-US")}.\n`,
    table(["", "TimeWindowFilter", "AgePartitionedFilter"], rows),
    "",
  ].join("\n");
}

/** The comparison at a coarse (l = k) and a fine (l = 32) expiry step. */
export async function windowSuite() {
  return [
    "### Sliding windows at equal memory: TimeWindowFilter vs AgePartitionedFilter\n",
    await windowCase(1_000_000, 0.01),
    await windowCase(1_000_000, 0.01, 32),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await windowSuite());
