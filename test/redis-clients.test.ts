// The Redis seen-sets under both node-redis majors the peer range allows (5, and 6 installed as
// the devDependency "redis-6"), on a real redis-server: same answers, and size() and clear() in a
// handful of commands (they sent 65,536 each, seconds under node-redis 6). Counts, not timings.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient as createClient5 } from "redis";
import { createClient as createClient6 } from "redis-6";
import { init, openSeenSet, type SeenSet } from "../build/js/index.node.js";
import { fromNodeRedis, RedisDeduplicator, type RedisCommander } from "../build/js/redis/index.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

let server: RedisServer;
beforeAll(async () => {
  await init();
  server = await startRedis();
}, 120_000);
afterAll(() => server.stop());

/** A commander that counts what it sends, and may pretend the database is larger than it is. */
function counting(inner: RedisCommander, dbsize?: number) {
  const sent: string[] = [];
  const redis: RedisCommander = {
    send: (args, options) => {
      sent.push(String(args[0]));
      return dbsize !== undefined && args[0] === "DBSIZE" ? Promise.resolve(dbsize) : inner.send(args, options);
    },
  };
  return { redis, sent };
}

const clients = [
  ["node-redis 5", (url: string) => createClient5({ url })],
  ["node-redis 6", (url: string) => createClient6({ url })],
] as const;

describe.each(clients)("Redis seen-sets on %s", (name, create) => {
  const label = name.replace(" ", "-");
  let client: { connect(): Promise<unknown>; quit(): Promise<unknown> };
  let inner: RedisCommander;
  beforeAll(async () => {
    client = create(server.url) as never;
    await client.connect();
    inner = fromNodeRedis(client as never);
  });
  afterAll(() => client.quit());

  const specs = {
    exact: (redis: RedisCommander) => ({ backend: "redis" as const, client: redis, name: `exact-${label}` }),
    bloom: (redis: RedisCommander) => ({
      backend: "redis" as const,
      client: redis,
      name: `bloom-${label}`,
      exact: false,
      items: 1000,
      fpRate: 0.01,
    }),
    dupefilter: (redis: RedisCommander) => ({
      backend: "redis" as const,
      client: redis,
      dupefilter: `spider-${label}:dupefilter`,
    }),
  };

  it.each(Object.keys(specs) as (keyof typeof specs)[])(
    "%s: size() and clear() in a few commands, with the right answers",
    async (kind) => {
      const { redis, sent } = counting(inner);
      const seen: SeenSet = await openSeenSet(specs[kind](redis));
      expect([...(await seen.addMany(["a", "b", "a"]))]).toEqual([1, 1, 0]);
      sent.length = 0;
      expect(await seen.size()).toBe(2);
      expect(sent.length, sent.join(" ")).toBeLessThanOrEqual(4);
      sent.length = 0;
      await seen.clear();
      expect(sent.length, sent.slice(0, 8).join(" ")).toBeLessThanOrEqual(8);
      expect(await seen.size()).toBe(0);
      expect([...(await seen.addMany(["a"]))]).toEqual([1]);
      await seen.clear();
    },
  );

  it("exact, in a database too large to SCAN: one script names every bucket, same answers", async () => {
    const { redis, sent } = counting(inner, 1e9);
    const dedup = await RedisDeduplicator.open(redis, { name: `large-${label}` });
    await dedup.addMany(["x", "y", "z", "x"]);
    sent.length = 0;
    expect(await dedup.size()).toBe(3);
    expect(sent.filter((c) => c !== "SCRIPT")).toEqual(["DBSIZE", "EVALSHA"]);
    await dedup.destroy();
    expect(await RedisDeduplicator.open(inner, { name: `large-${label}` }).then((d) => d.size())).toBe(0);
  });
});
