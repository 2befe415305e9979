// RedisMinHashIndex against a real redis-server and a real local Redis Cluster: the answers of the
// in-memory MinHashIndex for the same documents, three processes sharing one index, the recorded
// geometry, a master killed with SIGKILL under "replicated" durability, and bytes per document.
import { spawn } from "node:child_process";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FormatError, InvalidArgumentError, MinHashIndex } from "../build/js/index.node.js";
import { ContentSieve } from "../build/js/crawlee/index.js";
import { fromNodeRedis, RedisMinHashIndex, type RedisCommander } from "../build/js/redis/index.js";
import { exactJaccard, ready, rng } from "./helpers.js";
import { startCluster, type RedisCluster, connectCluster } from "./support/redis-cluster.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const WORKER = new URL("./support/minhash-worker.mjs", import.meta.url).pathname;
let server: RedisServer;
let single: ReturnType<typeof createClient>;
let redis: RedisCommander;
let cluster: RedisCluster;
let clusterClient: Awaited<ReturnType<typeof connectCluster>>;
let shared: RedisCommander;

beforeAll(async () => {
  await ready();
  [server, cluster] = await Promise.all([startRedis(), startCluster()]);
  single = createClient({ url: server.url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
  single.on("error", () => undefined);
  await single.connect();
  redis = fromNodeRedis(single);
  clusterClient = await connectCluster(cluster);
  shared = fromNodeRedis(clusterClient);
}, 180_000);
afterAll(async () => {
  await single?.quit().catch(() => undefined);
  await clusterClient?.close().catch(() => undefined);
  await Promise.all([server?.stop(), cluster?.stop()]);
});

/** Texts of 80 words from a vocabulary of 5,000: unrelated texts share next to no 3-shingle. */
function corpus(seed: number) {
  const next = rng(seed);
  const vocabulary = Array.from({ length: 5_000 }, () =>
    Array.from({ length: 3 + Math.floor(next() * 6) }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join(
      "",
    ),
  );
  const word = () => vocabulary[Math.floor(next() * vocabulary.length)];
  return {
    text: () => Array.from({ length: 80 }, word).join(" "),
    /** A copy with `edits` words replaced: each edit changes up to three shingles. */
    nearCopy: (text: string, edits: number) => {
      const words = text.split(" ");
      for (let e = 0; e < edits; e++) words[Math.floor(next() * words.length)] = word();
      return words.join(" ");
    },
    next,
  };
}

/** Runs the worker with its documents; resolves with its answers. */
function worker(name: string, ids: string[], texts: string[]): Promise<({ id: string; similarity: number } | null)[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, JSON.stringify(cluster.urls), name]);
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
    child.stdin.end(JSON.stringify({ ids, texts, batch: 10 }));
  });
}

