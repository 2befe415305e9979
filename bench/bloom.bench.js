// Bloom filter add and has on URL strings at p = 0.01, crawlsieve against `bloomfilter` and
// `bloom-filters` in the same process. Peers are given the same m and k where they allow it.
// Contenders alternate: each of ROUNDS rounds runs every contender once (the order rotated from
// round to round), each on a fresh filter after a full garbage collection, so a contender is not
// charged for another's garbage; rates are medians over the rounds, with wall and CPU seconds of
// the median pass. Prints ratios, bytes per key of every filter and the process's peak RSS.
import { spawnSync } from "node:child_process";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as bloomfilter from "bloomfilter";
import bloomFilters from "bloom-filters";
import { BlockedBloomFilter, BloomFilter, initSync } from "../build/js/index.node.js";
import { millions, table, urlKeys } from "./common.js";

initSync();
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

const ROUNDS = Number(process.env.ROUNDS ?? 3);
// bloom-filters hashes in pure JavaScript 64-bit emulation and manages about 1e5 keys/s: it is
// timed on a sample of keys against a filter of full size holding that sample, and its rate
// reported per key (its cost is its hashing, whatever the fill).
const SLOW_PEER_SAMPLE = 200_000;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Times fn once: wall and CPU (user + system) seconds. */
function pass(fn) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / 1e6 };
}

