// crawlsieve/redis on a real Redis Cluster (three masters, three replicas, on loopback): one
// structure spread over every master, concurrent writers, a master killed with SIGKILL and its
// replica promoted mid-stream, and slots resharded mid-stream.
import { spawn, spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NearDupFilter } from "../build/js/index.node.js";
import {
  fromNodeRedis,
  keySlot,
  RedisBlockedBloomFilter,
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisDeduplicator,
  RedisNearDupFilter,
  RedisTimeWindowFilter,
  RedisWindowedSeenSet,
  type RedisCommander,
} from "../build/js/redis/index.js";
import { ready, rng, urls } from "./helpers.js";
import { startCluster, type RedisCluster, connectCluster } from "./support/redis-cluster.js";

const WORKER = new URL("./support/redis-worker.mjs", import.meta.url).pathname;
const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
let cluster: RedisCluster;
let client: Awaited<ReturnType<typeof connectCluster>>;
let redis: RedisCommander;

const connect = () => connectCluster(cluster);

beforeAll(async () => {
  await ready();
  cluster = await startCluster();
  client = await connect();
  redis = fromNodeRedis(client);
}, 180_000);
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await cluster?.stop();
});

const sum = (flags: Uint8Array) => flags.reduce((a, b) => a + b, 0);

/** used_memory of every master, minus what an empty node uses, by INFO memory. */
function dataBytesPerMaster(baseline: Map<number, number>): number[] {
  return cluster
    .masters()
    .map(
      (port) => Number(/used_memory:(\d+)/.exec(cluster.cli(["INFO", "memory"], port))![1]) - (baseline.get(port) ?? 0),
    );
}

