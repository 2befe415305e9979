// dedup --redis URL --dupefilter KEY (issue 49, item 2): the command shares a Scrapy-Redis fleet's
// dupefilter SET. The fleet's side is made here as scrapy-redis 0.8's RFPDupeFilter makes it,
// with nothing of crawlsieve: SHA-1 (node:crypto) of json.dumps({"body": "", "method": "GET",
// "url": canonicalize_url(url)}, sort_keys=True), the canonical URL taken from the real w3lib
// 2.4.1's answers (test/fixtures/urls). The command must skip what the fleet has, print the rest
// once, and leave the fleet's fingerprints of what it printed in the SET.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { createClient } from "redis";
import { describe, expect, it } from "vitest";
import { redisForFile } from "./support/redis-server.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const KEY = "spider:dupefilter";

/** w3lib 2.4.1's canonical form of each source URL (default arguments), ASCII ones without a line break. */
const cases = (
  JSON.parse(gunzipSync(readFileSync(new URL("./fixtures/urls/w3lib-2.4.1.json.gz", import.meta.url))).toString("utf8"))
    .cases as [string, number, string | null][]
)
  .filter(
    ([source, kwargs, expected]) =>
      kwargs === 0 && typeof expected === "string" && !/[\r\n]/.test(source) && /^[\x21-\x7e]+$/.test(expected),
  )
  .slice(0, 3_000);

/** scrapy-redis 0.8's fingerprint of a GET request whose canonical URL is `canonical` (json.dumps of ASCII: JSON.stringify's text, with ", " and ": "). */
const fleetFingerprint = (canonical: string) =>
  createHash("sha1")
    .update(`{"body": "", "method": "GET", "url": ${JSON.stringify(canonical)}}`)
    .digest("hex");

const server = redisForFile();

describe("dedup --redis --dupefilter", () => {
  it("skips what a Scrapy-Redis fleet recorded, prints each other URL once, and records it as the fleet would", async () => {
    expect(cases.length).toBeGreaterThan(1_000);
    const redis = server();
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      // The fleet saw every third URL already.
      const fleet = new Set(cases.filter((_, i) => i % 3 === 0).map(([, , canonical]) => fleetFingerprint(canonical!)));
      await client.sAdd(KEY, [...fleet]);
      const lines = [...cases, ...cases.slice(0, 500)].map(([source]) => source);
      const file = join(mkdtempSync(join(tmpdir(), "cs-dupefilter-")), "urls.txt");
      writeFileSync(file, lines.join("\n") + "\n");
      const run = spawnSync(
        process.execPath,
        [CLI, "dedup", "--redis", redis.url, "--dupefilter", KEY, "--stats", file],
        { maxBuffer: 1 << 26, timeout: 120_000 },
      );
      expect(run.status, run.stderr.toString()).toBe(0);
      const seen = new Set(fleet);
      const want = cases
        .filter(
          ([, , canonical]) =>
            !seen.has(fleetFingerprint(canonical!)) && (seen.add(fleetFingerprint(canonical!)), true),
        )
        .map(([source]) => `${source}\n`);
      expect(run.stdout.toString()).toBe(want.join(""));
      expect(JSON.parse(run.stderr.toString().trim()).filter).toBe("scrapy-redis-dupefilter");
      expect(new Set(await client.sMembers(KEY))).toEqual(seen);
    } finally {
      await client.close();
    }
  }, 180_000);

  it("refuses options that do not fit a dupefilter, naming them", () => {
    for (const extra of [["--namespace", "n"], ["--approx"], ["--canonicalize"], ["--window", "7d"]]) {
      const run = spawnSync(
        process.execPath,
        [CLI, "dedup", "--redis", "redis://127.0.0.1:1", "--dupefilter", KEY, ...extra],
        { input: "x\n" },
      );
      expect(run.status).toBe(2);
      expect(run.stderr.toString()).toMatch(/^crawlsieve: --dupefilter is a Scrapy-Redis SET.*\n$/);
    }
    const alone = spawnSync(process.execPath, [CLI, "dedup", "--dupefilter", KEY], { input: "x\n" });
    expect(alone.stderr.toString()).toContain("need --redis");
  });
});
