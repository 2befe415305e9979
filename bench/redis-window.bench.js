// The exact recrawl window in Redis (RedisWindowedSeenSet) against what the UKWA crawlers do in
// Redis: one key a URL, `SET <url> 1 NX EX <ttl>` (new when the reply is OK), pipelined in the
// same batches. One local redis-server (loopback, no persistence), the contenders alternating
// round by round, medians of ROUNDS; for each: keys/s over a stream of generated URLs (many
// hosts, varied paths, about 1 repeat in 5), client CPU seconds (this process) and server CPU
// seconds (INFO cpu) beside wall seconds, bytes a key from INFO memory used_memory before and
// after, and the answers of both (and of a JavaScript Set) compared for the whole stream.
// Then a correctness run: 1e6 sightings over 3 simulated weeks (an injected clock), with a TTL
// map, forgets of hosts and prefixes and the lazy sweep at work, answered as a plain JavaScript
// model of the rules (its own prefix matching, nothing of the code under test).
//
//   flock /tmp/cs-bench.lock node bench/redis-window.bench.js   (npm run bench:redis-window)
//   KEYS=2000000 ROUNDS=3 SIGHTINGS=1000000; CHECK_ONLY=1 skips the race, RACE_ONLY=1 the check
import { execSync } from "node:child_process";
import { createClient } from "redis";
import { initSync } from "../build/js/index.node.js";
import { fromNodeRedis, RedisWindowedSeenSet } from "../build/js/redis/index.js";
import { machine, startRedis, table, xorshift32 } from "./common.js";

initSync();
const KEYS = Number(process.env.KEYS ?? 2e6);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SIGHTINGS = Number(process.env.SIGHTINGS ?? 1e6);
const BATCH = 4096;
const TTL_SECONDS = 30 * 86_400;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const WORDS = (
  "news sport world politics tech science health travel food style culture business money " +
  "markets opinion video photos live weather local city region archive blog post story article guide " +
  "review product category shop sale item search tag author user profile forum thread topic page help"
).split(" ");
const TLDS = ["com", "org", "net", "de", "co.uk", "fr", "io", "nl", "it", "es", "com.au", "ca"];
const SUBS = ["www", "www", "www", "blog", "shop", "news", "m", "en", "docs", ""];

/** Host h of a generated web: a subdomain, a word and a number, a TLD. */
function host(h) {
  const sub = SUBS[h % SUBS.length];
  const base = `${WORDS[(h * 7) % WORDS.length]}${WORDS[(h * 13 + 5) % WORDS.length]}${h}.${TLDS[h % TLDS.length]}`;
  return sub === "" ? base : `${sub}.${base}`;
}

/** `count` distinct URLs as a crawl meets them: hosts by a skewed popularity, paths of a few shapes, each carrying its own id. */
function crawlUrls(count, seed = 1) {
  const next = xorshift32(seed);
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    // Skewed: a few hosts hold many pages, most hosts few (about 60,000 hosts in all).
    const h = Math.floor(60_000 * next() ** 3);
    const w = WORDS[Math.floor(next() * WORDS.length)];
    const v = WORDS[Math.floor(next() * WORDS.length)];
    const id = i.toString(36);
    const scheme = next() < 0.9 ? "https" : "http";
    let path;
    switch (Math.floor(next() * 7)) {
      case 0:
        path = `/${w}/2026/${1 + Math.floor(next() * 12)}/${v}-${w}-${id}.html`;
        break;
      case 1:
        path = `/${w}/${id}?ref=${v}&page=${Math.floor(next() * 9)}`;
        break;
      case 2:
        path = `/p/${id}`;
        break;
      case 3:
        path = `/wiki/${v[0].toUpperCase()}${v.slice(1)}_${id}`;
        break;
      case 4:
        path = `/search?q=${w}+${v}&start=${id}`;
        break;
      case 5:
        path = `/${w}/${v}/${id}/comments?sort=new&utm_source=${w}`;
        break;
      default:
        path = `/${w}-${v}-${id}/`;
    }
    out[i] = `${scheme}://${host(h)}${path}`;
  }
  return out;
}

