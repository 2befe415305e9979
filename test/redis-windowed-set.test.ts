// RedisWindowedSeenSet against a real redis-server and a 3-master Redis Cluster on loopback:
// random sequences of adds, look-ups, clock steps, forgets, removals and reopens answered as a
// plain Map of key -> second does under the window rules (the model below matches hosts and
// prefixes with its own few lines, importing nothing of the code under test); racing clients;
// the server's clock shared by clients whatever their own; the lazy sweep; bad options.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CrawlsieveError, InvalidArgumentError } from "../build/js/index.node.js";
import { fromNodeRedis, RedisWindowedSeenSet, type RedisCommander } from "../build/js/redis/index.js";
import { ready, rng } from "./helpers.js";
import { connectCluster, startCluster, type RedisCluster } from "./support/redis-cluster.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

let server: RedisServer;
let cluster: RedisCluster;
const clients: { quit(): Promise<unknown> }[] = [];
let one: RedisCommander;
let spread: RedisCommander;

/** A new connection to the single server. */
async function connect(): Promise<RedisCommander> {
  const client = createClient({ url: server.url });
  await client.connect();
  clients.push(client);
  return fromNodeRedis(client);
}

beforeAll(async () => {
  await ready();
  server = await startRedis();
  cluster = await startCluster();
  one = await connect();
  const c = await connectCluster(cluster);
  clients.push({ quit: () => c.close() });
  spread = fromNodeRedis(c);
}, 180_000);
afterAll(async () => {
  for (const c of clients) await c.quit().catch(() => undefined);
  await server?.stop();
  await cluster?.stop();
});

const DAY = 86_400;
const sum = (flags: Uint8Array) => flags.reduce((a, b) => a + b, 0);

/** The window rules written out directly: TTL rules and tombstones by host (with subdomains) or URL prefix. */
class Model {
  readonly times = new Map<string, number>();
  readonly forgotten = new Map<string, number>();

  constructor(
    private readonly defaultTtl: number,
    /** [pattern, seconds]: a pattern with "://" is a URL prefix, else a host. */
    private readonly rules: readonly (readonly [string, number])[],
    private readonly refresh: boolean,
  ) {}

  private static host(key: string): string | undefined {
    return /^https?:\/\/([^/]+)/.exec(key)?.[1];
  }

  private static matches(key: string, pattern: string): boolean {
    if (pattern.includes("://")) return key.startsWith(pattern);
    const host = Model.host(key);
    return host !== undefined && (host === pattern || host.endsWith(`.${pattern}`));
  }

  ttl(key: string): number {
    const matching = this.rules.filter(([p]) => Model.matches(key, p));
    const prefixes = matching.filter(([p]) => p.includes("://"));
    // The longest URL prefix wins; else the longest (most specific) host.
    const pick = (prefixes.length > 0 ? prefixes : matching).sort((a, b) => b[0].length - a[0].length)[0];
    return pick === undefined ? this.defaultTtl : pick[1];
  }

  cutoff(key: string, now: number): number {
    const s = this.ttl(key);
    let f = 0;
    for (const [p, t] of this.forgotten) if (Model.matches(key, p)) f = Math.max(f, t);
    return Math.max(Number.isFinite(s) ? now - s + 1 : 0, f > 0 ? f + 1 : 0);
  }

  held(key: string, now: number): boolean {
    const t = this.times.get(key);
    return t !== undefined && t >= this.cutoff(key, now);
  }

  add(keys: readonly string[], now: number): number[] {
    return keys.map((key) => {
      const t = this.times.get(key);
      if (this.held(key, now)) {
        if (this.refresh) this.times.set(key, Math.max(t!, now));
        return 0;
      }
      this.times.set(key, Math.max(now, this.cutoff(key, now)));
      return 1;
    });
  }

  remove(keys: readonly string[], now: number): number[] {
    return keys.map((key) => {
      const was = this.held(key, now) ? 1 : 0;
      this.times.delete(key);
      return was;
    });
  }
}

