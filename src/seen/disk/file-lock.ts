// The lock a disk seen-set holds around each batch: an exclusive flock(2) on a lock file, which
// the kernel releases when its holder dies (kill -9 included), so no stale lock is ever left to
// guess about; and a queue in this process, since flock does not exclude callers sharing one open
// file. flock comes from fs-native-extensions (prebuilt, made for it): Node has no file locks.
import { closeSync, constants, openSync } from "node:fs";
import { createRequire } from "node:module";
import { CrawlsieveError } from "../../errors.js";
import type { LockRunner } from "../log-driver.js";

interface NativeLocks {
  tryLock(fd: number): boolean;
  waitForLock(fd: number): Promise<void>;
  unlock(fd: number): void;
}

let native: NativeLocks | undefined;

/** The native file locks (fs-native-extensions), loaded once; a typed error saying what to install when missing. */
export function nativeLocks(): NativeLocks {
  if (native !== undefined) return native;
  try {
    native = createRequire(import.meta.url)("fs-native-extensions") as NativeLocks;
  } catch (error) {
    // Node's message goes on with a "Require stack:" of paths: its first line says what failed.
    const why = String((error as Error)?.message ?? error).split("\n")[0];
    const missing = (error as NodeJS.ErrnoException)?.code === "MODULE_NOT_FOUND";
    throw new CrawlsieveError(
      "ERR_NO_FILE_LOCKS",
      `the disk seen-set (--store, backend "disk") locks its file with the optional package fs-native-extensions, which ${missing ? "is not installed" : `does not load here (${why})`}: install it with npm install fs-native-extensions`,
    );
  }
  return native;
}

/** An exclusive lock on the file `path` (created when missing), for this process's callers in turn. */
export class FileLock {
  private readonly fd: number;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(path: string) {
    // Loaded now, so a missing package is said when the set is opened, not at its first batch.
    nativeLocks();
    this.fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  }

  /** Runs `body` holding the lock; callers of this process wait their turn. */
  readonly run: LockRunner = (body) => {
    const turn = this.queue.then(async () => {
      if (this.closed) throw new CrawlsieveError("ERR_DISPOSED", "the disk seen-set is closed");
      const native = nativeLocks();
      if (!native.tryLock(this.fd)) await native.waitForLock(this.fd);
      try {
        return await body();
      } finally {
        native.unlock(this.fd);
      }
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  };

  /** Closes the lock file once every queued caller has run. */
  async close(): Promise<void> {
    await this.queue;
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}