/** The stream both contenders get: every key once, in order, and about one sighting in 5 a repeat (mostly recent). */
function withRepeats(keys, seed = 2) {
  const next = xorshift32(seed);
  const stream = [];
  for (let i = 0; i < keys.length; i++) {
    stream.push(keys[i]);
    if (next() < 0.25) {
      const back = next() < 0.7 ? Math.floor(next() * Math.min(i + 1, 5000)) : Math.floor(next() * (i + 1));
      stream.push(keys[i - back]);
    }
  }
  return stream;
}

async function info(redis, section, field) {
  return Number(new RegExp(`^${field}:([\\d.]+)`, "m").exec(String(await redis.send(["INFO", section])))[1]);
}

/** One pass of a contender over the stream on an empty Redis: its answers, seconds and bytes. */
async function pass(redis, contender, stream, distinct) {
  await redis.send(["FLUSHALL"]);
  const before = await info(redis, "memory", "used_memory");
  const serverCpu0 = (await info(redis, "cpu", "used_cpu_user")) + (await info(redis, "cpu", "used_cpu_sys"));
  const answers = new Uint8Array(stream.length);
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const add = await contender.open(redis, client);
  for (let at = 0; at < stream.length; at += BATCH) answers.set(await add(stream.slice(at, at + BATCH)), at);
  const wall = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const serverCpu =
    (await info(redis, "cpu", "used_cpu_user")) + (await info(redis, "cpu", "used_cpu_sys")) - serverCpu0;
  const after = await info(redis, "memory", "used_memory");
  const extra = contender.after === undefined ? {} : await contender.after(redis);
  return {
    answers,
    wall,
    cpu: (cpu.user + cpu.system) / 1e6,
    serverCpu,
    bytesPerKey: (after - before) / distinct,
    ...extra,
  };
}

const CONTENDERS = [
  {
    name: "crawlsieve RedisWindowedSeenSet (ttl 30d)",
    async open(redis) {
      const set = await RedisWindowedSeenSet.open(redis, { name: "bench-window", ttl: "30d", items: KEYS });
      this.set = set;
      return (keys) => set.addMany(keys);
    },
    async after(redis) {
      // How many shards left the compact encoding (past 128 fields).
      const shards = await this.set.shardCount();
      const keys = Array.from({ length: shards }, (_, s) => `cs:{bench-window}:ws:${s.toString(36)}`);
      const encodings = await Promise.all(keys.map((key) => redis.send(["OBJECT", "ENCODING", key])));
      return { shards, notListpack: encodings.filter((e) => e !== null && String(e) !== "listpack").length };
    },
  },
  {
    name: `UKWA way: SET <url> 1 NX EX ${TTL_SECONDS}, pipelined`,
    async open(_, client) {
      // node-redis's own sendCommand, without crawlsieve's per-command deadline: its cheapest path.
      const ttl = String(TTL_SECONDS);
      return async (keys) => {
        const replies = await Promise.all(keys.map((k) => client.sendCommand(["SET", k, "1", "NX", "EX", ttl])));
        return Uint8Array.from(replies, (r) => (r === null ? 0 : 1));
      };
    },
  },
];