const POOL = [
  "https://a.example/p1",
  "https://a.example/p2?q=1",
  "https://a.example/live/x",
  "https://a.example/live/y",
  "https://news.a.example/s1",
  "https://x.news.a.example/s2",
  "https://b.example/archive/1",
  "https://b.example/archive/2",
  "https://b.example/other",
  "https://c.example/1",
  "https://d.example/1",
  "https://d.example/2/q",
  "https://nota.example/1",
  "key-1",
  "key-2",
];
const HOSTS = ["a.example", "news.a.example", "b.example", "d.example", "c.example"];
const PREFIXES = ["https://a.example/live/", "https://b.example/archive/", "https://d.example/2"];
/** TTL maps: with never rules (no sweep, no tombstone dropped), and all finite. */
const CONFIGS = {
  "with never": {
    ttl: "1h",
    map: {
      "a.example": "2h",
      "news.a.example": "30m",
      "https://a.example/live/": "10m",
      "https://b.example/archive/": "never",
      "c.example": "never",
    },
    model: [
      ["a.example", 7200],
      ["news.a.example", 1800],
      ["https://a.example/live/", 600],
      ["https://b.example/archive/", Infinity],
      ["c.example", Infinity],
    ],
  },
  finite: {
    ttl: "1h",
    map: {
      "a.example": "2h",
      "news.a.example": "30m",
      "https://a.example/live/": "10m",
      "https://b.example/archive/": "1d",
    },
    model: [
      ["a.example", 7200],
      ["news.a.example", 1800],
      ["https://a.example/live/", 600],
      ["https://b.example/archive/", DAY],
    ],
  },
} as const;

let names = 0;
describe.each([
  ["one redis-server", () => one],
  ["a 3-master cluster", () => spread],
])("RedisWindowedSeenSet on %s", (_, redisOf) => {
  describe.each(["first-seen", "refresh"] as const)("%s", (semantics) => {
    it.each(Object.keys(CONFIGS) as (keyof typeof CONFIGS)[])(
      "answers as the Map model through random adds, look-ups, clock steps, forgets, removals and reopens (%s)",
      async (config) => {
        const { ttl, map, model: rules } = CONFIGS[config];
        const redis = redisOf();
        const name = `model-${names++}`;
        let clock = Date.UTC(2026, 11, 2) + 123;
        const now = () => Math.floor(clock / 1000);
        const open = () =>
          RedisWindowedSeenSet.open(redis, { name, items: 5000, ttl, ttlMap: map, semantics, now: () => clock });
        let set = await open();
        expect(set.semantics).toBe(semantics);
        const model = new Model(3600, rules, semantics === "refresh");
        const next = rng(names * 7919 + (semantics === "refresh" ? 1 : 0));
        const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
        const batch = () => Array.from({ length: 1 + Math.floor(next() * 10) }, () => pick(POOL));
        const log: string[] = [];
        const counts = { added: 0, forgotten: 0, expired: 0 };
        for (let step = 0; step < 300; step++) {
          const r = next();
          const where = () => `step ${step} (${config}, ${semantics}): ${log.slice(-6).join(" | ")}`;
          if (r < 0.3) {
            const keys = batch();
            const want = model.add(keys, now());
            log.push(`add ${keys.join(",")}`);
            expect(Array.from(await set.addMany(keys)), where()).toEqual(want);
            counts.added += want.reduce((a, b) => a + b, 0);
          } else if (r < 0.42) {
            const keys = batch();
            log.push(`has ${keys.join(",")}`);
            expect(Array.from(await set.hasMany(keys)), where()).toEqual(
              keys.map((k) => (model.held(k, now()) ? 1 : 0)),
            );
          } else if (r < 0.5) {
            const keys = batch();
            const t = model.times;
            log.push(`seenAt ${keys.join(",")}`);
            expect(Array.from(await set.seenAtMany(keys)), where()).toEqual(
              keys.map((k) => (model.held(k, now()) ? t.get(k)! * 1000 : Number.NaN)),
            );
          } else if (r < 0.57) {
            const keys = batch();
            // Later than now only on the all-finite map: a tombstone dropped as older than every TTL
            // may have held a key for an earlier `at`.
            const at = clock + (config === "finite" ? 0 : -3_600_000) + Math.floor(next() * 3 * 3_600_000);
            log.push(`due@${at} ${keys.join(",")}`);
            const atS = Math.floor(at / 1000);
            expect(Array.from(await set.dueMany(keys, at)), where()).toEqual(
              keys.map((k) => (model.held(k, atS) ? 0 : 1)),
            );
          } else if (r < 0.75) {
            const step = pick([0, 1, 999, 30_000, 600_000, 1_800_000, 3_599_000, 3_600_000, 7_300_000, DAY * 1000]);
            clock += step;
            log.push(`clock +${step}`);
            counts.expired += POOL.filter((k) => model.times.has(k) && !model.held(k, now())).length;
          } else if (r < 0.82) {
            const host = pick(HOSTS);
            model.forgotten.set(host, now());
            log.push(`forgetHost ${host}`);
            await set.forgetHost(host);
            counts.forgotten++;
          } else if (r < 0.87) {
            const prefix = pick(PREFIXES);
            model.forgotten.set(prefix, now());
            log.push(`forgetPrefix ${prefix}`);
            await set.forgetPrefix(prefix);
            counts.forgotten++;
          } else if (r < 0.94) {
            const keys = batch();
            log.push(`remove ${keys.join(",")}`);
            expect(Array.from(await set.removeMany(keys)), where()).toEqual(model.remove(keys, now()));
          } else {
            log.push("reopen");
            await set.close();
            set = await open();
          }
        }
        // The run met every rule: keys new, expired and forgotten.
        expect(counts.added).toBeGreaterThan(30);
        expect(counts.forgotten).toBeGreaterThan(10);
        expect(counts.expired).toBeGreaterThan(5);
        expect(await set.size()).toBe(model.times.size);
        await set.clear();
        expect(await set.size()).toBe(0);
        expect(sum(await set.hasMany(POOL))).toBe(0);
        await set.close();
      },
      60_000,
    );
  });

  it("two clients racing addMany on the same keys: exactly one sees each key new", async () => {
    const name = `race-${names++}`;
    const redis = redisOf();
    const other = redis === one ? await connect() : fromNodeRedis(await connectClusterClient());
    const keys = Array.from({ length: 6000 }, (_, i) => `https://race.example/${i % 97}/page-${i}`);
    const [x, y] = await Promise.all([
      RedisWindowedSeenSet.open(redis, { name, ttl: "30d", items: 10_000 }),
      RedisWindowedSeenSet.open(other, { name, ttl: "30d", items: 10_000 }),
    ]);
    const reversed = [...keys].reverse();
    const runs = await Promise.all([
      x.addMany(keys.slice(0, 3000)).then(async (a) => [...a, ...(await x.addMany(keys.slice(3000)))]),
      y.addMany(reversed.slice(0, 3000)).then(async (a) => [...a, ...(await y.addMany(reversed.slice(3000)))]),
    ]);
    const wins = keys.map((_, i) => runs[0][i] + runs[1][keys.length - 1 - i]);
    expect(wins.every((w) => w === 1)).toBe(true);
    expect(await x.size()).toBe(keys.length);
  }, 60_000);
});

