// Output that cannot be written (issue 30, item 10): every command ends with exit 2 and one line,
// "crawlsieve: cannot write output: ENOSPC ...", never a stack trace; a durable seen-set commits
// at most one batch it did not print (--redis: 4,096 lines; --store: one commit group of at most
// 65,536 lines); a store that fills its own disk says so and leaves no temporary file. /dev/full fails every write with ENOSPC; a full file
// system is a real tmpfs of a few MiB, mounted in a mount namespace of the run's own (unshare -m,
// util-linux), so nothing outside the run sees it.
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { onFullDisk as fullDisk } from "./support/full-disk.js";
import { startRedis } from "./support/redis-server.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const BATCH = 4096;
/** Lines of one --store commit at most: a chunk of the byte pipeline (src/seen/disk/store-gate.ts decides a chunk at a time). */
const GROUP = 1 << 16;
const dir = mkdtempSync(join(tmpdir(), "cs-output-"));
const LINES = Array.from({ length: 100_000 }, (_, i) => `https://example.com/item/${i}?ref=${i % 7}`);
const INPUT = join(dir, "urls.txt");
writeFileSync(INPUT, LINES.join("\n") + "\n");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI with stdout on /dev/full. */
function toDevFull(args: string[]) {
  const full = openSync("/dev/full", "w");
  try {
    const run = spawnSync(process.execPath, [CLI, ...args], { stdio: ["ignore", full, "pipe"], timeout: 180_000 });
    return { code: run.status, stderr: run.stderr.toString() };
  } finally {
    closeSync(full);
  }
}

/** Lines printed by a run that writes to a pipe. */
function printed(args: string[]): string[] {
  const run = spawnSync(process.execPath, [CLI, ...args], { maxBuffer: 1 << 28, timeout: 180_000 });
  expect(run.status, run.stderr.toString()).toBe(0);
  return run.stdout.toString().split("\n").filter(Boolean);
}

describe("output that cannot be written", () => {
  it.each(["dedup", "dedup --approx", "dedup --approx --items 200000", "dedup --canonicalize", "md5", "canonicalize"])(
    "%s to /dev/full: exit 2 and one line naming ENOSPC",
    (command) => {
      const { code, stderr } = toDevFull([...command.split(" "), INPUT]);
      expect({ code, stderr }).toEqual({
        code: 2,
        stderr: "crawlsieve: cannot write output: ENOSPC: no space left on device, write\n",
      });
    },
  );

  it("dedup --store to /dev/full commits at most one batch it did not print: a second run prints the rest", () => {
    const store = join(dir, "store-devfull");
    const { code, stderr } = toDevFull(["dedup", "--store", store, INPUT]);
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: "crawlsieve: cannot write output: ENOSPC: no space left on device, write\n",
    });
    const again = printed(["dedup", "--store", store, INPUT]);
    expect(again.length).toBeGreaterThanOrEqual(LINES.length - GROUP);
    // What the second run printed is the input's tail, in order: the lost lines are one group at the head.
    expect(again).toEqual(LINES.slice(LINES.length - again.length));
  });

  it("dedup --redis to /dev/full commits at most one batch it did not print", async () => {
    const redis = await startRedis();
    try {
      const args = ["dedup", "--redis", redis.url, "--namespace", "devfull"];
      const { code, stderr } = toDevFull([...args, INPUT]);
      expect({ code, stderr }).toEqual({
        code: 2,
        stderr: "crawlsieve: cannot write output: ENOSPC: no space left on device, write\n",
      });
      const again = printed([...args, INPUT]);
      expect(again.length).toBeGreaterThanOrEqual(LINES.length - BATCH);
      expect(again).toEqual(LINES.slice(LINES.length - again.length));
    } finally {
      await redis.stop();
    }
  }, 180_000);
});

/** Runs `script` (sh) with a tmpfs of `size` at $FULL, in a mount namespace of its own. */
function onFullDisk(size: string, script: string) {
  return fullDisk(size, script, {
    FULL: join(dir, "full"),
    CLI,
    INPUT,
    NODE: process.execPath,
    COPY: join(dir, "copy"),
  });
}

