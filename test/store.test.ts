// The on-disk exact store (LMDB): persistence, resume after kill -9, and a distrusted filter.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openLmdbStore, openSeenSet, StoreDeduplicator } from "../build/js/index.node.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const temp = () => mkdtempSync(join(tmpdir(), "crawlsieve-store-"));

function randomKeys(seed: number, count: number, distinct: number): string[] {
  const next = rng(seed);
  return Array.from({ length: count }, () => `https://s${Math.floor(next() * 40)}.example/p/${Math.floor(next() * distinct)}`);
}

describe("StoreDeduplicator on LMDB", () => {
  it("equals a Set across close and reopen, reusing the saved filter", () => {
    const dir = temp();
    const keys = randomKeys(1, 40_000, 15_000);
    const seen = new Set<string>();
    const expected = keys.map((k) => (seen.has(k) ? 0 : (seen.add(k), 1)));
    let dedup = new StoreDeduplicator(openLmdbStore(dir), { items: 15_000 });
    const first = dedup.checkMany(keys.slice(0, 20_000));
    dedup.close();
    dedup = new StoreDeduplicator(openLmdbStore(dir), { items: 15_000 });
    expect(dedup.rebuilt).toBe(false);
    const second = dedup.checkMany(keys.slice(20_000));
    expect([...first.isNew, ...second.isNew]).toEqual(expected);
    expect(dedup.size).toBe(seen.size);
    dedup.close();
  });

  it("rebuilds a counting filter that does not match the store (not closed, or corrupted)", () => {
    const dir = temp();
    const store = openLmdbStore(dir);
    const dedup = new StoreDeduplicator(store, { items: 1000 });
    dedup.checkMany(["a", "b", "c"]);
    store.close(); // no save: the filter on disk (none) does not match the store's epoch
    const reopened = new StoreDeduplicator(openLmdbStore(dir), { items: 1000 });
    expect(reopened.rebuilt).toBe(true);
    expect(Array.from(reopened.checkMany(["a", "b", "c", "d"]).isNew)).toEqual([0, 0, 0, 1]);
    reopened.close();
    // More keys than one rebuild batch (4,096), the store closed unsaved again: a batch left out of
    // the rebuilt filter would report its keys new.
    const many = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
    const manyStore = openLmdbStore(dir);
    expect(new StoreDeduplicator(manyStore, { items: 1000 }).checkMany(many).isNew.every((x) => x === 1)).toBe(true);
    manyStore.close();
    const rebuiltMany = new StoreDeduplicator(openLmdbStore(dir), { items: 1000 });
    expect(rebuiltMany.rebuilt).toBe(true);
    expect(rebuiltMany.checkMany(many).isNew.some((x) => x === 1)).toBe(false);
    rebuiltMany.close();
    writeFileSync(join(dir, "counting-filter.csiv"), Buffer.from("garbage that is not a filter"));
    const distrusting = new StoreDeduplicator(openLmdbStore(dir), { items: 1000 });
    expect(distrusting.rebuilt).toBe(true);
    expect(Array.from(distrusting.checkMany(["d", "e"]).isNew)).toEqual([0, 1]);
    distrusting.close();
  });
});

