// Damage is told and kept (issue 48, H1, H2, M1, M2): a compacted store cut short or damaged
// inside its sorted part is ERR_STORE_CORRUPT on every path (it was "repaired" as a torn write,
// 168,929 of 300,000 acknowledged keys lost without a word); a cut tail is copied aside before the
// log is cut, and said; openSeenSet({ backend: "disk" }) tells its onRecover (a warning without
// one); a log removed from a store directory is an error, not an empty store; an LMDB store
// imported by this build is retired, so the LMDB-era code stops there with an error.
import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openLmdbStore, openSeenSet, StoreDeduplicator } from "../build/js/index.node.js";
import { FileLog } from "../build/js/seen/disk/file-log.js";
import { Arena } from "../build/js/wasm/arena.js";
import { ready } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const temp = () => mkdtempSync(join(tmpdir(), "cs-damage-"));
const lines = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `https://example.com/p/${from + i}`);

function dedup(args: string[], input: string) {
  const run = spawnSync(process.execPath, [CLI, "dedup", ...args], { input, maxBuffer: 1 << 28, timeout: 120_000 });
  return { code: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** A store of keys [0, n) through the command line, compacted (its whole file a sorted part). */
function compactedStore(n: number): { store: string; log: string } {
  const store = join(temp(), "seen");
  expect(dedup(["--store", store], lines(0, n).join("\n") + "\n").code).toBe(0);
  const log = join(store, "fingerprints.log");
  const file = new FileLog(log, false);
  file.compact(new Arena());
  void file.close();
  expect(new DataView(readFileSync(log).buffer).getUint32(12, true)).toBe(n);
  return { store, log };
}

describe("a compacted store damaged inside its sorted part", () => {
  it("cut short: ERR_STORE_CORRUPT from dedup --store (with and without --memory) and openSeenSet, nothing printed, the file left as it was", async () => {
    const { store, log } = compactedStore(300_000);
    const size = statSync(log).size;
    truncateSync(log, Math.floor(size / 2));
    const cut = readFileSync(log);
    for (const extra of [[], ["--memory", "16MiB"]]) {
      const run = dedup(["--store", store, ...extra], lines(0, 10).join("\n") + "\n");
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/shorter than the sorted part of 300000 fingerprints its header declares/);
    }
    await expect(openSeenSet({ backend: "disk", path: store })).rejects.toMatchObject({ code: "ERR_STORE_CORRUPT" });
    await expect(openSeenSet({ backend: "disk", path: store, memory: 16 << 20 })).rejects.toMatchObject({
      code: "ERR_STORE_CORRUPT",
    });
    expect(readFileSync(log).equals(cut)).toBe(true);
  });

  it("a byte changed in its last record (the file's last): ERR_STORE_CORRUPT, not a torn write cut off", async () => {
    const { store, log } = compactedStore(100_000);
    const bytes = readFileSync(log);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(log, bytes);
    const run = dedup(["--store", store], "https://example.com/p/1\n");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/damaged inside its sorted part/);
    await expect(openSeenSet({ backend: "disk", path: store })).rejects.toMatchObject({ code: "ERR_STORE_CORRUPT" });
    expect(readFileSync(log).equals(bytes)).toBe(true);
  });
});