describe("a full file system", () => {
  it("output to a file on a full disk: exit 2 and one line", () => {
    const { code, stdout, stderr } = onFullDisk(
      "1m",
      `"$NODE" "$CLI" dedup "$INPUT" > "$FULL/out.txt" 2> "$FULL/../err.txt" || echo "exit $?"; cat "$FULL/../err.txt"`,
    );
    expect({ code, stdout, stderr }).toEqual({
      code: 0,
      stdout: "exit 2\ncrawlsieve: cannot write output: ENOSPC: no space left on device, write\n",
      stderr: "",
    });
  });

  it("a store that fills its disk says so, leaves no temporary file, and keeps what it printed seen", () => {
    rmSync(join(dir, "copy"), { recursive: true, force: true });
    // The store fills a tmpfs of 1,200 KiB part way through (its first group of 65,536 lines takes
    // 1 MiB, the second does not fit); its folder is copied out before the mount goes.
    const { code, stdout, stderr } = onFullDisk(
      "1200k",
      `"$NODE" "$CLI" dedup --store "$FULL/s" "$INPUT" > "$FULL/../first.txt" 2> "$FULL/../err.txt" || echo "exit $?"; cat "$FULL/../err.txt"; ls -a "$FULL/s"; cp -r "$FULL/s" "$COPY"`,
    );
    expect(code, stderr).toBe(0);
    const [exit, ...after] = stdout.split("\n").filter(Boolean);
    const messages = after.filter((line) => line.startsWith("crawlsieve: "));
    const files = after.filter((line) => !line.startsWith("crawlsieve: "));
    expect(exit).toBe("exit 2");
    // The full disk, and (the disk full still) that what was recorded and not printed is left for the next run to forget.
    expect(
      messages.some((line) =>
        new RegExp(`^crawlsieve: the disk of the store ${join(dir, "full", "s", "fingerprints.log")} is full \\(`).test(
          line,
        ),
      ),
      messages.join("\n"),
    ).toBe(true);
    expect(
      messages.every((line) => /is full \(|could not be forgotten .* the next run forgets them/.test(line)),
      messages.join("\n"),
    ).toBe(true);
    expect(files.filter((f) => f.endsWith(".tmp"))).toEqual([]);
    const first = readFileSync(join(dir, "first.txt"), "utf8").split("\n").filter(Boolean);
    expect(first.length).toBeGreaterThan(0);
    expect(first).toEqual(LINES.slice(0, first.length));
    // Given room again, the store prints the rest, and what the failed run recorded and did not print: nothing lost.
    expect(readdirSync(join(dir, "copy"))).toContain("fingerprints.log");
    const rest = printed(["dedup", "--store", join(dir, "copy"), INPUT]);
    expect(new Set([...first, ...rest]).size).toBe(LINES.length);
    expect(first.length + rest.length - LINES.length).toBeLessThanOrEqual(GROUP);
  }, 120_000);

  it("the disk seen-set: a batch whose write failed is not seen; once there is room it is new again", () => {
    const script = `import { openSeenSet, initSync } from ${JSON.stringify(new URL("../build/js/index.node.js", import.meta.url).href)};
      import { rmSync, writeFileSync } from "node:fs";
      initSync();
      const seen = await openSeenSet({ backend: "disk", path: process.env.FULL + "/s" });
      await seen.addMany(["kept"]);
      writeFileSync(process.env.FULL + "/filler", Buffer.alloc(1 << 20));
      const big = Array.from({ length: 100000 }, (_, i) => "k" + i);
      const error = await seen.addMany(big).catch((e) => e);
      rmSync(process.env.FULL + "/filler");
      const again = await seen.addMany(["k0", "k99999", "kept"]);
      console.log(JSON.stringify({ code: error.code, again: Array.from(again), size: await seen.size() }));
      await seen.close();`;
    const scriptFile = join(dir, "full-disk-seen-set.mjs");
    writeFileSync(scriptFile, script);
    const { code, stdout, stderr } = onFullDisk("1200k", `"$NODE" "${scriptFile}"`);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ code: "ERR_STORE_FULL", again: [1, 1, 0], size: 3 });
  });

  it("--save-filter on a full disk: a typed error, no partial filter left", () => {
    const { stdout } = onFullDisk(
      "256k",
      `"$NODE" "$CLI" dedup --approx --items 1000000 --save-filter "$FULL/f.bin" "$INPUT" > /dev/null 2> "$FULL/../err.txt" || echo "exit $?"; cat "$FULL/../err.txt"; ls "$FULL"`,
    );
    expect(stdout).toMatch(
      /^exit 2\ncrawlsieve: cannot write the filter to \S+f\.bin: ENOSPC: no space left on device, write\n$/,
    );
  });
});