describe("crawlsieve dedup --store", () => {
  it("resumes after kill -9 without reprinting anything it printed", async () => {
    const dir = temp();
    const input = join(dir, "input.txt");
    const lines = randomKeys(9, 400_000, 150_000);
    writeFileSync(input, lines.join("\n") + "\n");
    const store = join(dir, "seen");
    // First run: killed with SIGKILL once some output has arrived.
    const printed1 = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [CLI, "dedup", "--store", store, input]);
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.length > 200_000) child.kill("SIGKILL");
      });
      // "close": everything the child wrote before it died is read, not only what had arrived.
      child.on("close", () => resolve(out));
    });
    const first = printed1.slice(0, printed1.lastIndexOf("\n") + 1).split("\n").filter(Boolean);
    expect(first.length).toBeGreaterThan(1000);
    const second = spawnSync(process.execPath, [CLI, "dedup", "--store", store, "--stats", input], { maxBuffer: 1 << 28 });
    expect(second.status, second.stderr.toString()).toBe(0);
    const secondLines = second.stdout.toString().split("\n").filter(Boolean);
    const stats = JSON.parse(second.stderr.toString());
    expect(stats.rebuiltFilter).toBe(true);
    const firstSet = new Set(first);
    for (const line of secondLines) expect(firstSet.has(line), line).toBe(false);
    const all = new Set(lines);
    const unique = [...all];
    const printed = new Set([...first, ...secondLines]);
    for (const line of printed) expect(all.has(line), line).toBe(true);
    expect(printed.size).toBe(first.length + secondLines.length);
    // Committed but not yet printed when killed: at most the one batch in flight (4096 lines).
    const missing = unique.filter((u) => !printed.has(u));
    expect(missing.length).toBeLessThanOrEqual(4096);
    expect(printed.size + missing.length).toBe(unique.length);
  });

  it("shares one store between concurrent processes: no line printed twice, none lost, later runs trust no stale filter", async () => {
    const dir = temp();
    const store = join(dir, "seen");
    // Two inputs over one key space, each in its own order: about half of each one's lines are the other's too.
    const a = randomKeys(21, 150_000, 120_000);
    const b = randomKeys(22, 150_000, 120_000);
    writeFileSync(join(dir, "a.txt"), a.join("\n") + "\n");
    writeFileSync(join(dir, "b.txt"), b.join("\n") + "\n");
    const run = (file: string) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, "dedup", "--store", store, "--stats", join(dir, file)]);
        let out = "";
        let err = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
        child.on("close", (code) => resolve({ code, out, err }));
      });
    const [first, second] = await Promise.all([run("a.txt"), run("b.txt")]);
    expect(first.code, first.err).toBe(0);
    expect(second.code, second.err).toBe(0);
    const printedA = first.out.split("\n").filter(Boolean);
    const printedB = second.out.split("\n").filter(Boolean);
    const union = new Set([...a, ...b]);
    const inA = new Set(printedA);
    expect(printedB.filter((line) => inA.has(line))).toEqual([]);
    expect(inA.size + new Set(printedB).size).toBe(union.size);
    // The runs did interleave: otherwise this test shows nothing about concurrent writers.
    expect([JSON.parse(first.err).filterCoversStore, JSON.parse(second.err).filterCoversStore]).toContain(false);
    // A third run alone over both inputs must print nothing: every line was printed before.
    const third = spawnSync(process.execPath, [CLI, "dedup", "--store", store, "--stats", join(dir, "a.txt"), join(dir, "b.txt")], { maxBuffer: 1 << 26 });
    expect(third.status, third.stderr.toString()).toBe(0);
    expect(third.stdout.toString()).toBe("");
    expect(JSON.parse(third.stderr.toString()).stored).toBe(union.size);
  });

  it("flushes each commit to disk before printing its lines; durable: false flushes nothing (strace)", () => {
    const dir = temp();
    const input = join(dir, "input.txt");
    writeFileSync(input, randomKeys(5, 30_000, 30_000).join("\n") + "\n");
    const syncsBeforeEachPrint = (args: string[]) => {
      const trace = join(dir, `trace-${args.length}.txt`);
      // Output to a file: a pipe would split one printed batch into several writes.
      const out = openSync(join(dir, "out.txt"), "w");
      const result = spawnSync("strace", ["-f", "-e", "trace=fdatasync,fsync,msync,write", "-o", trace, process.execPath, ...args], { stdio: ["ignore", out, "pipe"] });
      closeSync(out);
      expect(result.status, result.stderr.toString()).toBe(0);
      const counts: number[] = [];
      let syncs = 0;
      for (const line of readFileSync(trace, "utf8").split("\n")) {
        if (/ (fdatasync|fsync|msync)\(/.test(line)) syncs++;
        else if (/ write\(1, ".+/.test(line)) {
          counts.push(syncs);
          syncs = 0;
        }
      }
      return counts;
    };
    const printed = syncsBeforeEachPrint([CLI, "dedup", "--store", join(dir, "durable"), input]);
    expect(printed.length).toBeGreaterThanOrEqual(7); // 30,000 lines in batches of 4,096
    expect(printed.filter((syncs) => syncs === 0)).toEqual([]);
    const script = `import { openLmdbStore, StoreDeduplicator, initSync } from ${JSON.stringify(new URL("../build/js/index.node.js", import.meta.url).href)};
      initSync();
      const dedup = new StoreDeduplicator(openLmdbStore(${JSON.stringify(join(dir, "fast"))}, { durable: false }), { items: 1000 });
      for (let i = 0; i < 5; i++) { dedup.checkMany(["k" + i]); process.stdout.write("k" + i + "\\n"); }
      dedup.close();`;
    const fast = syncsBeforeEachPrint(["--input-type=module", "-e", script]);
    expect(fast).toEqual([0, 0, 0, 0, 0]);
  });

  it("refuses a store directory it cannot use, and a data file that is not LMDB, by name", () => {
    const result = spawnSync(process.execPath, [CLI, "dedup", "--store", "/proc/crawlsieve-nope"], { input: "a\n", timeout: 20_000 });
    expect(result.status).toBe(2);
    expect(result.stderr.toString()).toMatch(/store directory "\/proc\/crawlsieve-nope" cannot be used/);
    const dir = temp();
    writeFileSync(join(dir, "fingerprints.mdb"), Buffer.alloc(8192, 0x5a));
    expect(() => openLmdbStore(dir)).toThrow(/is not an LMDB fingerprint store/);
  });

  it("creates missing parent directories, and names a store file that is a directory", async () => {
    const base = temp();
    const nested = join(base, "new", "sub");
    const result = spawnSync(process.execPath, [CLI, "dedup", "--store", nested], { input: "a\nb\na\n", timeout: 20_000 });
    expect(result.stderr.toString()).toBe("");
    expect(result.stdout.toString()).toBe("a\nb\n");
    const seen = await openSeenSet({ backend: "lmdb", path: join(base, "a", "b", "c") });
    expect(Array.from(await seen.addMany(["x", "x"]))).toEqual([1, 0]);
    await seen.close();
    const odd = temp();
    mkdirSync(join(odd, "fingerprints.mdb"));
    const named = spawnSync(process.execPath, [CLI, "dedup", "--store", odd], { input: "a\n", timeout: 20_000 });
    expect(named.status).toBe(2);
    expect(named.stderr.toString()).toBe(`crawlsieve: ${join(odd, "fingerprints.mdb")} is not a file (a directory or a device where the store keeps its fingerprints); move it away or use another --store directory\n`);
  });

  it("refuses --store with --approx", () => {
    const result = spawnSync(process.execPath, [CLI, "dedup", "--approx", "--store", temp()], { input: "a\n" });
    expect(result.status).toBe(2);
    expect(result.stderr.toString()).toMatch(/--store is for exact dedup/);
  });
});
