// Folders left by a process killed with -9: the next command making a folder of the same kind in
// the same place removes those whose owner is gone, and only those. Owners are real processes
// (a live `sleep`, an exited `true`); the pid namespace and the host (name and boot id) are read
// from /proc and os here, not from the code. A folder of another host sharing the place (an NFS
// --tmp: every host's init pid namespace has one inode) is never removed (issue 48, L).
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempFolder, removeTempFolder, sweepAbandoned } from "../build/js/files/temp-folders.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const space = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))![1];
// This host in this boot, as the names spell it: SHA-256 of "hostname\nboot_id", 12 hex digits.
const host = createHash("sha256")
  .update(`${hostname()}\n${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}`)
  .digest("hex")
  .slice(0, 12);
const otherHost = host === "0123456789ab" ? "ba9876543210" : "0123456789ab";

describe("folders abandoned under --tmp", () => {
  it("are removed when their process is gone, kept while it lives, and kept when they are another pid namespace's, another host's or not ours", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-sweep-"));
    dirs.push(dir);
    const living = spawn("sleep", ["30"], { stdio: "ignore" });
    const dead = spawnSync("true").pid!;
    expect(existsSync(`/proc/${dead}`)).toBe(false);
    const folders = {
      deadOwner: `crawlsieve-spill-${dead}.${space}.${host}-aB3dE9`,
      livingOwner: `crawlsieve-spill-${living.pid}.${space}.${host}-Zz0000`,
      otherSpace: `crawlsieve-spill-${dead}.1${space}.${host}-aB3dE9`,
      // Another host on the same NFS folder, its init namespace's inode the same as ours: a pid gone here may live there.
      otherHost: `crawlsieve-spill-${dead}.${space}.${otherHost}-aB3dE9`,
      // A name without a host (an earlier version's) may be any host's.
      noHost: `crawlsieve-spill-${dead}.${space}-aB3dE9`,
      notOurs: "crawlsieve-spill-test-aB3dE9",
      otherKind: `crawlsieve-long-${dead}.${space}.${host}-aB3dE9`,
    };
    for (const name of Object.values(folders)) mkdirSync(join(dir, name, "p0"), { recursive: true });
    try {
      const mine = makeTempFolder(dir, "crawlsieve-spill-");
      expect(mine.startsWith(join(dir, `crawlsieve-spill-${process.pid}.${space}.${host}-`))).toBe(true);
      const left = Object.fromEntries(Object.entries(folders).map(([k, name]) => [k, existsSync(join(dir, name))]));
      expect(left).toEqual({
        deadOwner: false,
        livingOwner: true,
        otherSpace: true,
        otherHost: true,
        noHost: true,
        notOurs: true,
        otherKind: true,
      });
      // Our own live folder survives a sweep by a later command (here: this process again, at a new place name).
      expect(sweepAbandoned(dir, "crawlsieve-long-")).toBe(1);
      expect(existsSync(mine)).toBe(true);
      removeTempFolder(mine);
    } finally {
      living.kill("SIGKILL");
    }
    // Each place is swept once a process: the living owner is gone now, but this process does not look again.
    await new Promise((resolve) => living.once("exit", resolve));
    expect(sweepAbandoned(dir, "crawlsieve-spill-")).toBe(0);
    expect(existsSync(join(dir, folders.livingOwner))).toBe(true);
  });
});