async function race(redis) {
  const keys = crawlUrls(KEYS);
  const stream = withRepeats(keys);
  let bytes = 0;
  for (const k of keys) bytes += k.length;
  const seen = new Set();
  const truth = Uint8Array.from(stream, (k) => (seen.has(k) ? 0 : (seen.add(k), 1)));
  seen.clear();
  const runs = CONTENDERS.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, the order rotated each round, so a slow minute on a shared machine hits both.
    for (let j = 0; j < CONTENDERS.length; j++) {
      const c = (round + j) % CONTENDERS.length;
      const result = await pass(redis, CONTENDERS[c], stream, keys.length);
      let differ = 0;
      for (let i = 0; i < truth.length; i++) if (result.answers[i] !== truth[i]) differ++;
      result.differ = differ;
      delete result.answers;
      runs[c].push(result);
      console.error(
        `round ${round} ${CONTENDERS[c].name}: ${result.wall.toFixed(2)} s, ${result.bytesPerKey.toFixed(1)} B/key, ${differ} answers off`,
      );
    }
  }
  await redis.send(["FLUSHALL"]);
  const rows = CONTENDERS.map((c, i) => {
    const r = runs[i];
    const wall = median(r.map((x) => x.wall));
    return [
      c.name,
      Math.round(stream.length / wall).toLocaleString("en-US"),
      wall.toFixed(2),
      median(r.map((x) => x.cpu)).toFixed(2),
      median(r.map((x) => x.serverCpu)).toFixed(2),
      median(r.map((x) => x.bytesPerKey)).toFixed(1),
      String(Math.max(...r.map((x) => x.differ))),
    ];
  });
  const ours = median(runs[0].map((x) => x.bytesPerKey));
  const theirs = median(runs[1].map((x) => x.bytesPerKey));
  const news = truth.reduce((a, b) => a + b, 0);
  const last = runs[0][runs[0].length - 1];
  return [
    `${keys.length.toLocaleString("en-US")} distinct URLs (mean ${(bytes / keys.length).toFixed(0)} bytes, about 60,000 hosts), a stream of ${stream.length.toLocaleString("en-US")} sightings (${(stream.length - news).toLocaleString("en-US")} repeats), batches of ${BATCH}; medians of ${ROUNDS} alternating rounds; bytes a key = used_memory after - before, over the distinct keys.`,
    "",
    table(
      ["method", "sightings/s", "wall s", "client CPU s", "server CPU s", "bytes a key", "answers off (of a Set's)"],
      rows,
    ),
    "",
    `Bytes a key: ${(ours / theirs).toFixed(3)} of SET NX EX's (target: at most 0.5). Shards: ${last.shards.toLocaleString("en-US")}, of which ${last.notListpack} left the listpack encoding.`,
  ].join("\n");
}

// The correctness run's TTL map, and its model: patterns over the generated web's hosts.
const RULES = [
  ["news.worldpolitics2.fr", 6 * 3600],
  ["techscience3.nl", 86_400],
  ["www.techscience3.nl", 7 * 86_400],
  ["https://www.newssport0.com/archive/", 5 * 86_400],
  ["https://www.newssport0.com/", 2 * 86_400],
];
const DEFAULT_TTL = 3 * 86_400;

