// dedup's --items and --memory values (issue 48, M3 and H3): exact --items sizes the first table
// (it was accepted and ignored), a keyed --items past the machine's memory is a one-line error in
// place of minutes of reserving, and --memory out of range names the range. The machine's memory
// is injected (CRAWLSIEVE_TEST_MACHINE_MEMORY); the tests read sizes from --stats, never times.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;

function cli(args: string[], input: string, env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [CLI, ...args], {
    input,
    env: { ...process.env, ...env },
    maxBuffer: 1 << 26,
    timeout: 120_000,
  });
  return { code: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

const LINES = "a\nb\na\nc\nb\n";
const FIRST = "a\nb\nc\n";

/** The --stats line of a run. */
function stats(stderr: string): { slots: number; tableBytes: number } {
  return JSON.parse(stderr.trim().split("\n").at(-1) as string);
}

describe("dedup --items without --approx", () => {
  it("makes the first exact table for N lines: at least N slots", () => {
    const run = cli(["dedup", "--items", "1000000", "--stats"], LINES);
    expect(run).toMatchObject({ code: 0, stdout: FIRST });
    expect(stats(run.stderr).slots).toBeGreaterThanOrEqual(1_000_000);
  });

  it("stays within --memory: a table of at most the budget, however large N", () => {
    const run = cli(["dedup", "--items", "1e9", "--memory", "16MiB", "--stats"], LINES);
    expect(run).toMatchObject({ code: 0, stdout: FIRST });
    expect(stats(run.stderr).tableBytes).toBeLessThanOrEqual(16 << 20);
  });

  it("with --json-key or --field: an N past the machine's memory is one line naming it, exit 2, nothing printed", () => {
    const gib = { CRAWLSIEVE_TEST_MACHINE_MEMORY: String(2 ** 30) };
    for (const args of [
      ["--json-key", "k"],
      ["--field", "1"],
    ]) {
      const refused = cli(["dedup", ...args, "--items", "1e8"], '{"k":1}\n{"k":1}\n', gib);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toMatch(/^crawlsieve: .*items 100000000 .*machine's memory \(1073741824 bytes/);
      expect(refused.stderr.split("\n")).toHaveLength(2);
    }
    expect(cli(["dedup", "--json-key", "k", "--items", "1e6"], '{"k":1}\n{"k":2}\n{"k":1}\n', gib)).toMatchObject({
      code: 0,
      stdout: '{"k":1}\n{"k":2}\n',
    });
  });

  it("refuses --json-key k --items 1e11 (1.9 TB of tables) on a machine of 1 TiB", () => {
    const refused = cli(["dedup", "--json-key", "k", "--items", "1e11"], '{"k":1}\n{"k":2}\n', {
      CRAWLSIEVE_TEST_MACHINE_MEMORY: String(2 ** 40),
    });
    expect(refused).toMatchObject({ code: 2, stdout: "" });
    expect(refused.stderr).toMatch(/items 100000000000 /);
  });
});

describe("dedup --memory out of range", () => {
  it("names the value and the range, too large and too small", () => {
    expect(cli(["dedup", "--memory", "1e30"], LINES)).toMatchObject({
      code: 2,
      stdout: "",
      stderr:
        'crawlsieve: --memory must be a size of at most 8 PiB (2^53 - 1 bytes; from 16 MiB up), such as 512MiB or 8GiB, got "1e30"\n',
    });
    expect(cli(["dedup", "--memory", "1MiB"], LINES)).toMatchObject({
      code: 2,
      stderr:
        'crawlsieve: --memory must be a size of at least 16 MiB (up to 8 PiB), such as 512MiB or 8GiB, got "1MiB"\n',
    });
  });
});