describe("a cut tail", () => {
  it("is copied aside (fingerprints.log.cut-N) before the log is cut, and said; the library tells onRecover", async () => {
    const store = join(temp(), "seen");
    expect(dedup(["--store", store], "a\nb\n").code).toBe(0);
    expect(dedup(["--store", store], "c\nd\ne\n").code).toBe(0);
    const log = join(store, "fingerprints.log");
    const whole = readFileSync(log);
    // The last record (8 + 3 x 16 + 8 bytes) damaged in its last byte: a torn write as far as anyone can tell.
    const damaged = Buffer.from(whole);
    damaged[damaged.length - 1] ^= 1;
    writeFileSync(log, damaged);
    const run = dedup(["--store", store], "c\nf\n");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("c\nf\n");
    expect(run.stderr).toMatch(/ended in a partly written batch/);
    expect(run.stderr).toContain(
      `the 64 bytes cut off the end of ${log} (from byte ${whole.length - 64}) were kept in ${log}.cut-1`,
    );
    expect(readFileSync(`${log}.cut-1`).equals(damaged.subarray(whole.length - 64))).toBe(true);
    // The library: the same through onRecover, and a second cut goes to .cut-2.
    const again = readFileSync(log);
    again[again.length - 1] ^= 1;
    writeFileSync(log, again);
    const told: string[] = [];
    const seen = await openSeenSet({ backend: "disk", path: store, onRecover: (message) => told.push(message) });
    expect(Array.from(await seen.addMany(["a", "z"]))).toEqual([0, 1]);
    await seen.close();
    expect(told.join("\n")).toMatch(/partly written batch[\s\S]*were kept in .*fingerprints\.log\.cut-2/);
    expect(
      readdirSync(store)
        .filter((name) => name.includes(".cut-"))
        .sort(),
    ).toEqual(["fingerprints.log.cut-1", "fingerprints.log.cut-2"]);
  });

  it("without onRecover, the library warns (process warning CrawlsieveWarning)", async () => {
    const store = join(temp(), "seen");
    expect(dedup(["--store", store], "a\nb\n").code).toBe(0);
    const log = join(store, "fingerprints.log");
    truncateSync(log, statSync(log).size - 3);
    const warnings: string[] = [];
    const listen = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", listen);
    try {
      const seen = await openSeenSet({ backend: "disk", path: store });
      await seen.close();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", listen);
    }
    expect(warnings.join("\n")).toMatch(/CrawlsieveWarning: .*partly written batch/);
  });
});

describe("a store's log removed", () => {
  it("is an error naming it, not an empty store (the lock file says a log was made)", async () => {
    const store = join(temp(), "seen");
    expect(dedup(["--store", store], "a\n").code).toBe(0);
    rmSync(join(store, "fingerprints.log"));
    const run = dedup(["--store", store], "a\n");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/fingerprints\.log is missing, though .* held a store/);
    await expect(openSeenSet({ backend: "disk", path: store })).rejects.toMatchObject({ code: "ERR_STORE_CORRUPT" });
  });
});

describe("an LMDB store imported", () => {
  it("is retired: the LMDB-era code stops with an error there; keys an old build added beside an earlier import are taken in", async () => {
    const store = join(temp(), "old");
    mkdirSync(store);
    const old = new StoreDeduplicator(openLmdbStore(store), { items: 1000 });
    old.checkMany(["a", "b"]);
    old.close();
    expect(dedup(["--store", store], "a\nc\n").stdout).toBe("c\n");
    // The LMDB-era build opens fingerprints.mdb: now a directory, which it refuses.
    expect(() => openLmdbStore(store)).toThrow(/is not a file/);
    expect(statSync(join(store, "fingerprints.mdb.imported")).isFile()).toBe(true);
    // A directory imported by the previous build, which left fingerprints.mdb in place, and an old build adding "d" since.
    const rolled = join(temp(), "rolled");
    mkdirSync(rolled);
    const first = new StoreDeduplicator(openLmdbStore(rolled), { items: 1000 });
    first.checkMany(["a"]);
    first.close();
    expect(dedup(["--store", rolled], "a\n").stdout).toBe("");
    rmSync(join(rolled, "fingerprints.mdb"), { recursive: true });
    const { renameSync } = await import("node:fs");
    renameSync(join(rolled, "fingerprints.mdb.imported"), join(rolled, "fingerprints.mdb"));
    rmSync(join(rolled, "fingerprints.mdb.imported-lock"), { force: true });
    const later = new StoreDeduplicator(openLmdbStore(rolled), { items: 1000 });
    later.checkMany(["d"]);
    later.close();
    expect(dedup(["--store", rolled], "a\nd\ne\n").stdout).toBe("e\n");
    expect(() => openLmdbStore(rolled)).toThrow(/is not a file/);
  });
});