describe("RedisMinHashIndex on one redis-server", () => {
  it("answers, batch by batch, what the in-memory MinHashIndex.cluster answers in the same order; finds every earlier representative of exact Jaccard 0.9 or more; a retried batch answers the same", async () => {
    const c = corpus(7);
    const texts: string[] = [];
    for (let i = 0; i < 320; i++)
      texts.push(
        i < 80 || c.next() < 0.2
          ? c.text()
          : c.nearCopy(texts[Math.floor(c.next() * texts.length)], Math.floor(c.next() * 9)),
      );
    const ids = texts.map((_, i) => `https://example.com/doc/${i}`);
    const index = await RedisMinHashIndex.open(redis, { name: "mh-same", threshold: 0.8 });
    const answers: ({ id: string; similarity: number } | null)[] = [];
    for (let i = 0; i < texts.length; i += 40)
      answers.push(...(await index.addMany(ids.slice(i, i + 40), texts.slice(i, i + 40))));
    const memory = new MinHashIndex({ threshold: 0.8 });
    expect(index.params).toEqual(memory.params);
    texts.forEach((text, i) => memory.add(i, text));
    const clustering = memory.cluster();
    let found = 0;
    texts.forEach((text, i) => {
      const answer = answers[i];
      // The reference written apart from crawlsieve: an earlier representative (a document answered null) of exact Jaccard >= 0.9 is found.
      if (texts.slice(0, i).some((earlier, j) => answers[j] === null && exactJaccard(earlier, text) >= 0.9))
        expect(answer, `document ${i}`).not.toBeNull();
      const representative = clustering.representatives[i];
      expect(answer === null, `document ${i}`).toBe(representative === i);
      if (answer === null) return;
      found++;
      expect(answer.similarity, `document ${i}`).toBe(clustering.similarities[i]);
      // Ties: any equally similar earlier representative.
      const chosen = ids.indexOf(answer.id);
      expect(chosen, `document ${i}`).toBeLessThan(i);
      expect(clustering.representatives[chosen], `document ${i}`).toBe(chosen);
      expect(memory.similarity(i, chosen), `document ${i}`).toBe(answer.similarity);
      expect(answer.similarity).toBeGreaterThanOrEqual(0.8);
    });
    expect(found).toBeGreaterThan(40);
    memory.dispose();
    // A batch sent again (a retry): nothing stored twice, no document reports itself.
    expect(await index.addMany(ids.slice(200, 240), texts.slice(200, 240))).toEqual(answers.slice(200, 240));
    // Bytes per document in Redis, every key of the index (MEMORY USAGE, every element sampled).
    const keys = ["cs:{mh-same}:mh:d:0", "cs:{mh-same}:mh:b:0", "cs:{mh-same}:mh:meta"];
    const [docBytes, bandBytes, metaBytes] = (
      await Promise.all(keys.map((key) => redis.send(["MEMORY", "USAGE", key, "SAMPLES", "0"])))
    ).map(Number);
    const perDoc = (docBytes + bandBytes + metaBytes) / texts.length;
    console.log(
      `RedisMinHashIndex: ${perDoc.toFixed(0)} bytes a document in Redis (${(docBytes / texts.length).toFixed(0)} its sketch and id, ${(bandBytes / texts.length).toFixed(0)} its ${index.params.bands} band entries; sketchSize ${index.params.k}, ${texts.length} documents)`,
    );
    // The sketch is 4 (k + 1) bytes (allocated in jemalloc's 2,560-byte class at k = 512); ids, band entries and the hashes' overhead add at most 1.5 KB.
    expect(perDoc).toBeGreaterThan(4 * (index.params.k + 1));
    expect(perDoc).toBeLessThan(4 * (index.params.k + 1) + 1_536);
    index.dispose();
  }, 120_000);

  it("records its geometry; a later process adopts what it leaves open and is refused, by field, what it asks otherwise; bad options are typed errors naming the value", async () => {
    const first = await RedisMinHashIndex.open(redis, { name: "mh-geometry", threshold: 0.7, sketchSize: 128 });
    expect(JSON.parse(String(await redis.send(["GET", "cs:{mh-geometry}:mh:meta"])))).toEqual({
      v: 2,
      kind: "minhash",
      threshold: 0.7,
      ...first.params,
      layout: "tagged",
      shards: 1,
      representatives: 16,
    });
    expect(first.params).toMatchObject({ shingle: 3, k: 128 });
    const later = await RedisMinHashIndex.open(redis, { name: "mh-geometry", threshold: 0.7 });
    expect(later.params).toEqual(first.params);
    const c = corpus(3);
    const text = c.text();
    await first.add("a", text);
    expect(await later.add("b", c.nearCopy(text, 1))).toMatchObject({ id: "a" });
    // An id is stored once: "a" added again with another text keeps its first one, and claims none of the new text's bands.
    const other = c.text();
    const bandFields = () => redis.send(["HLEN", "cs:{mh-geometry}:mh:b:0"]);
    const fieldsBefore = await bandFields();
    expect(await first.add("a", other)).toBeNull();
    expect(await bandFields()).toBe(fieldsBefore);
    expect(await later.add("d", c.nearCopy(other, 1))).toBeNull();
    expect(await later.add("e", c.nearCopy(text, 1))).toMatchObject({ similarity: expect.any(Number) });
    await expect(RedisMinHashIndex.open(redis, { name: "mh-geometry", threshold: 0.8 })).rejects.toThrow(FormatError);
    await expect(RedisMinHashIndex.open(redis, { name: "mh-geometry", threshold: 0.8 })).rejects.toThrow(
      /"threshold" must be 0.8, as this process asked/,
    );
    await expect(
      RedisMinHashIndex.open(redis, { name: "mh-geometry", threshold: 0.7, sketchSize: 256 }),
    ).rejects.toThrow(/"k" must be 256/);
    await expect(RedisMinHashIndex.open(redis, { name: "mh-bad", threshold: 1.5 })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(RedisMinHashIndex.open(redis, { name: "mh-bad", threshold: 1.5 })).rejects.toThrow(/threshold.*1\.5/);
    await expect(RedisMinHashIndex.open(redis, { name: "mh-bad", threshold: 0.8, sketchSize: 4 })).rejects.toThrow(
      /sketchSize/,
    );
    await expect(RedisMinHashIndex.open(redis, { name: "mh bad", threshold: 0.8 })).rejects.toThrow(/name/);
    await expect(first.addMany(["x", "x"], ["a b c", "d e f"])).rejects.toThrow(/ids\[1\].*"x"/);
    await expect(first.addMany(["x"], ["a", "b"])).rejects.toThrow(/texts/);
    // Nothing was recorded for the refused names.
    expect(await redis.send(["EXISTS", "cs:{mh-bad}:mh:meta"])).toBe(0);
    first.dispose();
    later.dispose();
  });

  it("the Crawlee content sieve keeps its pages in it: a near copy of a page one crawler fetched is muted in another; a retried page is not its own copy", async () => {
    // Two sieves over two handles of one index, as two crawler processes would hold them.
    const [one, two] = await Promise.all(
      [0, 1].map(() => RedisMinHashIndex.open(redis, { name: "mh-sieve", threshold: 0.8 })),
    );
    const [first, second] = await Promise.all([one, two].map((shared) => ContentSieve.open({ shared })));
    const c = corpus(13);
    const text = c.text();
    const pushed: string[] = [];
    const page = (url: string, body: string) => ({
      request: { url, uniqueKey: url },
      body: `<html><body><p>${body}</p></body></html>`,
      pushData: async () => void pushed.push(url),
    });
    const original = page("https://a.example/story", text);
    await first.middleware(original);
    await original.pushData();
    const copy = page("https://b.example/story-copy", c.nearCopy(text, 1));
    await second.middleware(copy);
    await copy.pushData();
    expect(pushed).toEqual(["https://a.example/story"]);
    expect(second.duplicateOf(copy)).toMatchObject({ url: "https://a.example/story" });
    expect(second.duplicateOf(copy)!.similarity).toBeGreaterThanOrEqual(0.8);
    expect(await first.check(page("https://a.example/story", text))).toBeUndefined();
    expect(second.stats).toEqual({ pages: 1, duplicates: 1 });
    await expect(ContentSieve.open({ shared: {} as never })).rejects.toThrow(/shared/);
    one.dispose();
    two.dispose();
  });
});

describe("RedisMinHashIndex on a Redis Cluster", () => {
  it("replicated durability: a master killed between the batch's writes and its WAIT (its replica paused) loses no acknowledged document", async () => {
    const synced = () =>
      cluster.masters().every((port) => /connected_slaves:1/.test(cluster.cli(["INFO", "replication"], port)));
    await cluster.settle(() => cluster.masters().length === 3 && synced());
    const index = await RedisMinHashIndex.open(shared, { name: "mh-wait", threshold: 0.8, durability: "replicated" });
    expect(index.spread).toBe(true);
    const c = corpus(11);
    const texts = Array.from({ length: 60 }, () => c.text());
    const ids = texts.map((_, i) => `wait-${i}`);
    const victimPort = cluster.masters()[0];
    const victim = cluster.nodes.find((node) => node.port === victimPort)!;
    const replica = cluster.nodes.find((node) => node.port === cluster.replicaOf(victimPort))!;
    replica.pause();
    const batch = index.addMany(ids, texts);
    let acknowledged = false;
    void batch.then(
      () => (acknowledged = true),
      () => undefined,
    );
    // The victim takes the writes at once; the WAIT waits for the paused replica.
    await new Promise((r) => setTimeout(r, 1_500));
    const written = cluster
      .cli(["--scan", "--pattern", "cs:{mh-wait/*"], victim.port)
      .trim()
      .split("\n")
      .filter(Boolean).length;
    expect(acknowledged).toBe(false);
    await victim.kill();
    replica.resume();
    cluster.cli(["CLUSTER", "FAILOVER", "TAKEOVER"], replica.port);
    await new Promise((r) => setTimeout(r, 2_000));
    await victim.restart();
    const answers = await batch;
    expect(written).toBeGreaterThan(10);
    expect(answers).toEqual(texts.map(() => null));
    await cluster.settle(
      () =>
        cluster.masters().length === 3 &&
        /master_link_status:up/.test(cluster.cli(["INFO", "replication"], victim.port)),
    );
    expect(cluster.masters()).toContain(replica.port);
    // Read back through a fresh client: every acknowledged document (sketch and bands) is found by its copy.
    const reader = await connectCluster(cluster);
    try {
      const again = await RedisMinHashIndex.open(fromNodeRedis(reader), { name: "mh-wait", threshold: 0.8 });
      const copies = await again.addMany(
        ids.map((id) => `copy-of-${id}`),
        texts,
      );
      expect(copies.map((m) => m?.id)).toEqual(ids);
      expect(copies.map((m) => m?.similarity)).toEqual(ids.map(() => 1));
      again.dispose();
    } finally {
      await reader.close();
    }
    index.dispose();
  }, 180_000);

  it("three processes: near copies stored by one are reported to another, and of two near copies added at once by two processes at least one reports the other", async () => {
    await cluster.settle(() => cluster.masters().length === 3);
    const c = corpus(5);
    const bases = Array.from({ length: 40 }, () => c.text());
    const fresh = Array.from({ length: 40 }, () => c.text());
    // Process A stores the bases; then B (near copies of the bases, and new texts) and C (near copies of B's new texts) run at once.
    const a = await worker(
      "mh-fleet",
      bases.map((_, i) => `base-${i}`),
      bases,
    );
    expect(a).toEqual(bases.map(() => null));
    const [b, cc] = await Promise.all([
      worker(
        "mh-fleet",
        [...bases.map((_, i) => `b-${i}`), ...fresh.map((_, j) => `new-${j}`)].flatMap((id, i, all) =>
          i < 40 ? [id, all[40 + i]] : [],
        ),
        bases.flatMap((text, i) => [c.nearCopy(text, 1), fresh[i]]),
      ),
      worker(
        "mh-fleet",
        fresh.map((_, j) => `c-${j}`),
        fresh.map((text) => c.nearCopy(text, 1)),
      ),
    ]);
    // B's near copies of A's bases: each reports its base.
    expect(b.filter((_, i) => i % 2 === 0).map((m) => m?.id)).toEqual(bases.map((_, i) => `base-${i}`));
    // B's new texts against C's near copies, added at the same moment: at least one of each pair reports the other.
    const unreported = fresh.map((_, j) => j).filter((j) => b[2 * j + 1]?.id !== `c-${j}` && cc[j]?.id !== `new-${j}`);
    expect(unreported).toEqual([]);
    // Nothing else is reported: the unrelated texts are far apart.
    expect(cc.filter((m) => m !== null && !m.id.startsWith("new-"))).toEqual([]);
    // The index spreads over every master.
    for (const port of cluster.masters())
      expect(cluster.cli(["--scan", "--pattern", "cs:{mh-fleet/*"], port).trim().split("\n").length).toBeGreaterThan(
        50,
      );
  }, 180_000);
});
