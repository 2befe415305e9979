// The peak resident memory of a child process, read from /proc while it runs (the kernel's
// high-water mark, VmHWM), for tests of bounded memory. A child past `killAbove` bytes is killed at
// once: a test of a run that should stay bounded must not take the machine down when it does not.
import { readFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";

/** Watches `child`'s peak RSS every 50 ms until stop(); kills it (SIGKILL) past killAbove bytes. */
export function watchPeakRss(
  child: ChildProcess,
  killAbove = 2 ** 31,
): { readonly peak: number; readonly killed: boolean; stop(): void } {
  let peak = 0;
  let killed = false;
  const poll = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      peak = Math.max(peak, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024);
    } catch {
      // Exited between two reads.
    }
    if (peak > killAbove && !killed) {
      killed = true;
      child.kill("SIGKILL");
    }
  }, 50);
  return {
    get peak() {
      return peak;
    },
    get killed() {
      return killed;
    },
    stop: () => clearInterval(poll),
  };
}

/** Resolves with the child's exit code (or its signal's name) once it has exited. */
export function exited(child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  if (child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)));
}
