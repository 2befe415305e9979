// A real full file system for a test: a tmpfs of a given size mounted at $FULL in a mount
// namespace of the run's own (unshare -m, util-linux; needs root), so nothing outside the run sees
// it, and it goes when the script ends. Shared by the output tests of every command.
import { spawnSync } from "node:child_process";
import { expect } from "vitest";

/** Runs `script` (sh) with a tmpfs of `size` at env.FULL; returns its exit code and output. */
export function onFullDisk(
  size: string,
  script: string,
  env: Record<string, string>,
): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(
    "unshare",
    ["-m", "sh", "-c", `set -e; mkdir -p "$FULL"; mount -t tmpfs -o size=${size} tmpfs "$FULL"; ${script}`],
    {
      env: { ...process.env, ...env },
      timeout: 120_000,
    },
  );
  expect(run.error).toBeUndefined();
  return { code: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}