describe("on a Redis Cluster", () => {
  // First, on a cluster no failover has touched yet: the slot map every client holds is current.
  it("a master killed between a batch's writes and its WAIT, and between a description's write and its WAIT (its replica paused, so the windows are certain): with replicated durability no acknowledged key is lost", async () => {
    // Every master with a replica in sync, so the one paused below is the victim's only copy.
    const synced = () =>
      cluster.masters().every((port) => /connected_slaves:1/.test(cluster.cli(["INFO", "replication"], port)));
    await cluster.settle(() => cluster.masters().length === 3 && synced());
    // The victim holds the Bloom filter's description; the exact store's lives on another master,
    // so the exact batch is written to the victim (among the others) inside the window, and the
    // filter's description is written there inside it too.
    const masterOf = (key: string) => client.slots[keySlot(key)].master.port;
    const victimPort = masterOf("cs:{wait-race}:meta");
    const exactName = Array.from({ length: 50 }, (_, i) => `wait-race-exact-${i}`).find(
      (name) => masterOf(`cs:{${name}}:fp:meta`) !== victimPort,
    )!;
    const victim = cluster.nodes.find((node) => node.port === victimPort)!;
    const replica = cluster.nodes.find((node) => node.port === cluster.replicaOf(victim.port))!;
    replica.pause();
    const keys = urls(600, "wait-race");
    const bloomRun = RedisBloomFilter.open(redis, {
      name: "wait-race",
      items: 100_000,
      fpRate: 1e-4,
      durability: "replicated",
    }).then((filter) => filter.addMany(keys));
    const exactRun = RedisDeduplicator.open(redis, { name: exactName, durability: "replicated" }).then((dedup) =>
      dedup.checkMany(keys),
    );
    const batch = Promise.all([bloomRun, exactRun]);
    // The victim takes the writes at once; its WAITs wait for the paused replica.
    await new Promise((r) => setTimeout(r, 1_500));
    const written = Number(cluster.cli(["DBSIZE"], victim.port).trim());
    await victim.kill();
    replica.resume();
    // The replica, which never received the writes, takes the victim's slots; the victim comes back
    // empty as its replica, so WAIT on the new master succeeds once it attaches.
    cluster.cli(["CLUSTER", "FAILOVER", "TAKEOVER"], replica.port);
    await new Promise((r) => setTimeout(r, 2_000));
    await victim.restart();
    const [fresh, exact] = await batch;
    await cluster.settle(
      () =>
        cluster.masters().length === 3 &&
        /master_link_status:up/.test(cluster.cli(["INFO", "replication"], victim.port)),
    );
    expect(written).toBeGreaterThan(0);
    expect(cluster.masters()).toContain(replica.port);
    const acked = keys.filter((_, i) => fresh[i] === 1);
    const exactAcked = keys.filter((_, i) => exact.isNew[i] === 1);
    expect(exactAcked.length).toBe(keys.length);
    expect(acked.length).toBeGreaterThan(590);
    const reader = await connect();
    try {
      const again = fromNodeRedis(reader);
      const lostBloom =
        acked.length -
        sum(await (await RedisBloomFilter.open(again, { name: "wait-race", items: 10, fpRate: 0.1 })).hasMany(acked));
      const counts = await Promise.all(
        exactAcked.map((key) => new RedisDeduplicator(again, { name: exactName }).count(key)),
      );
      expect({ lostBloom, lostExact: counts.filter((n) => n < 1).length }).toEqual({ lostBloom: 0, lostExact: 0 });
    } finally {
      await reader.close();
    }
  }, 180_000);

  it("Bloom filters (bit, blocked, counting), a time window and an exact deduplicator spread their keys evenly over the three masters", async () => {
    const baseline = new Map(
      cluster
        .masters()
        .map((port) => [port, Number(/used_memory:(\d+)/.exec(cluster.cli(["INFO", "memory"], port))![1])]),
    );
    const filter = await RedisBloomFilter.open(redis, { name: "spread", items: 2_000_000, fpRate: 1e-3 });
    expect(filter.spread).toBe(true);
    expect(filter.geometry.partitions).toBeGreaterThanOrEqual(256);
    const keys = urls(60_000, "spread");
    expect(sum(await filter.addMany(keys))).toBeGreaterThan(59_900);
    expect(sum(await filter.hasMany(keys))).toBe(60_000);
    const blocked = await RedisBlockedBloomFilter.open(redis, {
      name: "spread-blocked",
      items: 2_000_000,
      fpRate: 1e-3,
    });
    expect(blocked.spread).toBe(true);
    expect(sum(await blocked.addMany(keys))).toBeGreaterThan(59_900);
    expect(sum(await blocked.hasMany(keys))).toBe(60_000);
    const counting = await RedisCountingBloomFilter.open(redis, {
      name: "spread-counting",
      items: 200_000,
      fpRate: 1e-3,
    });
    expect(counting.spread).toBe(true);
    const some = keys.slice(0, 5_000);
    expect(sum(await counting.addMany(some))).toBeGreaterThan(4_990);
    expect(sum(await counting.removeMany(some.slice(0, 1_000)))).toBe(1_000);
    expect(sum(await counting.hasMany(some.slice(1_000)))).toBe(4_000);
    const week = await RedisTimeWindowFilter.open(redis, {
      name: "spread-window",
      granularity: "day",
      slices: 7,
      itemsPerSlice: 100_000,
      fpRate: 1e-3,
    });
    expect(new Set(Array.from({ length: 256 }, (_, shard) => keySlot(week.sliceKey(0, shard)))).size).toBe(256);
    expect(sum(await week.seenMany(some))).toBe(0);
    expect(sum(await week.seenMany(some))).toBe(5_000);
    const dedup = new RedisDeduplicator(redis, { name: "spread-exact" });
    expect(sum((await dedup.checkMany(keys)).isNew)).toBe(60_000);
    expect(dedup.spread).toBe(true);
    const perMaster = dataBytesPerMaster(baseline);
    const mean = perMaster.reduce((a, b) => a + b, 0) / perMaster.length;
    expect(perMaster.length).toBe(3);
    expect(Math.max(...perMaster) / mean, perMaster.join(", ")).toBeLessThanOrEqual(1.2);
    // Every master holds shards of both structures.
    for (const port of cluster.masters()) expect(Number(cluster.cli(["DBSIZE"], port))).toBeGreaterThan(1000);
  }, 120_000);

  it("a near-duplicate filter spreads every band over the masters, answers as the in-memory filter, and of three connections adding the same texts exactly one sees each new", async () => {
    const next = rng(47);
    const word = () =>
      `w${Math.floor(next() * 1e6)
        .toString(36)
        .replace(/\d/g, "x")}`;
    const bases = Array.from({ length: 120 }, () => Array.from({ length: 60 }, word));
    const texts = bases.flatMap((base) => [base.join(" "), base.map((w) => (next() < 0.03 ? word() : w)).join(" ")]);
    const filter = await RedisNearDupFilter.open(redis, { name: "nd-cluster", items: 10_000, fpRate: 1e-4 });
    const local = new NearDupFilter({ items: 10_000, fpRate: 1e-4 });
    expect(await filter.addMany(texts)).toEqual(local.addMany(texts));
    for (const port of cluster.masters())
      expect(cluster.cli(["KEYS", "cs:{nd-cluster/nd/band/0/*"], port).trim().split("\n").length).toBeGreaterThan(20);
    const fresh = bases.map((base) =>
      base
        .map((w) => (next() < 0.5 ? word() : w))
        .reverse()
        .join(" "),
    );
    const clients = await Promise.all([0, 1, 2].map(() => connect()));
    try {
      const shared = await Promise.all(
        clients.map((c) =>
          RedisNearDupFilter.open(fromNodeRedis(c), { name: "nd-cluster", items: 10_000, fpRate: 1e-4 }),
        ),
      );
      const runs = await Promise.all(
        shared.map((f, c) =>
          f.addMany(c === 1 ? [...fresh].reverse() : fresh).then((a) => (c === 1 ? a.reverse() : a)),
        ),
      );
      fresh.forEach((_, i) => expect(runs.filter((answers) => answers[i] === 0).length, `text ${i}`).toBe(1));
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    }
  }, 60_000);

  it("an exact deduplicator keeps the bucket layout its first process recorded, whatever later processes ask", async () => {
    const keys = urls(2_000, "layout");
    // Made with the IMP-CB front: its buckets stay under the name's one tag.
    const tagged = await RedisDeduplicator.open(redis, {
      name: "layout-tagged",
      countingFilter: { items: 10_000, fpRate: 1e-3 },
    });
    expect(tagged.spread).toBe(false);
    expect(sum((await tagged.checkMany(keys)).isNew)).toBe(2_000);
    // A process without the front would spread its buckets on a cluster; it adopts the record and sees every key.
    const plain = await RedisDeduplicator.open(redis, { name: "layout-tagged" });
    expect(plain.spread).toBe(false);
    expect(sum(await plain.hasMany(keys))).toBe(2_000);
    expect(sum((await plain.checkMany(keys.slice(0, 500))).isNew)).toBe(0);
    expect(await plain.size()).toBe(2_000);
    // Made spread first: a process asking for the front is refused by name instead of writing elsewhere.
    const spread = await RedisDeduplicator.open(redis, { name: "layout-spread" });
    expect(spread.spread).toBe(true);
    await spread.checkMany(keys);
    await expect(
      RedisDeduplicator.open(redis, { name: "layout-spread", countingFilter: { items: 10_000, fpRate: 1e-3 } }),
    ).rejects.toThrow(/countingFilter.*spread over the cluster/);
    const late = new RedisDeduplicator(redis, { name: "layout-spread" });
    expect(sum(await late.hasMany(keys))).toBe(2_000);
    expect(late.spread).toBe(true);
  }, 180_000);

  it("dedup --redis URLs --cluster: one shared seen-set over the cluster's masters from the command line", () => {
    const lines = urls(3_000, "cli-cluster");
    const input = [...lines, ...lines.slice(0, 1_000)].join("\n") + "\n";
    const nodes = cluster.urls.join(",");
    for (const flags of [[], ["--approx", "--items", "10000"]]) {
      const namespace = `cli-cluster${flags.length}`;
      const first = spawnSync(
        process.execPath,
        [CLI, "dedup", "--redis", nodes, "--cluster", "--namespace", namespace, ...flags],
        { input, maxBuffer: 1 << 24, timeout: 180_000 },
      );
      expect(first.stderr.toString()).toBe("");
      expect(first.stdout.toString()).toBe(lines.join("\n") + "\n");
      // A second process over the same namespace prints nothing: every line was acknowledged before it was printed.
      const again = spawnSync(
        process.execPath,
        [CLI, "dedup", "--redis", cluster.urls[1], "--cluster", "--namespace", namespace, ...flags],
        { input, maxBuffer: 1 << 24, timeout: 180_000 },
      );
      expect(again.status).toBe(0);
      expect(again.stdout.toString()).toBe("");
    }
    // Spread: every master holds buckets of the exact seen-set.
    for (const port of cluster.masters())
      expect(cluster.cli(["KEYS", "cs:{cli-cluster0/*"], port).trim().split("\n").length).toBeGreaterThan(500);
    const bad = spawnSync(
      process.execPath,
      [CLI, "dedup", "--redis", `${cluster.urls[0]},notaurl`, "--cluster", "--namespace", "x"],
      { input: "a\n" },
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr.toString()).toMatch(
      /--redis must be Redis URLs of cluster nodes, comma-separated.*got "notaurl"/,
    );
  }, 120_000);

  it("8 concurrent writer processes: every key is new to exactly one of them", async () => {
    const runs = await Promise.all(
      Array.from(
        { length: 8 },
        (_, w) =>
          new Promise<string[]>((resolve, reject) => {
            // Process w adds keys [3000 w, 3000 w + 6000): every key but the first 3,000 in two ranges, each process in its own order.
            const child = spawn(process.execPath, [
              WORKER,
              JSON.stringify(cluster.urls),
              "exact",
              "fleet",
              String(3000 * w),
              String(3000 * w + 6000),
            ]);
            let out = "";
            let err = "";
            child.stdout.on("data", (d) => (out += d));
            child.stderr.on("data", (d) => (err += d));
            child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
          }),
      ),
    );
    const winners = new Map<string, number>();
    for (const fresh of runs) for (const key of fresh) winners.set(key, (winners.get(key) ?? 0) + 1);
    expect(winners.size).toBe(27_000);
    expect([...winners.entries()].filter(([, n]) => n !== 1)).toEqual([]);
  }, 120_000);

  /**
   * Runs `batch` while the first master's replica is paused, kills that master once it holds
   * more than 10 of the batch's keys (its writes never reached a replica), promotes the replica, brings the victim back as a replica,
   * and returns the batch's answers with the count of the victim's keys matching `pattern` at the kill.
   */
  async function killInWaitWindow<T>(
    pattern: string,
    batch: () => Promise<T>,
  ): Promise<{ result: T; onVictim: number }> {
    const synced = () =>
      cluster.masters().every((port) => /connected_slaves:1/.test(cluster.cli(["INFO", "replication"], port)));
    await cluster.settle(() => cluster.masters().length === 3 && synced());
    const victim = cluster.nodes.find((node) => node.port === cluster.masters()[0])!;
    const replica = cluster.nodes.find((node) => node.port === cluster.replicaOf(victim.port))!;
    replica.pause();
    const run = batch();
    // The kill waits for the victim to hold some of the batch (at most 30 s on a loaded machine).
    const held = () => cluster.cli(["KEYS", pattern], victim.port).trim().split("\n").filter(Boolean).length;
    for (let i = 0; i < 300 && held() <= 10; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 200));
    const onVictim = held();
    await victim.kill();
    replica.resume();
    cluster.cli(["CLUSTER", "FAILOVER", "TAKEOVER"], replica.port);
    await new Promise((r) => setTimeout(r, 2_000));
    await victim.restart();
    const result = await run;
    await cluster.settle(
      () =>
        cluster.masters().length === 3 &&
        /master_link_status:up/.test(cluster.cli(["INFO", "replication"], victim.port)),
    );
    return { result, onVictim };
  }

  it("the exact recrawl window: a master killed between a batch's writes and its WAIT (its replica paused): with replicated durability no key reported new is lost, and none is new twice", async () => {
    const options = {
      name: "wait-window",
      ttl: "30d",
      durability: "replicated",
      now: () => Date.parse("2026-06-01T00:00:00Z"),
    } as const;
    const window = await RedisWindowedSeenSet.open(redis, options);
    const keys = urls(2_000, "wait-window");
    const { result: due, onVictim } = await killInWaitWindow("cs:*:ws:*", () => window.addMany(keys));
    // The victim took its share of the batch's shards, which its paused replica never got.
    expect(onVictim).toBeGreaterThan(10);
    const acked = keys.filter((_, i) => due[i] === 1);
    expect(acked.length).toBe(keys.length);
    const reader = await connect();
    try {
      const again = await RedisWindowedSeenSet.open(fromNodeRedis(reader), options);
      expect(acked.length - sum(await again.hasMany(acked))).toBe(0);
      expect(sum(await again.addMany(acked))).toBe(0);
    } finally {
      await reader.close();
    }
  }, 180_000);

  it("the near-duplicate filter: a master killed between a batch's writes and its WAIT: with replicated durability every text answered new is found again, and its near copies answer as in memory", async () => {
    const next = rng(4747);
    const word = () => `v${Math.floor(next() * 1e6).toString(36)}`;
    const bases = Array.from({ length: 300 }, () => Array.from({ length: 60 }, word));
    const texts = bases.map((base) => base.join(" "));
    const copies = bases.map((base) => base.map((w, i) => (i === 30 ? word() : w)).join(" "));
    const options = { name: "wait-nd", items: 10_000, fpRate: 1e-4, durability: "replicated" } as const;
    const filter = await RedisNearDupFilter.open(redis, options);
    const { result: answers, onVictim } = await killInWaitWindow("cs:{wait-nd*", () => filter.addMany(texts));
    expect(onVictim).toBeGreaterThan(10);
    const acked = texts.filter((_, i) => answers[i] === 0);
    expect(acked.length).toBeGreaterThan(295);
    const reader = await connect();
    try {
      const again = await RedisNearDupFilter.open(fromNodeRedis(reader), options);
      expect(acked.length - sum(await again.hasMany(acked))).toBe(0);
      // Near copies answer as the in-memory filter holding the same texts: no band write was lost.
      const local = new NearDupFilter({ items: 10_000, fpRate: 1e-4 });
      local.addMany(acked);
      const copyOfAcked = copies.filter((_, i) => answers[i] === 0);
      expect(await again.hasMany(copyOfAcked)).toEqual(local.hasMany(copyOfAcked));
    } finally {
      await reader.close();
    }
  }, 180_000);

  it("a master killed mid-stream: the client recovers by itself and, with replicated durability, every acknowledged key is still seen", async () => {
    const filter = await RedisBloomFilter.open(redis, {
      name: "failover",
      items: 1_000_000,
      fpRate: 1e-4,
      durability: "replicated",
    });
    const dedup = await RedisDeduplicator.open(redis, { name: "failover-exact", durability: "replicated" });
    const acked: string[] = [];
    const exactAcked: string[] = [];
    const victim = cluster.nodes.find((node) => node.port === cluster.masters()[0])!;
    for (let batch = 0; batch < 60; batch++) {
      // Mid-stream, while batches are in flight; it comes back 4 s later as its replica's replica.
      // Until then the promoted replica has no replica of its own, and replicated writes wait.
      if (batch === 15)
        void victim
          .kill()
          .then(() => new Promise((r) => setTimeout(r, 4_000)))
          .then(() => victim.restart());
      const keys = urls(500, `failover-${batch}`);
      const [fresh, exact] = await Promise.all([filter.addMany(keys), dedup.checkMany(keys)]);
      keys.forEach((key, i) => {
        if (fresh[i] === 1) acked.push(key);
        if (exact.isNew[i] === 1) exactAcked.push(key);
      });
    }
    // Settled: three masters, and the restarted node knows it is now a replica (until it has
    // heard so it still claims its old slots, empty, and a reader asking it would see nothing).
    await cluster.settle(
      () =>
        cluster.masters().length === 3 &&
        /master_link_status:up/.test(cluster.cli(["INFO", "replication"], victim.port)),
    );
    expect(cluster.masters()).not.toContain(victim.port); // its replica was promoted
    expect(acked.length).toBeGreaterThan(29_900);
    expect(exactAcked.length).toBe(30_000);
    // Read back through a fresh client: nothing acknowledged was lost with the old master.
    const reader = await connect();
    try {
      const fresh = fromNodeRedis(reader);
      const again = await RedisBloomFilter.open(fresh, { name: "failover", items: 10, fpRate: 0.1 });
      expect(sum(await again.hasMany(acked))).toBe(acked.length);
      const counts = await Promise.all(
        exactAcked.map((key) => new RedisDeduplicator(fresh, { name: "failover-exact" }).count(key)),
      );
      expect(counts.filter((n) => n < 1)).toEqual([]);
    } finally {
      await reader.close();
    }
  }, 180_000);

  it("dedup --redis --cluster --durability replicated: a master killed mid-run while its replica lags; a second run prints nothing the first printed", async () => {
    const synced = () =>
      cluster.masters().every((port) => /connected_slaves:1/.test(cluster.cli(["INFO", "replication"], port)));
    await cluster.settle(() => cluster.masters().length === 3 && synced());
    const lines = urls(200_000, "cli-failover");
    const input = lines.join("\n") + "\n";
    const head = lines.slice(0, 20_000).join("\n") + "\n";
    const args = [
      CLI,
      "dedup",
      "--redis",
      cluster.urls.join(","),
      "--cluster",
      "--namespace",
      "cli-failover",
      "--durability",
      "replicated",
    ];
    const victim = cluster.nodes.find((node) => node.port === cluster.masters()[0])!;
    const replica = cluster.nodes.find((node) => node.port === cluster.replicaOf(victim.port))!;
    const first = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const proc = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      let failedOver = false;
      proc.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        if (failedOver) return;
        failedOver = true;
        // Once it prints: the replica falls behind, the rest of the input comes, and the master dies
        // with writes the replica never got.
        void (async () => {
          replica.pause();
          proc.stdin.end(lines.slice(20_000).join("\n") + "\n");
          await new Promise((r) => setTimeout(r, 1_500));
          await victim.kill();
          replica.resume();
          cluster.cli(["CLUSTER", "FAILOVER", "TAKEOVER"], replica.port);
          await new Promise((r) => setTimeout(r, 2_000));
          await victim.restart();
        })();
      });
      proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      proc.on("exit", (code) => resolve({ code, stdout, stderr }));
      proc.stdin.on("error", () => undefined);
      proc.stdin.write(head);
    });
    await cluster.settle(
      () =>
        cluster.masters().length === 3 &&
        /master_link_status:up/.test(cluster.cli(["INFO", "replication"], victim.port)),
    );
    expect(cluster.masters()).toContain(replica.port);
    // It may finish or stop with "Redis is unavailable"; either way what it printed stays seen.
    expect([0, 2], first.stderr).toContain(first.code);
    const printed = first.stdout.split("\n").filter(Boolean);
    expect(printed.length).toBeGreaterThan(0);
    const again = spawnSync(process.execPath, args, { input, maxBuffer: 1 << 26, timeout: 120_000 });
    expect(again.status, again.stderr.toString()).toBe(0);
    const reprinted = new Set(again.stdout.toString().split("\n").filter(Boolean));
    expect(printed.filter((line) => reprinted.has(line)).length).toBe(0);
    // Together the two runs printed every line once.
    expect(printed.length + reprinted.size).toBe(lines.length);
  }, 180_000);

  it("slots resharded mid-stream: no error reaches the caller, and nothing acknowledged is lost", async () => {
    const filter = await RedisBloomFilter.open(redis, { name: "reshard", items: 1_000_000, fpRate: 1e-4 });
    const dedup = await RedisDeduplicator.open(redis, { name: "reshard-exact" });
    const masters = cluster.masters();
    const id = (port: number) => cluster.cli(["CLUSTER", "MYID"], port).trim();
    // Slots a node owns, from its CLUSTER NODES line ("0-5460 7000 ..." after the eighth field).
    const slotsOf = (port: number) =>
      cluster
        .cli(["CLUSTER", "NODES"])
        .split("\n")
        .find((line) => line.startsWith(id(port)))!
        .split(" ")
        .slice(8)
        .reduce(
          (total, range) =>
            total + (range.includes("-") ? Number(range.split("-")[1]) - Number(range.split("-")[0]) + 1 : 1),
          0,
        );
    const before = slotsOf(masters[1]);
    // Move 3,000 slots from the first master to the second while the stream runs.
    const reshard = new Promise<void>((resolve, reject) => {
      const child = spawn(
        "redis-cli",
        [
          "--cluster",
          "reshard",
          `127.0.0.1:${masters[0]}`,
          "--cluster-from",
          id(masters[0]),
          "--cluster-to",
          id(masters[1]),
          "--cluster-slots",
          "3000",
          "--cluster-yes",
          "--cluster-pipeline",
          "50",
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let log = "";
      child.stdout.on("data", (d) => (log += d));
      child.stderr.on("data", (d) => (log += d));
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(log.slice(-2000)))));
    });
    let done = false;
    void reshard.finally(() => (done = true));
    const acked: string[] = [];
    let batches = 0;
    while (!done || batches < 20) {
      const keys = urls(500, `reshard-${batches++}`);
      const [fresh, exact] = await Promise.all([filter.addMany(keys), dedup.checkMany(keys)]);
      expect(sum(exact.isNew)).toBe(500);
      keys.forEach((key, i) => fresh[i] === 1 && acked.push(key));
    }
    await reshard;
    expect(slotsOf(masters[1])).toBe(before + 3000);
    expect(sum(await filter.hasMany(acked))).toBe(acked.length);
    // Nothing lost: every key the exact store acknowledged is still there, so a second reference
    // makes its count 2 (3 where a command was resent after a connection reset: the documented
    // at-least-once path, which then reports the key new again; seen 13 of 5,000 in one loaded run).
    const keys = acked.slice(0, 5_000);
    const again = await dedup.checkMany(keys);
    expect(Array.from(again.counts).filter((count) => count < 2)).toEqual([]);
    // The promise: a key is reported new again only when its command was sent again after its
    // reply was lost with a connection the reshard reset (at least once); then its count is at
    // most one too high. Measured 11-13 of 5,000 after a failover; bounded at 2%.
    const renewed = Array.from(again.isNew).flatMap((flag, i) => (flag === 1 ? [i] : []));
    expect(renewed.length).toBeLessThanOrEqual(keys.length / 50);
    expect(renewed.filter((i) => again.counts[i] > 3)).toEqual([]);
    expect(Array.from(again.counts).filter((count) => count > 3)).toEqual([]);
  }, 180_000);
});
