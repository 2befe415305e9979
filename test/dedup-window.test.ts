// `crawlsieve dedup --window` and `crawlsieve forget` against the Map of times of window-model.ts:
// runs replayed a day at a time with --now over a store (--store) and over Redis (--redis), a TTL
// map file, --refresh, forgets between runs; kill -9 of a --store --window run (every line
// printed by one run or the next, a printed line not printed again but for the last batch);
// --stats; bad flags and map files exit 2 naming the value.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rng } from "./helpers.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";
import { D, H, KEYS, Model, ttlVariant, useModelRules } from "./window-model.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = () => mkdtempSync(join(tmpdir(), "cs-dedup-window-"));

function cli(args: string[], input = ""): { code: number | null; out: string; err: string } {
  const run = spawnSync(process.execPath, [CLI, ...args], {
    input,
    encoding: "utf8",
    timeout: 120_000,
    maxBuffer: 1 << 28,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

/** The TTL map of the model as a file: one rule a line, with comments and blank lines. */
function mapFile(where: string): string {
  const { ttlMap } = ttlVariant(true);
  const path = join(where, "ttl.txt");
  const lines = Object.entries(ttlMap).map(([pattern, ttl]) => `${pattern}\t${ttl}   # rule`);
  writeFileSync(path, `# crawl TTLs\n\n${lines.join("\n")}\n`);
  return path;
}

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

for (const backend of ["store", "redis"] as const) {
  for (const refresh of [false, true]) {
    it(`replays days with --now against the model (--${backend}${refresh ? ", --refresh" : ""}), forgets between runs`, () => {
      const where = dir();
      const { rules } = ttlVariant(true);
      useModelRules(rules);
      const model = new Model(refresh);
      const random = rng(refresh ? 5 : 6);
      const place =
        backend === "store"
          ? ["--store", join(where, "store")]
          : ["--redis", server.url, "--namespace", `replay-${refresh}-${Date.now()}`];
      let now = Date.UTC(2026, 2, 1) / 1000;
      for (let run = 0; run < 8; run++) {
        if (run === 4) {
          const forgot = cli(["forget", ...place, "--host", "b.example", "--now", String(now * 1000)]);
          expect(forgot.code, forgot.err).toBe(0);
          model.tombstones.push(["b.example", now]);
        }
        const lines = Array.from({ length: 200 }, () => KEYS[Math.floor(random() * (KEYS.length - 1))]);
        const flags = ["dedup", "--window", "1d", "--ttl-map", mapFile(where), ...place];
        const args = [...flags, ...(refresh ? ["--refresh"] : []), "--now", new Date(now * 1000).toISOString()];
        const result = cli(args, `${lines.join("\n")}\n`);
        expect(result.code, result.err).toBe(0);
        const want = model.add(lines, now);
        expect(result.out, `run ${run}`).toBe(
          lines
            .filter((_, i) => want[i] === 1)
            .map((l) => `${l}\n`)
            .join(""),
        );
        now += [H, 2 * H, D, 90, 3 * D][run % 5];
      }
    }, 120_000);
  }
}

describe("dedup --window", () => {
  it("in memory: a line is printed once within a run, its repeats dropped, and --stats says so", () => {
    const where = dir();
    const lines = ["https://news.example/a", "https://b.example/x", "https://news.example/a", "x", "x"];
    const result = cli(["dedup", "--window", "7d", "--ttl-map", mapFile(where), "--stats"], `${lines.join("\n")}\n`);
    expect(result.code, result.err).toBe(0);
    expect(result.out).toBe("https://news.example/a\nhttps://b.example/x\nx\n");
    const stats = JSON.parse(result.err.trim().split("\n").pop()!);
    expect(stats).toMatchObject({ filter: "window", lines: 5, unique: 3, duplicates: 2, dueAgain: 0, held: 3 });
  });

  it("--stats counts the lines due again (held, their TTL passed), beside new and repeated", () => {
    const store = join(dir(), "s");
    const input = "https://news.example/a\nhttps://archive.example/b\n";
    cli(
      ["dedup", "--window", "1d", "--ttl-map", mapFile(dir()), "--store", store, "--now", "2026-01-01T00:00:00Z"],
      input,
    );
    const result = cli(
      [
        "dedup",
        "--window",
        "1d",
        "--ttl-map",
        mapFile(dir()),
        "--store",
        store,
        "--now",
        "2026-01-01T01:00:00Z",
        "--stats",
      ],
      input,
    );
    expect(result.out).toBe("https://news.example/a\n");
    expect(JSON.parse(result.err.trim())).toMatchObject({
      filter: "store-window",
      unique: 1,
      duplicates: 1,
      dueAgain: 1,
    });
  });

  it("kill -9 of a --store --window run: the rerun prints every line no run printed, and none the killed run printed but its last batch", async () => {
    const store = join(dir(), "s");
    const distinct = Array.from({ length: 400_000 }, (_, i) => `https://site${i % 97}.example/page/${i}`);
    const input = `${distinct.join("\n")}\n`;
    const first = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [CLI, "dedup", "--window", "30d", "--store", store]);
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        if (out.length > 4_000_000) child.kill("SIGKILL");
      });
      child.on("exit", () => resolve(out));
      child.stdin.on("error", () => undefined);
      child.stdin.end(input);
    });
    const printedFirst = first.split("\n").slice(0, -1); // the last piece may be cut
    expect(printedFirst.length).toBeGreaterThan(10_000);
    const second = cli(["dedup", "--window", "30d", "--store", store], input);
    expect(second.code, second.err).toBe(0);
    const printedSecond = second.out.split("\n").filter(Boolean);
    expect(new Set([...printedFirst, ...printedSecond])).toEqual(new Set(distinct));
    const firstSet = new Set(printedFirst);
    const again = printedSecond.filter((line) => firstSet.has(line));
    // Only lines the killed run recorded and had not confirmed printed come again: one batch at most.
    expect(again.length).toBeLessThanOrEqual(70_000);
    if (again.length > 0) expect(second.err).toMatch(/a run killed before printing them had recorded/);
  }, 120_000);

  it("refuses bad windows, map files, times and option mixes with exit 2 and one line naming them", () => {
    const where = dir();
    const bad = join(where, "bad.txt");
    writeFileSync(bad, "a.example 1d\n# fine\nb.example sometimes\n");
    const cases: [string[], RegExp][] = [
      [["--window", "1x"], /--window must be a count and a unit.*"1x"/],
      [["--window", "1.5s"], /--window must be/],
      [["--window", "1d", "--ttl-map", bad], /bad\.txt:3 must be a rule.*"b\.example sometimes"/],
      [["--window", "1d", "--ttl-map", join(where, "missing.txt")], /--ttl-map .*missing\.txt cannot be read/],
      [["--window", "1d", "--now", "yesterday"], /--now must be an ISO 8601 time.*"yesterday"/],
      [["--window", "1d", "--now", "2026-01-01T00:00:00"], /--now must be an ISO 8601 time with its zone/],
      [["--approx", "--window", "1d", "--refresh"], /--refresh is for the exact window/],
      [["--approx", "--window", "never"], /--window never needs the exact window/],
      [["--window", "1d", "--memory", "64MiB"], /--memory is for exact dedup .*--window/],
      [["--window", "1d", "--hash", "md5"], /--window keeps XXH3-128/],
      [["--refresh"], /--refresh, --ttl-map and --now are for --window/],
    ];
    for (const [args, message] of cases) {
      const result = cli(["dedup", ...args], "a\n");
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.err, args.join(" ")).toMatch(message);
      expect(result.err.trim().split("\n")).toHaveLength(1);
    }
    // A store of another kind is refused, and forget never makes a store.
    const plain = join(where, "plain");
    expect(cli(["dedup", "--store", plain], "a\n").code).toBe(0);
    expect(cli(["dedup", "--window", "1d", "--store", plain], "a\n").err).toMatch(/holds another store/);
    const forget = cli(["forget", "--store", join(where, "nothing"), "--host", "a.example"]);
    expect(forget.code).toBe(2);
    expect(forget.err).toMatch(/holds no windowed store/);
    expect(cli(["forget", "--store", plain, "--host", "a.example", "--prefix", "https://a.example/"]).err).toMatch(
      /one of --host HOST and --prefix URL/,
    );
  });

  it("forget --json says what it did", () => {
    const store = join(dir(), "s");
    cli(["dedup", "--window", "1d", "--store", store], "https://a.example/1\n");
    const result = cli([
      "forget",
      "--store",
      store,
      "--prefix",
      "https://a.example/",
      "--now",
      "2026-05-01T00:00:00Z",
      "--json",
    ]);
    expect(result.code, result.err).toBe(0);
    expect(JSON.parse(result.out)).toEqual({
      command: "forget",
      store,
      prefix: "https://a.example/",
      at: "2026-05-01T00:00:00.000Z",
    });
  });
});
