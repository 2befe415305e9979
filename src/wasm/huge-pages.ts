// Node on Linux: asks the kernel to back a large WebAssembly memory with transparent huge pages
// (madvise MADV_HUGEPAGE on its whole reservation). A dedup table is touched at random across
// hundreds of MiB: with 4 KiB pages every first touch is a page fault (6-8 ms a MiB on a virtual
// machine, 0.5 s for a 6 M-key table) and most probes miss the TLB; with 2 MiB pages both mostly
// go. Node cannot call madvise, so this goes through koffi (a prebuilt, widely used C FFI, an
// optional dependency). Without koffi, off Linux, with THP set to "never", or with
// CRAWLSIEVE_HUGE_PAGES=0, nothing happens and memory is what the platform gives.
import { createRequire } from "node:module";

/** madvise(2) advice: back this range with huge pages where it can (Linux). */
const MADV_HUGEPAGE = 14;
const EINVAL = 22;
/** A wasm32 memory addresses 4 GiB; its reservation starts at the buffer's first byte and grows in place. */
const RESERVATION = 2 ** 32;

interface Libc {
  madvise(memory: ArrayBuffer | SharedArrayBuffer, length: number, advice: number): number;
  errno(): number;
}

let libc: Libc | string | undefined;

/** Why huge pages are not asked for here, or undefined when they are. */
export function hugePagesOff(): string | undefined {
  const setting = process.env.CRAWLSIEVE_HUGE_PAGES;
  if (setting === "0" || setting === "false") return "turned off by CRAWLSIEVE_HUGE_PAGES";
  if (process.platform !== "linux") return `not Linux (${process.platform})`;
  const loaded = load();
  return typeof loaded === "string" ? loaded : undefined;
}

/** Asks for huge pages under `memory` from now on (pages already touched stay as they are); true when the kernel took the advice. */
export function adviseHugePages(memory: WebAssembly.Memory): boolean {
  if (hugePagesOff() !== undefined) return false;
  const c = libc as Libc;
  // Without guard regions V8 reserves less than 4 GiB: the kernel still marks what is mapped and
  // answers ENOMEM for the rest, so only EINVAL (no THP in this kernel) means it was not taken.
  return c.madvise(memory.buffer, RESERVATION, MADV_HUGEPAGE) === 0 || c.errno() !== EINVAL;
}

function load(): Libc | string {
  if (libc !== undefined) return libc;
  try {
    const koffi = createRequire(import.meta.url)("koffi") as {
      load(name: string): { func(signature: string): Libc["madvise"] };
      errno(): number;
    };
    const madvise = koffi.load("libc.so.6").func("int madvise(void *addr, size_t length, int advice)");
    libc = { madvise, errno: () => koffi.errno() };
  } catch (error) {
    libc = `madvise is out of reach (the optional koffi package, and glibc): ${(error as Error).message}`;
  }
  return libc;
}