/** Runs the suite at `n` keys; returns markdown. */
export async function bloomSuite(n) {
  const fpRate = 0.01;
  const keys = urlKeys(n, "in");
  const absent = urlKeys(n, "out");
  const probes = keys.slice(0, n / 2).concat(absent.slice(0, n / 2));
  const sample = keys.slice(0, SLOW_PEER_SAMPLE);
  const sampleProbes = probes.filter((_, i) => i % Math.ceil(n / SLOW_PEER_SAMPLE) === 0);
  // The same keys as lines of one buffer, as the CLI reads them: no JavaScript string per key.
  const pieces = [];
  for (let i = 0; i < n; i += 1_000_000)
    pieces.push(Buffer.from(keys.slice(i, i + 1_000_000).join("\n") + "\n", "latin1"));
  const text = Buffer.concat(pieces);
  const spans = new Uint32Array(2 * n);
  for (let i = 0, at = 0; i < n; i++) {
    spans[2 * i] = at;
    at += keys[i].length;
    spans[2 * i + 1] = at;
    at++;
  }
  const plan = new BloomFilter({ items: n, fpRate });
  const { bits, hashes } = plan;
  plan.dispose();

  // Each contender: make a fresh filter (untimed), add every key (timed), then test the probes (timed).
  const sum = (flags) => flags.reduce((a, b) => a + b, 0);
  const contenders = [
    {
      name: "crawlsieve addMany",
      make: () => new BloomFilter({ items: n, fpRate }),
      add: (f) => f.addMany(keys),
      has: (f) => sum(f.hasMany(probes)),
    },
    {
      name: "crawlsieve blocked addMany",
      make: () => new BlockedBloomFilter({ items: n, fpRate }),
      add: (f) => f.addMany(keys),
      has: (f) => sum(f.hasMany(probes)),
    },
    {
      name: "crawlsieve add",
      make: () => new BloomFilter({ items: n, fpRate }),
      add: (f) => {
        for (let i = 0; i < n; i++) f.add(keys[i]);
      },
      has: (f) => {
        let h = 0;
        for (let i = 0; i < n; i++) h += f.has(probes[i]) ? 1 : 0;
        return h;
      },
    },
    {
      name: "crawlsieve blocked addSpans",
      make: () => new BlockedBloomFilter({ items: n, fpRate }),
      add: (f) => f.addSpans(text, spans),
      has: (f) => sum(f.hasSpans(text, spans)),
    },
    {
      name: "bloomfilter",
      make: () => new bloomfilter.BloomFilter(bits, hashes),
      add: (f) => {
        for (let i = 0; i < n; i++) f.add(keys[i]);
      },
      has: (f) => {
        let h = 0;
        for (let i = 0; i < n; i++) h += f.test(probes[i]) ? 1 : 0;
        return h;
      },
    },
    {
      name: "bloom-filters",
      count: { add: sample.length, has: sampleProbes.length },
      make: () => bloomFilters.BloomFilter.create(n, fpRate),
      add: (f) => {
        for (let i = 0; i < sample.length; i++) f.add(sample[i]);
      },
      has: (f) => {
        let h = 0;
        for (let i = 0; i < sampleProbes.length; i++) h += f.has(sampleProbes[i]) ? 1 : 0;
        return h;
      },
    },
  ];
  // The same peer in a process of its own (bench/peers/bloomfilter-loop.js): in this process the
  // other contenders' allocations can move its keys, and its loop was measured up to 2x slower
  // after crawlsieve's batches had run; the lower of the two ratios is the one to quote.
  // crawlsieve's batch calls run that way too, so the two can be compared where neither ran after the other.
  contenders.push({
    name: "bloomfilter, own process",
    own: ["bloomfilter-loop.js", String(n), String(bits), String(hashes)],
  });
  contenders.push({ name: "crawlsieve addMany, own process", own: ["crawlsieve-loop.js", String(n), "standard"] });
  contenders.push({
    name: "crawlsieve blocked addMany, own process",
    own: ["crawlsieve-loop.js", String(n), "blocked"],
  });
  const runs = new Map(contenders.map((c) => [c.name, { add: [], has: [], hits: 0, bytes: 0 }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let j = 0; j < contenders.length; j++) {
      const c = contenders[(j + round) % contenders.length];
      const r = runs.get(c.name);
      if (c.own) {
        const [script, ...args] = c.own;
        const child = spawnSync(
          process.execPath,
          ["--max-old-space-size=12000", new URL(`./peers/${script}`, import.meta.url).pathname, ...args],
          { encoding: "utf8" },
        );
        if (child.status !== 0) throw new Error(`${script} failed: ${child.stderr.slice(-500)}`);
        const { add, has } = JSON.parse(child.stdout);
        r.add.push({ wall: (add * n) / 1e9, cpu: Number.NaN });
        r.has.push({ wall: (has * n) / 1e9, cpu: Number.NaN });
        continue;
      }
      gc();
      const filter = c.make();
      r.add.push(pass(() => c.add(filter)));
      r.has.push(
        pass(() => {
          r.hits = c.has(filter);
        }),
      );
      r.bytes = filter.byteLength ?? (filter.buckets ? filter.buckets.length * 4 : filter.size / 8);
      r.hashes = filter.hashes;
      filter.dispose?.();
    }
  }
  const stat = (name, op) => {
    const c = contenders.find((x) => x.name === name);
    const count = c.count?.[op] ?? n;
    const list = runs.get(name)[op];
    const wall = median(list.map((p) => p.wall));
    return { rate: count / wall, wall, cpu: median(list.map((p) => p.cpu)) };
  };
  const rows = [];
  for (const op of ["add", "has"]) {
    const bf = stat("bloomfilter", op);
    const own = stat("bloomfilter, own process", op);
    const bfs = stat("bloom-filters", op);
    for (const [label, name] of [
      [`${op}, batch (${op}Many)`, "crawlsieve addMany"],
      [`${op}, blocked batch`, "crawlsieve blocked addMany"],
      [`${op}, single-key calls`, "crawlsieve add"],
      [`${op}, blocked, byte spans (CLI path, no strings)`, "crawlsieve blocked addSpans"],
    ]) {
      const s = stat(name, op);
      rows.push([
        label,
        millions(s.rate),
        s.wall.toFixed(2),
        s.cpu.toFixed(2),
        millions(bf.rate),
        bf.wall.toFixed(2),
        bf.cpu.toFixed(2),
        (s.rate / bf.rate).toFixed(2),
        millions(own.rate),
        (s.rate / own.rate).toFixed(2),
        millions(bfs.rate),
        (s.rate / bfs.rate).toFixed(0),
      ]);
    }
  }
  const alone = [];
  for (const op of ["add", "has"]) {
    const own = stat("bloomfilter, own process", op);
    for (const [label, name] of [
      [`${op}, batch (${op}Many)`, "crawlsieve addMany, own process"],
      [`${op}, blocked batch`, "crawlsieve blocked addMany, own process"],
    ]) {
      const s = stat(name, op);
      alone.push([
        label,
        millions(s.rate),
        (1e9 / s.rate).toFixed(0),
        millions(own.rate),
        (1e9 / own.rate).toFixed(0),
        (s.rate / own.rate).toFixed(2),
      ]);
    }
  }
  const fp = (name) => ((runs.get(name).hits - n / 2) / (n / 2)).toExponential(2);
  const perKey = (name) => (runs.get(name).bytes / n).toFixed(3);
  const memory = table(
    ["filter", "bytes per key", "measured FP rate"],
    [
      [`crawlsieve BloomFilter (m=${bits}, k=${hashes})`, perKey("crawlsieve addMany"), fp("crawlsieve addMany")],
      [
        `crawlsieve BlockedBloomFilter (k=${runs.get("crawlsieve blocked addMany").hashes})`,
        perKey("crawlsieve blocked addMany"),
        fp("crawlsieve blocked addMany"),
      ],
      [`bloomfilter (same m, k)`, perKey("bloomfilter"), fp("bloomfilter")],
      [`bloom-filters (its own sizing)`, perKey("bloom-filters"), "-"],
      ["theory: -ln p / (ln 2)^2 / 8", (-Math.log(fpRate) / Math.LN2 ** 2 / 8).toFixed(3), String(fpRate)],
    ],
  );
  return [
    `### Bloom filter, ${n.toExponential(0)} URL keys (60-100 bytes), p = ${fpRate}: medians of ${ROUNDS} alternating rounds`,
    "",
    table(
      [
        "operation",
        "crawlsieve M keys/s",
        "wall s",
        "CPU s",
        "bloomfilter M keys/s",
        "wall s",
        "CPU s",
        "ratio",
        "bloomfilter, own process, M keys/s",
        "ratio",
        "bloom-filters M keys/s",
        "ratio",
      ],
      rows,
    ),
    "",
    "Each in a process of its own (one pass a round, medians of the rounds):",
    "",
    table(["operation", "crawlsieve M keys/s", "ns a key", "bloomfilter M keys/s", "ns a key", "ratio"], alone),
    "",
    memory,
    "",
    `Peak RSS of the process (keys, spans buffer and every contender): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB.`,
    "",
  ].join("\n");
}