describe("RedisWindowedSeenSet on the cluster: spread and replicated", () => {
  it("spreads its shards over the three masters, and with replicated durability answers the same after WAIT", async () => {
    const name = `spread-${names++}`;
    let clock = Date.UTC(2026, 11, 2);
    const set = await RedisWindowedSeenSet.open(spread, {
      name,
      ttl: "1d",
      items: 20_000,
      durability: "replicated",
      now: () => clock,
    });
    expect(await set.shardCount()).toBe(313);
    const keys = Array.from({ length: 3000 }, (_, i) => `https://s${i % 50}.example/p/${i}`);
    const first = await set.addMany([...keys, ...keys.slice(0, 100)]);
    expect(sum(first.subarray(0, 3000))).toBe(3000);
    expect(sum(first.subarray(3000))).toBe(0);
    for (const port of cluster.masters()) {
      const held = cluster
        .cli(["--scan", "--pattern", `cs:{${name}/*`], port)
        .trim()
        .split("\n");
      expect(held.length, `master ${port}`).toBeGreaterThan(60);
    }
    await set.forgetHost("s7.example");
    const again = await set.addMany(keys);
    expect(sum(again)).toBe(60);
    expect(Array.from(again)).toEqual(keys.map((k) => (k.startsWith("https://s7.example/") ? 1 : 0)));
    // Re-added in the second of their forget, the s7 pages were recorded a second later (held
    // past it): a day on, they alone are not due yet.
    clock += 86_400_000;
    const s7 = keys.map((k) => (k.startsWith("https://s7.example/") ? 1 : 0));
    expect(Array.from(await set.dueMany(keys))).toEqual(s7.map((f) => 1 - f));
    expect(Array.from(await set.removeMany(keys))).toEqual(s7);
    expect(await set.size()).toBe(0);
  }, 60_000);
});

