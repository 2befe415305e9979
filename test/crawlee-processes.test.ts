// crawlsieve/crawlee across processes: a crawler killed with SIGKILL mid-crawl and run again over
// the same queue storage and seen-set (lmdb, Redis), and a fleet of three crawler processes, each
// with its own queue, sharing one Redis seen-set. The crawlers are test/support/crawlee-child.mjs;
// what they fetch is counted by the local site, keyed by Crawlee's own Request.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Request } from "crawlee";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSite, type CrawlSite } from "./support/crawl-site.js";
import { freePorts } from "./support/local-servers.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const child = new URL("./support/crawlee-child.mjs", import.meta.url).pathname;
let site: CrawlSite;
let redis: RedisServer;
let onHit: (entry: string) => void = () => undefined;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-crawlee-proc-"));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  // No redirects and no failing pages here: every page's count is 1, so any extra fetch shows.
  [site, redis] = await Promise.all([
    startSite({
      pages: 20,
      navLinks: 200,
      delayMs: 15,
      redirects: false,
      failing: false,
      onRequest: (entry) => onHit(entry),
    }),
    startRedis(),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([site?.close(), redis?.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const crawleeKey = (url: string) => new Request({ url }).uniqueKey;

/** The hits of a site (the shared one by default) since its last reset, by Crawlee key. */
function hitsByKey(on: CrawlSite = site): Map<string, number> {
  const out = new Map<string, number>();
  for (const [entry, count] of on.hits) {
    const key = crawleeKey(`${on.origin}${entry.split(" ")[1]}`);
    out.set(key, (out.get(key) ?? 0) + count);
  }
  return out;
}

/** Every page a site (the shared one by default) links, by Crawlee key. */
const allKeys = (on: CrawlSite = site) => new Set(on.slots().map((s) => crawleeKey(new URL(s, `${on.origin}/`).href)));

/** Runs the child crawler; resolves with its exit code or signal and what it printed. */
function runChild(
  options: object,
  killAfterHits?: number,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [child, JSON.stringify(options)], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    if (killAfterHits !== undefined) {
      let seen = 0;
      onHit = () => {
        if (++seen === killAfterHits) proc.kill("SIGKILL");
      };
    }
    proc.on("exit", (code, signal) => {
      onHit = () => undefined;
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);

describe.each(["lmdb", "redis"] as const)("kill -9 mid-crawl, then a rerun (%s seen-set)", (backend) => {
  it("fetches no acknowledged page twice, skips none, and acknowledges each page once", async () => {
    const dir = tempDir();
    const seen =
      backend === "lmdb"
        ? { backend, path: join(dir, "seen") }
        : { backend, url: redis.url, name: `killed-${Math.random()}` };
    const options = {
      storage: join(dir, "storage"),
      seen,
      start: [`${site.origin}/`],
      concurrency: 4,
      lockSecs: 3,
      doneLog: join(dir, "done-1.log"),
    };
    site.reset();
    const first = await runChild(options, 12);
    expect(first.signal, first.stderr).toBe("SIGKILL");
    const hits1 = hitsByKey();
    const done1 = lines(options.doneLog);
    expect(hits1.size).toBeGreaterThanOrEqual(12);
    expect(hits1.size).toBeLessThan(allKeys().size);

    site.reset();
    // The killed run's locks lapse after its 3 s; the rerun's own last longer, so that a page it is
    // still fetching on a loaded machine is not handed out again when 3 s have passed.
    const second = await runChild({ ...options, lockSecs: 60, doneLog: join(dir, "done-2.log") });
    expect(second.code, second.stderr).toBe(0);
    const hits2 = hitsByKey();
    const done2 = lines(join(dir, "done-2.log"));

    // Skips none: every page fetched in one run or the other.
    expect(new Set([...hits1.keys(), ...hits2.keys()])).toEqual(allKeys());
    // No acknowledged page fetched again; a page fetched twice was one in flight at the kill.
    for (const key of done1) expect(hits2.has(key), key).toBe(false);
    for (const [key, count] of hits2) {
      expect(count, key).toBe(1);
      if (hits1.has(key)) expect(done1, key).not.toContain(key);
    }
    for (const count of hits1.values()) expect(count).toBe(1);
    // Every page acknowledged exactly once over both runs, but for a page whose marking was under
    // way at the kill: the queue may have stored "handled" before the child could write its
    // acknowledgement. Such a page was fetched once, in the first run only, and is not fetched again.
    const marking1 = new Set(lines(`${options.doneLog}.marking`));
    const acknowledged = new Set([...done1, ...done2]);
    const cutOff = [...allKeys()].filter((key) => !acknowledged.has(key));
    for (const key of cutOff) {
      expect(marking1.has(key) && !done1.includes(key), `${key}: unacknowledged and not being marked at the kill`).toBe(
        true,
      );
      expect(hits1.get(key), key).toBe(1);
      expect(hits2.has(key), key).toBe(false);
    }
    expect(cutOff.length).toBeLessThanOrEqual(options.concurrency);
    expect([...done1, ...done2, ...cutOff].sort()).toEqual([...allKeys()].sort());
  }, 240_000);
});

describe("a fleet of three crawler processes, each with its own queue, sharing one Redis seen-set", () => {
  it("fetches each page once across the fleet", async () => {
    const dir = tempDir();
    const name = `fleet-${Math.random()}`;
    site.reset();
    const runs = await Promise.all(
      [1, 2, 3].map((i) =>
        runChild({
          seen: { backend: "redis", url: redis.url, name },
          commit: "on-check",
          resume: "keep",
          queue: `fleet-${i}`,
          start: [`${site.origin}/p/${i}`],
          concurrency: 4,
          doneLog: join(dir, `done-${i}.log`),
        }),
      ),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const hits = hitsByKey();
    expect(new Set(hits.keys())).toEqual(allKeys());
    for (const [key, count] of hits) expect(count, key).toBe(1);
    // Together they acknowledged each page once. (Which process gets which page is a race: with a
    // queue per process, the first to enqueue the navigation block claims the pages it links.)
    const done = [1, 2, 3].map((i) => lines(join(dir, `done-${i}.log`)));
    expect(done.flat().sort()).toEqual([...allKeys()].sort());
  }, 240_000);
});

describe("a 12 s Redis stall mid-crawl", () => {
  /**
   * A slower site of its own whose requests stop Redis for 12 s (past the client's 10 s deadline)
   * at the first one after any of `commitLogs` exists: once the first keys were committed (the
   * children note each commit), links to those pages must be asked of Redis.
   */
  async function stallingSite(commitLogs: string[]) {
    let stalled = false;
    const slow = await startSite({
      pages: 20,
      navLinks: 200,
      delayMs: 150,
      redirects: false,
      failing: false,
      onRequest: () => {
        if (!stalled && commitLogs.some((file) => existsSync(file))) {
          stalled = true;
          redis.pause();
          setTimeout(() => redis.resume(), 12_000);
        }
      },
    });
    const byKey = () => hitsByKey(slow);
    const all = () => allKeys(slow);
    const close = async () => {
      redis.resume();
      await slow.close();
    };
    return { slow, stalled: () => stalled, byKey, all, close };
  }

  it("the crawl goes on after it: every page fetched once and acknowledged", async () => {
    const dir = tempDir();
    const commitLog = join(dir, "commits.log");
    const site = await stallingSite([commitLog]);
    try {
      const run = await runChild({
        seen: { backend: "redis", url: redis.url, name: `stall-${Math.random()}` },
        start: [`${site.slow.origin}/`],
        concurrency: 4,
        doneLog: join(dir, "done.log"),
        commitLog,
      });
      expect(site.stalled()).toBe(true);
      expect(run.code, run.stderr).toBe(0);
    } finally {
      await site.close();
    }
    const byKey = site.byKey();
    expect(new Set(byKey.keys())).toEqual(site.all());
    for (const [key, count] of byKey) expect(count, key).toBe(1);
    expect(lines(join(dir, "done.log")).sort()).toEqual([...site.all()].sort());
  }, 240_000);

  it("a fleet of three (on-check) goes through it: every page fetched, by two processes only where a claim's reply was lost", async () => {
    const dir = tempDir();
    const name = `fleet-stall-${Math.random()}`;
    const commitLogs = [1, 2, 3].map((i) => join(dir, `commits-${i}.log`));
    const site = await stallingSite(commitLogs);
    let runs: Awaited<ReturnType<typeof runChild>>[];
    try {
      runs = await Promise.all(
        [1, 2, 3].map((i) =>
          runChild({
            seen: { backend: "redis", url: redis.url, name },
            commit: "on-check",
            resume: "keep",
            queue: `fleet-${i}`,
            start: [`${site.slow.origin}/p/${i}`],
            concurrency: 4,
            doneLog: join(dir, `done-${i}.log`),
            commitLog: commitLogs[i - 1],
          }),
        ),
      );
      expect(site.stalled()).toBe(true);
    } finally {
      await site.close();
    }
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const uncertain = runs.reduce((sum, run) => sum + JSON.parse(run.stdout.trim().split("\n").pop()!).uncertain, 0);
    const byKey = site.byKey();
    // None lost: every page fetched and acknowledged by some process.
    expect(new Set(byKey.keys())).toEqual(site.all());
    const done = [1, 2, 3].flatMap((i) => lines(join(dir, `done-${i}.log`)));
    expect(new Set(done)).toEqual(site.all());
    // A page fetched twice is one a lost claim reply let through (at least once, never by none).
    const extra = [...byKey.values()].reduce((sum, count) => sum + count - 1, 0);
    expect(extra).toBeLessThanOrEqual(uncertain);
  }, 240_000);
});

describe("examples/crawl/crawlee.js", () => {
  it("fetches every page of the offline docs site once, and nothing on a second run over the same store", async () => {
    const dir = tempDir();
    // A fixed port for both runs (the seen-set on disk holds URLs with it): a free one, found first.
    const [port] = await freePorts(1);
    const example = new URL("../examples/crawl/crawlee.js", import.meta.url).pathname;
    const run = () => {
      const result = spawnSync(process.execPath, [example, dir, "100", String(port)], {
        encoding: "utf8",
        timeout: 120_000,
      });
      expect(result.status, result.stderr).toBe(0);
      return JSON.parse(result.stdout.trim().split("\n").pop()!);
    };
    const first = run();
    expect([first.sitePages, first.fetched, first.fetchedTwice, first.forwarded]).toEqual([100, 100, 0, 100]);
    const second = run();
    expect([second.fetched, second.forwarded, second.dropped]).toEqual([0, 0, 1]);
  }, 120_000);
});
