// Large WebAssembly memories are advised to use transparent huge pages on Linux (huge-pages.ts)
// where asked for (the command line asks; a library user sets CRAWLSIEVE_HUGE_PAGES=1): read back
// from the kernel's own account of the process's mappings (/proc/self/smaps, whose VmFlags line
// says "hg" for a range advised MADV_HUGEPAGE), in a child process so nothing else of the test
// runner is counted. A small structure is left alone, and CRAWLSIEVE_HUGE_PAGES=0 turns it off.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const INDEX = new URL("../build/js/index.node.js", import.meta.url).href;

/** Runs `make` (an expression on the package `c`) in a fresh Node, then counts the mappings advised for huge pages and what the guard says. */
function advisedAfter(
  make: string,
  env: Record<string, string> = {},
): { advised: number; off: string | null; has: number } {
  const script = `
    import * as c from ${JSON.stringify(INDEX)};
    import { readFileSync } from "node:fs";
    const { hugePagesOff } = await import(${JSON.stringify(new URL("../build/js/wasm/huge-pages.js", import.meta.url).href)});
    await c.init();
    const made = ${make};
    const flags = readFileSync("/proc/self/smaps", "utf8").split("\\n").filter((l) => l.startsWith("VmFlags:"));
    console.log(JSON.stringify({ advised: flags.filter((l) => l.split(/\\s+/).includes("hg")).length, off: hugePagesOff() ?? null, has: made }));`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout);
}

describe.runIf(process.platform === "linux")("huge pages for large memories", () => {
  it("advises the memory of a large table when asked, and nothing for a small one", () => {
    // 3 M keys: a table of about 48 MiB, past the 16 MiB from which memories are advised.
    const large = advisedAfter(
      `(() => { const s = new c.FingerprintSet({ items: 3_000_000 }); s.addMany(["a", "b", "a"]); return s.size; })()`,
      { CRAWLSIEVE_HUGE_PAGES: "1" },
    );
    expect(large.off).toBeNull();
    expect(large.has).toBe(2);
    expect(large.advised).toBeGreaterThanOrEqual(1);
    const small = advisedAfter(
      `(() => { const f = new c.BloomFilter({ items: 1000, fpRate: 0.01 }); f.add("a"); return f.has("a") ? 1 : 0; })()`,
      { CRAWLSIEVE_HUGE_PAGES: "1" },
    );
    expect(small.has).toBe(1);
    expect(small.advised).toBe(0);
  });

  it("leaves a library user's memory alone unless asked (koffi flushes stdout to disk at exit)", () => {
    const unasked = advisedAfter(
      `(() => { const s = new c.FingerprintSet({ items: 3_000_000 }); s.addMany(["a"]); return s.size; })()`,
      { CRAWLSIEVE_HUGE_PAGES: "" },
    );
    expect(unasked.off).toMatch(/not asked for/);
    expect(unasked.has).toBe(1);
    expect(unasked.advised).toBe(0);
  });

  it("leaves memory alone under CRAWLSIEVE_HUGE_PAGES=0", () => {
    const off = advisedAfter(
      `(() => { const s = new c.FingerprintSet({ items: 3_000_000 }); s.addMany(["a"]); return s.size; })()`,
      { CRAWLSIEVE_HUGE_PAGES: "0" },
    );
    expect(off.off).toMatch(/CRAWLSIEVE_HUGE_PAGES/);
    expect(off.has).toBe(1);
    expect(off.advised).toBe(0);
  });
});
