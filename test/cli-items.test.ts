// dedup's --items and --memory values (issue 48, M3 and H3): exact --items sizes the first table
// (it was accepted and ignored), with a key it means the same (the keyed path that reserved a
// plan past the machine's memory is gone), and --memory out of range names the range. The machine's memory
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

  it("with --json-key or --field it means the same (one pipeline, issue 43): within the budget, however large N", () => {
    for (const args of [
      ["--json-key", "k"],
      ["--field", "1"],
    ]) {
      const run = cli(
        ["dedup", ...args, "--items", "1e11", "--memory", "512MiB", "--stats"],
        '{"k":1}\n{"k":2}\n{"k":1}\n',
      );
      expect(run).toMatchObject({ code: 0, stdout: '{"k":1}\n{"k":2}\n' });
      expect(stats(run.stderr).tableBytes).toBeLessThanOrEqual(2 ** 29);
      const small = cli(["dedup", ...args, "--items", "1e9", "--memory", "16MiB", "--stats"], '{"k":1}\n{"k":1}\n');
      expect(small).toMatchObject({ code: 0, stdout: '{"k":1}\n' });
      expect(stats(small.stderr).tableBytes).toBeLessThanOrEqual(16 << 20);
    }
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