/** The window rules written out, as the tests' model: Map key -> second, tombstones pattern -> second. */
class Model {
  times = new Map();
  forgotten = new Map();
  constructor(refresh) {
    this.refresh = refresh;
  }
  static matches(key, pattern) {
    if (pattern.includes("://")) return key.startsWith(pattern);
    const h = /^https?:\/\/([^/?#]+)/.exec(key)?.[1];
    return h !== undefined && (h === pattern || h.endsWith(`.${pattern}`));
  }
  ttl(key) {
    const matching = RULES.filter(([p]) => Model.matches(key, p));
    const prefixes = matching.filter(([p]) => p.includes("://"));
    const pick = (prefixes.length > 0 ? prefixes : matching).sort((a, b) => b[0].length - a[0].length)[0];
    return pick === undefined ? DEFAULT_TTL : pick[1];
  }
  cutoff(key, now) {
    let f = 0;
    for (const [p, t] of this.forgotten) if (Model.matches(key, p)) f = Math.max(f, t);
    return Math.max(now - this.ttl(key) + 1, f > 0 ? f + 1 : 0);
  }
  held(key, now) {
    const t = this.times.get(key);
    return t !== undefined && t >= this.cutoff(key, now);
  }
  add(key, now) {
    if (this.held(key, now)) {
      if (this.refresh) this.times.set(key, Math.max(this.times.get(key), now));
      return 0;
    }
    this.times.set(key, Math.max(now, this.cutoff(key, now)));
    return 1;
  }
}

/** 1e6 sightings over 3 weeks against the model, for one semantics: mismatches and what the sweep did. */
async function check(redis, semantics) {
  await redis.send(["FLUSHALL"]);
  const pool = crawlUrls(Math.floor(SIGHTINGS / 4), 7);
  // Pages of the hosts the rules name, so the rules and forgets meet keys.
  for (let i = 0; i < pool.length; i += 9) {
    const h = ["news.worldpolitics2.fr", "www.techscience3.nl", "a.techscience3.nl", "www.newssport0.com"][(i / 9) % 4];
    pool[i] = `https://${h}/${i % 2 ? "archive/" : ""}${WORDS[i % WORDS.length]}/${i}`;
  }
  const forgets = [
    "techscience3.nl",
    "www.newssport0.com",
    "https://www.newssport0.com/archive/",
    "news.worldpolitics2.fr",
  ];
  const next = xorshift32(11);
  const start = Date.UTC(2026, 10, 11);
  let clock = start;
  const map = Object.fromEntries(RULES.map(([p, s]) => [p, `${s}s`]));
  const set = await RedisWindowedSeenSet.open(redis, {
    name: `check-${semantics}`,
    ttl: `${DEFAULT_TTL}s`,
    ttlMap: map,
    semantics,
    items: 150_000,
    now: () => clock,
  });
  const model = new Model(semantics === "refresh");
  const batch = 1000;
  const batches = SIGHTINGS / batch;
  const step = (21 * 86_400_000) / batches;
  let mismatches = 0;
  let news = 0;
  let forgot = 0;
  for (let b = 0; b < batches; b++) {
    clock += Math.floor(step * 2 * next());
    const now = Math.floor(clock / 1000);
    // Recent pages more often: a crawl revisits what it found lately.
    const base = Math.floor((b / batches) * pool.length * 0.8);
    const keys = Array.from(
      { length: batch },
      () => pool[(base + Math.floor(next() ** 2 * pool.length)) % pool.length],
    );
    const got = await set.addMany(keys);
    keys.forEach((k, i) => {
      const want = model.add(k, now);
      news += want;
      if (got[i] !== want) mismatches++;
    });
    if (b % 20 === 10) {
      const sample = Array.from({ length: 500 }, () => pool[Math.floor(next() * pool.length)]);
      const has = await set.hasMany(sample);
      sample.forEach((k, i) => (has[i] !== (model.held(k, now) ? 1 : 0) ? mismatches++ : 0));
    }
    if (b % 50 === 25) {
      const pattern = forgets[forgot++ % forgets.length];
      model.forgotten.set(pattern, now);
      if (pattern.includes("://")) await set.forgetPrefix(pattern);
      else await set.forgetHost(pattern);
    }
  }
  const now = Math.floor(clock / 1000);
  let live = 0;
  for (const k of model.times.keys()) if (model.held(k, now)) live++;
  return [
    semantics,
    SIGHTINGS.toLocaleString("en-US"),
    news.toLocaleString("en-US"),
    String(forgot),
    String(mismatches),
    model.times.size.toLocaleString("en-US"),
    live.toLocaleString("en-US"),
    (await set.size()).toLocaleString("en-US"),
  ];
}

const server = await startRedis("cs-bench-window-");
const client = createClient({ url: server.url });
await client.connect();
const redis = fromNodeRedis(client, { timeoutMs: 120_000 });
const version = String(execSync("redis-server --version")).match(/v=(\S+)/)[1];
const out = [`Redis ${version} on loopback; ${machine()}`, ""];
if (process.env.CHECK_ONLY === undefined) out.push(await race(redis), "");
if (process.env.RACE_ONLY === undefined) {
  const rows = [];
  for (const semantics of ["first-seen", "refresh"]) rows.push(await check(redis, semantics));
  out.push(
    `Correctness: ${SIGHTINGS.toLocaleString("en-US")} sightings over 21 simulated days (an injected clock), default TTL 3d and a map of host, subdomain and URL-prefix rules (6h to 5d), a forget every 50 batches of 1,000, 2,344 shards (items 150,000); every addMany answer and a sample of hasMany against a JavaScript model of the rules.`,
    "",
    table(
      [
        "semantics",
        "sightings",
        "new",
        "forgets",
        "answers off",
        "keys ever (model)",
        "held at the end (model)",
        "fields in Redis (size())",
      ],
      rows,
    ),
  );
}
await client.quit();
server.stop();
console.log(out.join("\n"));
