// A child process for test/disk-grow-past-budget.test.ts and bench/disk-grow.js: fills a disk
// seen-set with a memory budget from keys made by number, a batch at a time written as spans of
// one reused buffer, so the child's own JavaScript holds next to nothing and its peak RSS is the
// set's. Writes each key's answer (1 new, 0 seen) to FLAGS; with `progress`, prints after each
// batch how many keys are acknowledged; with `known`, fails when a key below it is reported new
// (it was reported new by an earlier run). Then asks `probe` keys by number (present or not) and
// as many never added, and prints the set's stats and its peak RSS (VmHWM) after the fill and at the end as JSON.
// usage: node budget-fill-child.mjs '{"dir":…,"n":…,"distinct":…,"memory":…,"batch":…,"flags":…}'
// (distinct 0: key i is number i, every key new once; else a seeded mix of i in [0, distinct)).
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { openSeenSet } from "../../build/js/index.node.js";
import { keyNumber, keyOf } from "./key-numbers.mjs";

const { dir, n, distinct, memory, batch = 100_000, flags, probe = 0, progress = false, known = 0 } = JSON.parse(
  process.argv[2],
);

const number = (i) => keyNumber(i, distinct);

const encoder = new TextEncoder();
const data = new Uint8Array(64 * batch);
const spans = new Uint32Array(2 * batch);
/** Writes the keys of numbers number(from) .. number(to - 1) into the reused buffer as spans. */
function fillSpans(from, to, number) {
  let at = 0;
  for (let i = from; i < to; i++) {
    spans[2 * (i - from)] = at;
    at += encoder.encodeInto(keyOf(number(i)), data.subarray(at)).written;
    spans[2 * (i - from) + 1] = at;
  }
  return { data: data.subarray(0, at), spans: spans.subarray(0, 2 * (to - from)) };
}

const set = await openSeenSet({ backend: "disk", path: dir, memory });
const out = openSync(flags, "w");
let worstBatchMs = 0;
const started = performance.now();
const cpuStarted = process.cpuUsage();
for (let i = 0; i < n; i += batch) {
  const to = Math.min(n, i + batch);
  const keys = fillSpans(i, to, number);
  const t = performance.now();
  const got = await set.addSpans(keys.data, keys.spans);
  worstBatchMs = Math.max(worstBatchMs, performance.now() - t);
  writeSync(out, got);
  for (let j = i; j < Math.min(to, known); j++)
    if (got[j - i] === 1) throw new Error(`key ${j}, reported new by an earlier run, was reported new again`);
  if (progress) process.stdout.write(`${to}\n`);
}
const fill = { seconds: (performance.now() - started) / 1000, cpu: process.cpuUsage(cpuStarted) };
const before = set.stats;
const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) * 1024;
const fillPeakRss = hwm();
const present = [];
// In batches of 10,000: a batch of strings is JavaScript's memory, not the set's.
const PROBE_BATCH = 10_000;
for (let i = 0; i < probe; i += PROBE_BATCH) {
  const keys = Array.from({ length: Math.min(PROBE_BATCH, probe - i) }, (_, k) => keyOf(i + k));
  present.push(await set.hasMany(keys));
}
for (const got of present) writeSync(out, got);
const mid = set.stats;
let absentFound = 0;
for (let i = 0; i < probe; i += PROBE_BATCH) {
  const keys = Array.from({ length: Math.min(PROBE_BATCH, probe - i) }, (_, k) => `https://absent.example/q/${i + k}`);
  absentFound += (await set.hasMany(keys)).reduce((a, b) => a + b, 0);
}
const after = set.stats;
closeSync(out);
await set.close();
const peakRss = hwm();
process.stdout.write(`${JSON.stringify({ fill, worstBatchMs, before, mid, after, absentFound, fillPeakRss, peakRss })}\n`);
