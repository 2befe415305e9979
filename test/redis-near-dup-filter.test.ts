// RedisNearDupFilter on a real redis-server, held against the in-memory NearDupFilter (same
// answers, same band bits byte for byte), concurrent callers adding the same texts on separate
// connections (exactly one sees each text new), the recorded plan, and near-dups --filter --redis.
// The cluster case runs in redis-cluster.test.ts, on the one cluster that file starts.
import { spawnSync } from "node:child_process";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FormatError, InvalidArgumentError, NearDupFilter, sizing } from "../build/js/index.node.js";
import { ContentSieve } from "../build/js/crawlee/index.js";
import { fromNodeRedis, RedisNearDupFilter, type RedisCommander } from "../build/js/redis/index.js";
import { ready, rng } from "./helpers.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
let server: RedisServer;
const clients: ReturnType<typeof createClient>[] = [];
let redis: RedisCommander;

const connect = async () => {
  const client = createClient({ url: server.url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
  client.on("error", () => undefined);
  await client.connect();
  clients.push(client);
  return fromNodeRedis(client);
};

beforeAll(async () => {
  await ready();
  server = await startRedis();
  redis = await connect();
}, 60_000);
afterAll(async () => {
  for (const client of clients) await client.quit().catch(() => undefined);
  await server?.stop();
});

/** Families of edited copies of 80-word texts over a vocabulary of 10^6 letter words, shuffled. */
function corpus(seed: number, families: number, copies: number): string[] {
  const next = rng(seed);
  const word = () =>
    Math.floor(next() * 1e6)
      .toString(26)
      .replace(/\d/g, (d) => "qrstuvwxyz"[Number(d)]);
  const texts: string[] = [];
  for (let f = 0; f < families; f++) {
    const base = Array.from({ length: 80 }, word);
    for (let c = 0; c < copies; c++) texts.push(base.map((w) => (next() < c * 0.01 ? word() : w)).join(" "));
  }
  for (let i = texts.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [texts[i], texts[j]] = [texts[j], texts[i]];
  }
  return texts;
}

describe("RedisNearDupFilter on one server", () => {
  it("answers as NearDupFilter for the same texts and plan, and its bands hold the same bits byte for byte", async () => {
    const texts = [...corpus(61, 80, 5), "", "echo echo echo echo"];
    const local = new NearDupFilter({ items: 2000, fpRate: 1e-4, threshold: 0.8 });
    const shared = await RedisNearDupFilter.open(redis, { name: "nd-same", items: 2000, fpRate: 1e-4, threshold: 0.8 });
    const answers: number[] = [];
    for (let at = 0; at < texts.length; at += 37) answers.push(...(await shared.addMany(texts.slice(at, at + 37))));
    expect(answers).toEqual(Array.from(local.addMany(texts)));
    expect(answers.filter(Boolean).length).toBeGreaterThan(120);
    const probes = corpus(62, 30, 2);
    expect(await shared.hasMany([...texts.slice(0, 50), ...probes])).toEqual(
      local.hasMany([...texts.slice(0, 50), ...probes]),
    );
    // The exported filter is the in-memory one but for the counts of texts (Redis keeps none): same plan, same bits in every band.
    const exported = await shared.exportBytes();
    const own = local.serialize();
    expect(exported.length).toBe(own.length);
    expect(Buffer.from(exported.subarray(0, 24 + 40)).equals(Buffer.from(own.subarray(0, 24 + 40)))).toBe(true);
    expect(bandBits(exported)).toEqual(bandBits(own));
    expect(bandBits(own).length).toBe(16);
    expect(NearDupFilter.deserialize(exported).hasMany(probes)).toEqual(local.hasMany(probes));
  });

  it("of four connections adding the same texts at once, in different orders and batches, exactly one sees each text new", async () => {
    const texts = corpus(63, 150, 1);
    const callers = await Promise.all([0, 1, 2, 3].map(() => connect()));
    const filters = await Promise.all(
      callers.map((c) => RedisNearDupFilter.open(c, { name: "nd-race", items: 5000, fpRate: 1e-4 })),
    );
    const runs = await Promise.all(
      filters.map(async (filter, c) => {
        const order = texts.map((_, i) => i);
        const next = rng(70 + c);
        for (let i = order.length - 1; i > 0; i--) {
          const j = Math.floor(next() * (i + 1));
          [order[i], order[j]] = [order[j], order[i]];
        }
        const answers = new Uint8Array(texts.length);
        const batch = 7 + 5 * c;
        for (let at = 0; at < order.length; at += batch) {
          const ids = order.slice(at, at + batch);
          const got = await filter.addMany(ids.map((i) => texts[i]));
          ids.forEach((i, j) => (answers[i] = got[j]));
        }
        return answers;
      }),
    );
    texts.forEach((_, i) => expect(runs.filter((answers) => answers[i] === 0).length, `text ${i}`).toBe(1));
  });

  it("exactly one of them even when each caller's writes to one band arrive late (other callers win that band first)", async () => {
    const texts = corpus(65, 40, 1);
    // Caller c holds back its script calls on band c's shard: without the filter of whole
    // signatures, every caller would find some band set by another and none would see a text new.
    const late = (c: number, base: RedisCommander): RedisCommander => ({
      ...base,
      send: async (args, options) => {
        if (args.some((a) => typeof a === "string" && a.includes(`{nd-late/nd/band/${c}}`)))
          await new Promise((r) => setTimeout(r, 150));
        return base.send(args, options);
      },
    });
    const callers = await Promise.all([0, 1, 2].map(async (c) => late(c, await connect())));
    const filters = await Promise.all(
      callers.map((c) => RedisNearDupFilter.open(c, { name: "nd-late", items: 1000, fpRate: 1e-4 })),
    );
    const runs = await Promise.all(filters.map((filter) => filter.addMany(texts)));
    texts.forEach((_, i) => expect(runs.filter((answers) => answers[i] === 0).length, `text ${i}`).toBe(1));
  });

  it("keeps the plan its first process recorded, refuses another threshold or layout by field, and bad options by name", async () => {
    await RedisNearDupFilter.open(redis, { name: "nd-plan", items: 1000, fpRate: 1e-3, threshold: 0.7 });
    const again = await RedisNearDupFilter.open(redis, { name: "nd-plan", items: 5, fpRate: 0.5, threshold: 0.7 });
    const { bands, rows } = sizing.filterLayout(0.7);
    expect([again.plan.items, again.plan.fpRate, again.bands, again.rows]).toEqual([1000, 1e-3, bands, rows]);
    await expect(
      RedisNearDupFilter.open(redis, { name: "nd-plan", items: 1000, fpRate: 1e-3, threshold: 0.8 }),
    ).rejects.toThrow(/field "threshold" must be 0.8, as this process asked/);
    await expect(
      RedisNearDupFilter.open(redis, { name: "nd-plan", items: 1000, fpRate: 1e-3, threshold: 0.7, rows: 3 }),
    ).rejects.toThrow(/field "rows" must be 3, as this process asked/);
    await redis.send([
      "SET",
      "cs:{nd-forged}:nd:meta",
      JSON.stringify({
        v: 1,
        kind: "near-dup-filter",
        threshold: 0.8,
        shingle: 3,
        bands: 13,
        rows: 3,
        items: 1e300,
        fpRate: 0.01,
      }),
    ]);
    await expect(RedisNearDupFilter.open(redis, { name: "nd-forged", items: 10, fpRate: 0.01 })).rejects.toThrow(
      FormatError,
    );
    await redis.send(["SET", "cs:{nd-v2}:nd:meta", JSON.stringify({ v: 2, kind: "near-dup-filter" })]);
    await expect(RedisNearDupFilter.open(redis, { name: "nd-v2", items: 10, fpRate: 0.01 })).rejects.toThrow(
      /description version 2/,
    );
    await expect(
      RedisNearDupFilter.open(redis, { name: "nd-bad", items: 10, fpRate: 0.01, durability: "sometimes" as "local" }),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(RedisNearDupFilter.open(redis, { name: "nd-bad", items: 0, fpRate: 0.01 })).rejects.toThrow(
      /items must be an integer from 1/,
    );
  });

  it("Crawlee's ContentSieve over a filter: a near copy of a page one crawler fetched is muted in another and counted; a retried page is not its own copy", async () => {
    const [one, two] = await Promise.all(
      [0, 1].map(() => RedisNearDupFilter.open(redis, { name: "nd-sieve", items: 1000, fpRate: 1e-4 })),
    );
    const [first, second, alone] = await Promise.all([
      ContentSieve.open({ filter: one }),
      ContentSieve.open({ filter: two }),
      ContentSieve.open({ filter: new NearDupFilter({ items: 100, fpRate: 1e-3 }) }),
    ]);
    const [text, other] = corpus(66, 2, 1);
    const copy = text
      .split(" ")
      .map((w, i) => (i === 40 ? "changed" : w))
      .join(" ");
    const pushed: string[] = [];
    const page = (url: string, body: string) => ({
      request: { url, uniqueKey: url },
      body: `<html><body><p>${body}</p></body></html>`,
      pushData: async () => void pushed.push(url),
    });
    for (const [sieve, ctx] of [
      [first, page("https://a.example/story", text)],
      [second, page("https://b.example/copy", copy)],
      [second, page("https://b.example/other", other)],
    ] as const) {
      await sieve.middleware(ctx);
      await ctx.pushData();
    }
    expect(pushed).toEqual(["https://a.example/story", "https://b.example/other"]);
    expect(second.duplicateOf(page("https://b.example/copy", copy))).toBeUndefined(); // marks are by request object
    expect(second.stats).toEqual({ pages: 2, duplicates: 1 });
    // The same request asked again (its handler failed): answered as the first time.
    expect(await first.check(page("https://a.example/story", text))).toBeUndefined();
    expect(await alone.check(page("https://c.example/x", text))).toBeUndefined();
    expect(await alone.check(page("https://c.example/y", copy))).toEqual({});
    expect(alone.stats).toEqual({ pages: 2, duplicates: 1 });
    await expect(ContentSieve.open({ filter: {} as never })).rejects.toThrow(/filter must be a filter with addMany/);
  });

  it("near-dups --filter --redis: a second run over the same records prints none; the first prints what the in-memory filter does", () => {
    const texts = corpus(64, 40, 3);
    const input = texts.map((text, i) => JSON.stringify({ id: i, text })).join("\n") + "\n";
    const run = (extra: string[]) =>
      spawnSync(process.execPath, [CLI, "near-dups", "--filter", "--items", "1000", ...extra], {
        input,
        encoding: "utf8",
      });
    const alone = run([]);
    const first = run(["--redis", server.url, "--namespace", "nd-cli"]);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toBe(alone.stdout);
    expect(first.stdout.split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(40);
    const second = run(["--redis", server.url, "--namespace", "nd-cli", "--durability", "local"]);
    expect([second.status, second.stdout]).toEqual([0, ""]);
    expect(run(["--redis", server.url]).stderr).toMatch(/--redis needs --namespace NAME/);
  });
});

/** The bit payload of each band nested in serialized NearDupFilter bytes (format v1: 8-byte length, then a blocked filter with 40 parameter bytes). */
function bandBits(bytes: Uint8Array): string[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: string[] = [];
  for (let at = 24 + 48; at < bytes.length - 8; ) {
    const length = Number(view.getBigUint64(at, true));
    out.push(Buffer.from(bytes.subarray(at + 8 + 24 + 40, at + 8 + length - 8)).toString("base64"));
    at += 8 + length;
  }
  return out;
}
