// The temporary folders the commands make on disk (dedup's spill past the memory budget and long
// lines copied from a pipe, near-dups' sketches): each is registered while it exists, so the command line removes whatever
// is left with one call at exit and on the signals that end a long run. A kill -9 leaves its
// folders behind; their names carry the owner's pid, pid namespace and host, so the next command
// that makes a folder of the same kind in the same place removes those whose owner is gone. The
// host matters: every host's init pid namespace has the same inode, so two hosts sharing one NFS
// --tmp would otherwise take each other's live folders for those of gone processes.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { processGone } from "./process-gone.js";

/** Folders made and not removed yet. */
const live = new Set<string>();
/** Places (dir + prefix) already swept by this process. */
const swept = new Set<string>();

/**
 * Where this process's pids are counted: the pid namespace on Linux (containers sharing a /tmp
 * count pids apart), else the host name.
 */
function pidSpace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "x";
  } catch {
    return hostname().replace(/[^A-Za-z0-9]/g, "") || "x";
  }
}
const SPACE = pidSpace();

/**
 * This host in this boot: the first 12 hex digits of SHA-256 over the host name and, on Linux, the
 * kernel's boot_id (a reboot reuses pids, and a host's pids mean nothing to another).
 */
function hostTag(): string {
  let boot = "";
  try {
    boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    // Not Linux: the host name alone.
  }
  return createHash("sha256").update(`${hostname()}\n${boot}`).digest("hex").slice(0, 12);
}
const HOST = hostTag();

/** Makes a folder `prefix`PID.SPACE.HOST-XXXXXX under `dir` and registers it; first removes that place's folders of processes that are gone. */
export function makeTempFolder(dir: string, prefix: string): string {
  sweepAbandoned(dir, prefix);
  const folder = mkdtempSync(join(dir, `${prefix}${process.pid}.${SPACE}.${HOST}-`));
  live.add(folder);
  return folder;
}

/**
 * Removes the folders `prefix`PID.SPACE.HOST-XXXXXX under `dir` of this host and boot whose process
 * is gone (once a place a process); returns how many. Names without a host (earlier versions) are
 * left: they may be another host's.
 */
export function sweepAbandoned(dir: string, prefix: string): number {
  const place = `${dir}\0${prefix}`;
  if (swept.has(place)) return 0;
  swept.add(place);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const owner = /^(\d+)\.([A-Za-z0-9]+)\.([0-9a-f]{12})-[A-Za-z0-9]{6}$/.exec(name.slice(prefix.length));
    if (
      owner === null ||
      owner[2] !== SPACE ||
      owner[3] !== HOST ||
      Number(owner[1]) === process.pid ||
      !processGone(Number(owner[1]))
    )
      continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
      removed += 1;
    } catch {
      // Another user's folder, or one a peer is removing: left as it is.
    }
  }
  return removed;
}

/** Removes a folder made by makeTempFolder, with what is left in it; idempotent. */
export function removeTempFolder(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
  live.delete(folder);
}

/** Removes the folders still registered when the process exits, or ends on SIGINT (exit 130) or SIGTERM (143). */
export function removeTempFoldersAtExit(): void {
  process.once("exit", removeTempFolders);
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    process.once(signal, () => {
      removeTempFolders();
      process.exit(code);
    });
  }
}

/** Removes every folder still registered (at exit, or on a signal). */
export function removeTempFolders(): void {
  for (const folder of live) rmSync(folder, { recursive: true, force: true });
  live.clear();
}
