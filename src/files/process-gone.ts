// Whether the process that named a file left behind still runs: files and folders written aside
// carry their owner's pid, and whoever finds them removes those whose owner is gone.

/** True when process `pid` (of this pid namespace) is gone: a signal 0 finds none (EPERM: it lives, under another user). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
