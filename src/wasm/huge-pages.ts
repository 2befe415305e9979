// Node on Linux: asks the kernel to back the large regions of a WebAssembly memory with
// transparent huge pages (madvise MADV_HUGEPAGE from where they start to the end of the memory's
// reservation). A dedup table is touched at random across hundreds of MiB: with 4 KiB pages every
// first touch is a page fault (6-8 ms a MiB on a virtual machine, 0.5 s for a 6 M-key table) and
// most probes miss the TLB; with 2 MiB pages both mostly go. The small regions placed before them
// (a batch's input and output buffers) keep 4 KiB pages: advised too, they made the approximate
// line dedup 1.2x slower in wall time, at the same CPU time. Node cannot call madvise, so this
// goes through koffi (a prebuilt, widely used C FFI, an optional dependency). Loaded, koffi
// flushes stdout and stderr to disk (fsync) when the process exits: a command writing a large
// file pays that flush (0.3-0.5 s for the 12 M-line output). So the command line asks for huge
// pages and points its fds 1 and 2 at /dev/null once everything is written (askForHugePages);
// a library user's process gets them only with CRAWLSIEVE_HUGE_PAGES=1. Without koffi, off Linux,
// with THP set to "never", or with CRAWLSIEVE_HUGE_PAGES=0, nothing happens and memory is what
// the platform gives.
import { openSync } from "node:fs";
import { createRequire } from "node:module";

/** madvise(2) advice: back this range with huge pages where it can (Linux). */
const MADV_HUGEPAGE = 14;
const EINVAL = 22;
/** A wasm32 memory addresses 4 GiB; its reservation starts at the buffer's first byte and grows in place. */
const RESERVATION = 2 ** 32;
/** Bytes of a huge page (x86-64 and arm64 with 4 KiB base pages). */
const HUGE_PAGE = 2 << 20;

interface Libc {
  madvise(at: Uint8Array, length: number, advice: number): number;
  dup2(from: number, to: number): number;
  errno(): number;
}

let libc: Libc | string | undefined;
/** The command line asked for huge pages (askForHugePages). */
let asked = false;

/** Why huge pages are not asked for here, or undefined when they are. */
export function hugePagesOff(): string | undefined {
  const setting = process.env.CRAWLSIEVE_HUGE_PAGES;
  if (setting === "0" || setting === "false") return "turned off by CRAWLSIEVE_HUGE_PAGES";
  if (!asked && setting !== "1" && setting !== "true")
    return "not asked for (the command line asks; elsewhere CRAWLSIEVE_HUGE_PAGES=1)";
  if (process.platform !== "linux") return `not Linux (${process.platform})`;
  const loaded = load();
  return typeof loaded === "string" ? loaded : undefined;
}

/**
 * The command line's choice: huge pages for large memories in this process, and, when koffi is
 * loaded for them, fds 1 and 2 pointed at /dev/null at exit, after everything was written, so its
 * exit-time flush does not force the output to disk.
 */
export function askForHugePages(): void {
  if (asked) return;
  asked = true;
  process.on("exit", () => {
    if (libc === undefined || typeof libc === "string") return;
    try {
      const devNull = openSync("/dev/null", "w");
      libc.dup2(devNull, 1);
      libc.dup2(devNull, 2);
    } catch {
      // The flush then happens, slower but harmless.
    }
  });
}

/** Asks for huge pages under `memory` from byte `from` (rounded up to a huge page) on, from now on; true when the kernel took the advice. */
export function adviseHugePages(memory: WebAssembly.Memory, from: number): boolean {
  if (hugePagesOff() !== undefined) return false;
  const c = libc as Libc;
  const at = Math.min(Math.ceil(from / HUGE_PAGE) * HUGE_PAGE, memory.buffer.byteLength);
  // Without guard regions V8 reserves less than 4 GiB: the kernel still marks what is mapped and
  // answers ENOMEM for the rest, so only EINVAL (no THP in this kernel) means it was not taken.
  return c.madvise(new Uint8Array(memory.buffer, at, 0), RESERVATION - at, MADV_HUGEPAGE) === 0 || c.errno() !== EINVAL;
}

function load(): Libc | string {
  if (libc !== undefined) return libc;
  try {
    const koffi = createRequire(import.meta.url)("koffi") as {
      load(name: string): { func(signature: string): (...args: unknown[]) => number };
      errno(): number;
    };
    const c = koffi.load("libc.so.6");
    libc = {
      madvise: c.func("int madvise(void *addr, size_t length, int advice)"),
      dup2: c.func("int dup2(int oldfd, int newfd)"),
      errno: () => koffi.errno(),
    };
  } catch (error) {
    libc = `madvise is out of reach (the optional koffi package, and glibc): ${(error as Error).message}`;
  }
  return libc;
}
