// Issue 30, item 6: what reads a line whole, as a URL or a record (canonicalize, dedup
// --canonicalize, --field, --json-key, and the keyed seen-sets --store and --save-filter), takes
// lines up to 64 MiB. A longer one is a typed error naming file, line and limit, exit 2, raised as
// soon as the line passes the limit: /dev/zero, one endless line, grew these commands until the
// OOM killer. A line of exactly 64 MiB (and its "\r\n") is still taken.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exited, watchPeakRss } from "./support/peak-rss.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const MiB = 1 << 20;
const LIMIT = 64 * MiB;
const dir = mkdtempSync(join(tmpdir(), "cs-line-limit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file of two short records, then a line of `length` bytes of "a" (as a URL, a field, a JSON value), then one more. */
function withLongLine(name: string, length: number, json: boolean): string {
  const path = join(dir, name);
  const fd = openSync(path, "w");
  const head = json
    ? '{"url":"http://a.example/1"}\n{"url":"http://b.example/"}\n{"url":"'
    : "http://a.example/1\tx\nhttp://b.example/\ty\n";
  writeSync(fd, head);
  // The JSON line's frame counts in its length.
  const fill = Buffer.alloc(MiB, 0x61);
  let left = length - (json ? '{"url":"'.length + '"}'.length : 0);
  while (left > 0) left -= writeSync(fd, fill, 0, Math.min(MiB, left));
  writeSync(fd, json ? '"}\r\n{"url":"http://c.example/"}\n' : "\r\nhttp://c.example/\tz\n");
  closeSync(fd);
  return path;
}

const over = withLongLine("over.txt", LIMIT + 1, false);
const overJson = withLongLine("over.jsonl", LIMIT + 1, true);

const keyed =
  "a line read whole by dedup --canonicalize, --field, --json-key, --redis or --save-filter (plain dedup, dedup --store and dedup --approx take lines of any length)";
/** Each entry point once (the keyed options share one reader): from a file, from a pipe (stdin), or both. */
const COMMANDS: [string, string[], string, string, ("file" | "pipe")[]][] = [
  ["canonicalize", ["canonicalize"], over, "a line read whole by canonicalize", ["file", "pipe"]],
  ["dedup --json-key url", ["dedup", "--json-key", "url"], overJson, keyed, ["pipe"]],
  ["dedup --canonicalize --store", ["dedup", "--canonicalize", "--store", join(dir, "store")], over, keyed, ["file"]],
];

describe("a line past 64 MiB where a line is read whole", () => {
  it.each(COMMANDS)(
    "%s: exit 2 and one line naming the file, the line and the limit",
    (_, args, file, what, ways) => {
      if (ways.includes("file")) {
        const named = spawnSync(process.execPath, [CLI, ...args, file], { maxBuffer: 1 << 20, timeout: 180_000 });
        expect({ code: named.status, stderr: named.stderr.toString() }).toEqual({
          code: 2,
          stderr: `crawlsieve: ${file}:3: the line is longer than 64 MiB, the limit of ${what}\n`,
        });
      }
      if (ways.includes("pipe")) {
        const piped = spawnSync("sh", ["-c", `cat "$FILE" | "$NODE" "$CLI" "$@"`, "sh", ...args], {
          env: { ...process.env, FILE: file, NODE: process.execPath, CLI },
          maxBuffer: 1 << 20,
          timeout: 180_000,
        });
        expect({ code: piped.status, stderr: piped.stderr.toString() }).toEqual({
          code: 2,
          stderr: `crawlsieve: stdin:3: the line is longer than 64 MiB, the limit of ${what}\n`,
        });
      }
    },
    180_000,
  );

  it("dedup --field: the limit is 64 MiB exactly: a field of 64 MiB + 1 bytes is an error, one of 64 MiB (with its \\r\\n) is taken", () => {
    const named = spawnSync(process.execPath, [CLI, "dedup", "--field", "1", over], {
      maxBuffer: 1 << 20,
      timeout: 180_000,
    });
    expect({ code: named.status, stderr: named.stderr.toString() }).toEqual({
      code: 2,
      stderr: `crawlsieve: ${over}:3: the line is longer than 64 MiB, the limit of ${keyed}\n`,
    });
    const path = withLongLine("at-limit.txt", LIMIT, false);
    // Output to a file: 64 MiB through a pipe into this process would cost more than the run.
    const out = openSync(join(dir, "at-limit.out"), "w");
    const run = spawnSync(process.execPath, [CLI, "dedup", "--field", "1", path], {
      stdio: ["ignore", out, "pipe"],
      timeout: 180_000,
    });
    closeSync(out);
    expect(run.status, run.stderr.toString()).toBe(0);
    expect(statSync(join(dir, "at-limit.out")).size).toBe(
      LIMIT + 2 + "http://a.example/1\tx\nhttp://b.example/\ty\n".length + "http://c.example/\tz\n".length,
    );
  }, 180_000);

  it.each([
    ["canonicalize", ["canonicalize"], "a line read whole by canonicalize"],
    ["dedup --canonicalize", ["dedup", "--canonicalize"], keyed],
    ["dedup --approx --save-filter", ["dedup", "--approx", "--save-filter", join(dir, "filter.bin")], keyed],
  ])(
    "%s /dev/zero: the error comes at the limit, in bounded memory (peak RSS under 400 MiB)",
    async (_, args, what) => {
      const child = spawn(process.execPath, [CLI, ...args, "/dev/zero"], { stdio: ["ignore", "ignore", "pipe"] });
      // Killed past a gigabyte: unbounded, it would take the machine's memory within seconds.
      const watch = watchPeakRss(child, 1 << 30);
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const code = await exited(child);
      clearTimeout(timer);
      watch.stop();
      expect({ code, stderr }).toEqual({
        code: 2,
        stderr: `crawlsieve: /dev/zero:1: the line is longer than 64 MiB, the limit of ${what}\n`,
      });
      expect(watch.peak).toBeGreaterThan(0);
      expect(watch.peak).toBeLessThan(400 * MiB);
    },
    180_000,
  );
});

// The limit is in each command's --help.
describe("the limit in --help", () => {
  it.each([["canonicalize"], ["dedup"]])("%s --help states 64 MiB", (command) => {
    const run = spawnSync(process.execPath, [CLI, command, "--help"]);
    expect(run.stdout.toString()).toMatch(/64 MiB/);
  });
});
