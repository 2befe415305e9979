// Issue 30, item 6: a line without an end. `crawlsieve dedup /dev/zero` held the line's bytes
// until its "\n", which never comes, and grew past 3 GB in seconds until the OOM killer. Now a
// line past 16 MiB is fingerprinted as it streams by and its bytes wait outside memory (a device or
// a pipe: a copy under --tmp, whose blocks equal to the one before are counted, not written). Both
// runs go on for 20 s with their peak RSS read from /proc, then get SIGINT: nothing printed (the
// line never ended), the copy's folder gone. The device is read as a file (`dedup /dev/zero`),
// the pipe through `cat /dev/zero | dedup --approx`.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exited, watchPeakRss } from "./support/peak-rss.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const LIMIT = 512 << 20;
const SECONDS = 20;
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "cs-endless-"));
  made.push(dir);
  return dir;
}

/** Bytes of disk the files under dir take, however deep (a file removed meanwhile counts 0). */
function diskBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      total += Number(statSync(join(entry.parentPath, entry.name), { throwIfNoEntry: false })?.blocks ?? 0) * 512;
  }
  return total;
}

describe("dedup of a line that never ends", () => {
  it(`dedup /dev/zero and cat /dev/zero | dedup --approx stay under 512 MB RSS for ${SECONDS} s, print nothing, and leave no file in --tmp (or TMPDIR)`, async () => {
    const tmpDevice = tempFolder();
    const tmpPipe = tempFolder();
    const device = spawn(process.execPath, [CLI, "dedup", "--tmp", tmpDevice, "/dev/zero"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const cat = spawn("cat", ["/dev/zero"], { stdio: ["ignore", "pipe", "ignore"] });
    // Without --tmp: the copy goes to the system's temporary folder (TMPDIR).
    const piped = spawn(process.execPath, [CLI, "dedup", "--approx"], {
      stdio: [cat.stdout, "pipe", "pipe"],
      env: { ...process.env, TMPDIR: tmpPipe },
    });
    const outputs = [device, piped].map((child) => {
      const out = { stdout: 0, stderr: "" };
      child.stdout!.on("data", (d: Buffer) => (out.stdout += d.length));
      child.stderr!.on("data", (d: Buffer) => (out.stderr += d));
      return out;
    });
    const watches = [watchPeakRss(device, LIMIT), watchPeakRss(piped, LIMIT)];
    // Until the time is up, or sooner when a run died or went past the limit.
    const started = Date.now();
    let copyBytes = 0;
    while (
      Date.now() - started < SECONDS * 1000 &&
      device.exitCode === null &&
      piped.exitCode === null &&
      !watches.some((w) => w.killed)
    ) {
      await new Promise((r) => setTimeout(r, 250));
      copyBytes = Math.max(copyBytes, diskBytes(tmpPipe), diskBytes(tmpDevice));
    }
    const running = [device.exitCode, piped.exitCode];
    device.kill("SIGINT");
    piped.kill("SIGINT");
    const codes = await Promise.all([exited(device), exited(piped)]);
    cat.kill();
    for (const w of watches) w.stop();
    expect(running, outputs.map((o) => o.stderr).join("")).toEqual([null, null]);
    expect(watches.map((w) => w.killed)).toEqual([false, false]);
    for (const w of watches) {
      expect(w.peak).toBeGreaterThan(0);
      expect(w.peak).toBeLessThan(LIMIT);
    }
    // The line never ended: nothing printed, nothing said; SIGINT ends the run with 130.
    expect(outputs).toEqual([
      { stdout: 0, stderr: "" },
      { stdout: 0, stderr: "" },
    ]);
    expect(codes).toEqual([130, 130]);
    // Gigabytes of zeros went by; their copy took a block or two of disk, and is gone.
    expect(copyBytes).toBeGreaterThan(0);
    expect(copyBytes).toBeLessThan(4 << 20);
    expect(readdirSync(tmpDevice)).toEqual([]);
    expect(readdirSync(tmpPipe)).toEqual([]);
  }, 180_000);
});