/** A second cluster client (its own connections). */
async function connectClusterClient() {
  const c = await connectCluster(cluster);
  clients.push({ quit: () => c.close() });
  return c;
}

/** The server's TIME in seconds. */
async function serverTime(redis: RedisCommander): Promise<number> {
  const [s] = (await redis.send(["TIME"])) as unknown[];
  return Number(String(s));
}

describe("RedisWindowedSeenSet: one clock, the server's", () => {
  it("two clients without an injected clock agree: both record and read Redis TIME", async () => {
    const other = await connect();
    const name = `clock-${names++}`;
    const x = await RedisWindowedSeenSet.open(one, { name, ttl: "1h" });
    const y = await RedisWindowedSeenSet.open(other, { name, ttl: "1h" });
    const keys = ["https://clock.example/1", "https://clock.example/2"];
    const before = await serverTime(one);
    expect(Array.from(await x.addMany(keys))).toEqual([1, 1]);
    const after = await serverTime(one);
    const seen = Array.from(await y.seenAtMany(keys));
    expect(seen).toEqual(Array.from(await x.seenAtMany(keys)));
    for (const t of seen) {
      expect(t / 1000).toBeGreaterThanOrEqual(before);
      expect(t / 1000).toBeLessThanOrEqual(after);
    }
    expect(Array.from(await y.addMany(keys))).toEqual([0, 0]);
    // Due an hour after the recorded second, not before, by Redis's clock.
    expect(Array.from(await y.dueMany(keys, seen[0] + 3599_000))).toEqual([0, 0]);
    expect(Array.from(await y.dueMany(keys, seen[0] + 3600_000))).toEqual([1, 1]);
  });

  it("a client whose own clock is days off: a key added by another with the server clock is seen right after", async () => {
    const other = await connect();
    const name = `skew-${names++}`;
    const x = await RedisWindowedSeenSet.open(one, { name, ttl: "1h" });
    const y = await RedisWindowedSeenSet.open(other, { name, ttl: "1h" });
    const real = Date.now();
    const keys = Array.from({ length: 50 }, (_, i) => `https://skew.example/${i}`);
    expect(sum(await x.addMany(keys))).toBe(50);
    // This process's clock jumps 3 days ahead, then 3 days back: neither client reads it.
    const spy = vi.spyOn(Date, "now").mockReturnValue(real + 3 * DAY * 1000);
    try {
      expect(sum(await y.addMany(keys))).toBe(0);
      expect(sum(await y.hasMany(keys))).toBe(50);
      spy.mockReturnValue(real - 3 * DAY * 1000);
      expect(sum(await x.addMany(keys))).toBe(0);
      expect(sum(await y.dueMany(keys))).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("RedisWindowedSeenSet: the sweep of expired fields", () => {
  /** HLEN of each shard of set `name` on the single server. */
  async function lengths(name: string): Promise<number[]> {
    const keys = (await one.send(["KEYS", `cs:{${name}}:ws:*`])) as unknown[];
    const shards = keys.map(String).filter((k) => !k.endsWith(":meta"));
    return Promise.all(shards.map(async (k) => Number(await one.send(["HLEN", k]))));
  }

  it("filling a shard to 96 fields drops the fields past every TTL, and never one within its TTL", async () => {
    const name = `sweep-${names++}`;
    let clock = Date.UTC(2026, 11, 2);
    const open = (ttlMap = {}) =>
      RedisWindowedSeenSet.open(one, { name, items: 64, ttl: "10s", ttlMap, now: () => clock });
    const set = await open();
    expect(await set.shardCount()).toBe(1);
    const old = Array.from({ length: 60 }, (_, i) => `https://old.example/${i}`);
    const recent = Array.from({ length: 30 }, (_, i) => `https://recent.example/${i}`);
    expect(sum(await set.addMany(old))).toBe(60);
    clock += 8_000;
    expect(sum(await set.addMany(recent))).toBe(30);
    clock += 7_000; // old: 15 s ago, past the 10 s; recent: 7 s ago, within it
    const fresh = Array.from({ length: 10 }, (_, i) => `https://fresh.example/${i}`);
    expect(sum(await set.addMany(fresh.slice(0, 5)))).toBe(5);
    expect(await lengths(name)).toEqual([95]); // under the threshold: nothing swept yet
    expect(await set.size()).toBe(95);
    expect(sum(await set.addMany(fresh.slice(5, 6)))).toBe(1); // the 96th field: swept
    expect(await lengths(name)).toEqual([36]);
    // Small enough for Redis's compact encoding (hash-max-listpack-entries 128).
    expect(String(await one.send(["OBJECT", "ENCODING", `cs:{${name}}:ws:0`]))).toBe("listpack");
    expect(sum(await set.hasMany(recent))).toBe(30);
    expect(sum(await set.hasMany(fresh))).toBe(6);
    expect(sum(await set.hasMany(old))).toBe(0);
    // A process with a longer TTL for a host keeps those keys through the sweep: longest TTL decides.
    const long = await open({ "keep.example": "1h" });
    const keep = Array.from({ length: 60 }, (_, i) => `https://keep.example/${i}`);
    expect(sum(await long.addMany(keep))).toBe(60); // 96 fields again, nothing past 1h
    expect(await lengths(name)).toEqual([96]);
    clock += 30_000;
    expect(sum(await long.addMany(Array.from({ length: 32 }, (_, i) => `https://more.example/${i}`)))).toBe(32);
    // At 128: recent and fresh (past 10 s, within 1 h) stay, since a key of this policy may have 1 h.
    expect(await lengths(name)).toEqual([128]);
  });

  it("with a never rule nothing is swept (a key may be held forever)", async () => {
    const name = `nosweep-${names++}`;
    let clock = Date.UTC(2026, 11, 2);
    const set = await RedisWindowedSeenSet.open(one, {
      name,
      items: 64,
      ttl: "10s",
      ttlMap: { "forever.example": "never" },
      now: () => clock,
    });
    await set.addMany(Array.from({ length: 95 }, (_, i) => `https://x.example/${i}`));
    clock += 60_000;
    await set.addMany(["https://x.example/last"]);
    expect(await lengths(name)).toEqual([96]);
  });
});

describe("RedisWindowedSeenSet: bad options name the value", () => {
  it.each([
    [{ ttl: "1.5s" }, "ttl", "1.5s"],
    [{ ttl: "x" }, "ttl", "x"],
    [{ ttl: undefined }, "ttl", undefined],
    [{ ttl: "1h", ttlMap: { "not a host": "1h" } }, "pattern", "not a host"],
    [{ ttl: "1h", ttlMap: { "a.example": "1.5s" } }, 'ttlMap["a.example"]', "1.5s"],
    [{ ttl: "1h", items: 0 }, "items", 0],
    [{ ttl: "1h", semantics: "latest" }, "semantics", "latest"],
    [{ ttl: "1h", durability: "fsync" }, "durability", "fsync"],
    [{ ttl: "1h", now: 5 }, "now", 5],
  ])("%o", async (options, argument, value) => {
    const error = await RedisWindowedSeenSet.open(one, { name: "bad", ...(options as { ttl: "1h" }) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe(argument);
    expect((error as InvalidArgumentError).value).toBe(value);
  });

  it("a bad host, prefix, clock reading or name; a use after close", async () => {
    let clock = Number.NaN;
    const set = await RedisWindowedSeenSet.open(one, { name: "bad-use", ttl: "1h", now: () => clock });
    await expect(set.addMany(["k"])).rejects.toThrow(/now must be a time in ms.*NaN/);
    clock = Date.UTC(2026, 11, 2);
    await expect(set.forgetHost("https://a.example/")).rejects.toThrow(/host must be a host.*https:\/\/a\.example/);
    await expect(set.forgetPrefix("a.example")).rejects.toThrow(/prefix must be a URL prefix.*a\.example/);
    await expect(set.dueMany(["k"], -1)).rejects.toThrow(/at must be/);
    await expect(RedisWindowedSeenSet.open(one, { name: "a b", ttl: "1h" })).rejects.toThrow(/name.*"a b"/);
    await set.close();
    await expect(set.hasMany(["k"])).rejects.toThrow(CrawlsieveError);
  });
});
