// A compaction written aside as of a snapshot and installed later (src/seen/disk/file-log.ts
// compactAside/installAside, the first step of issue 46 item 1): records appended after the
// snapshot are copied onto the new file before it is renamed in, so no key acknowledged meanwhile
// is lost; one whose file another process replaced meanwhile is discarded, the file left as is.
// An open spares the aside of a process that runs (a background merge writes it without the
// lock) and removes one whose process is gone.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openSeenSet } from "../build/js/index.node.js";
import { FileLog } from "../build/js/seen/disk/file-log.js";
import { Arena } from "../build/js/wasm/arena.js";
import { ready } from "./helpers.js";

beforeAll(ready);

const keys = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `https://example.com/aside/${from + i}`);
const news = (flags: ArrayLike<unknown>) => Array.from(flags).filter(Boolean).length;

/** A store of keys [0, n) written by a seen-set, and its file's path. */
async function store(n: number): Promise<{ dir: string; log: string }> {
  const dir = join(mkdtempSync(join(tmpdir(), "crawlsieve-aside-")), "seen");
  const set = await openSeenSet({ backend: "disk", path: dir });
  expect(news(await set.addMany(keys(0, n)))).toBe(n);
  await set.close();
  return { dir, log: join(dir, "fingerprints.log") };
}

describe("a compaction written aside and installed later", () => {
  it("keeps the keys appended after its snapshot (copied onto the new file before the rename)", async () => {
    const { dir, log } = await store(50_000);
    const file = new FileLog(log, true);
    const pending = file.compactAside(new Arena());
    // Batches go on meanwhile: keys the snapshot does not hold.
    const during = await openSeenSet({ backend: "disk", path: dir });
    expect(news(await during.addMany(keys(50_000, 60_000)))).toBe(10_000);
    await during.close();
    // Opening the store meanwhile spares the aside: it is named after this process, which runs.
    expect(file.installAside(pending)).toBe(true);
    await file.close();
    const after = await openSeenSet({ backend: "disk", path: dir });
    expect(news(await after.addMany(keys(0, 60_000)))).toBe(0);
    expect(news(await after.addMany(keys(60_000, 60_010)))).toBe(10);
    await after.close();
    expect(readFileSync(log).readUInt32LE(12)).toBe(50_000);
    // With no open between the snapshot and the install, the appended records are copied on.
    const again = new FileLog(log, true);
    const next = again.compactAside(new Arena());
    const more = new FileLog(log, true);
    await more.read();
    await more.close();
    expect(again.installAside(next)).toBe(true);
    await again.close();
    const last = await openSeenSet({ backend: "disk", path: dir });
    expect(news(await last.addMany(keys(0, 60_010)))).toBe(0);
    await last.close();
    expect(readdirSync(dir).filter((f) => f.includes("aside") || f.startsWith("."))).toEqual([]);
  });

  it("is removed by the next open once the process that wrote it is gone, and spared while it runs", async () => {
    const { dir, log } = await store(1_000);
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const dead = join(dir, `fingerprints.log.${gone.stdout}.0123abcd.tmp`);
    const deadPart = join(dir, `fingerprints.log.${gone.stdout}.0123abcd.3f.tmp`);
    const live = join(dir, `fingerprints.log.${process.pid}.89abcdef.tmp`);
    for (const path of [dead, deadPart, live]) writeFileSync(path, "aside");
    const set = await openSeenSet({ backend: "disk", path: dir });
    await set.close();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(deadPart)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(readFileSync(log).length).toBeGreaterThan(16);
  });

  it("is discarded when another process installed its own compaction meanwhile", async () => {
    const { dir, log } = await store(20_000);
    const ours = new FileLog(log, true);
    const pending = ours.compactAside(new Arena());
    const theirs = new FileLog(log, true);
    theirs.compact(new Arena());
    await theirs.close();
    const during = await openSeenSet({ backend: "disk", path: dir });
    expect(news(await during.addMany(keys(20_000, 21_000)))).toBe(1_000);
    await during.close();
    const before = readFileSync(log);
    expect(ours.installAside(pending)).toBe(false);
    await ours.close();
    expect(existsSync(pending.compacted.aside)).toBe(false);
    expect(readFileSync(log).equals(before)).toBe(true);
    const after = await openSeenSet({ backend: "disk", path: dir });
    expect(news(await after.addMany(keys(0, 21_000)))).toBe(0);
    await after.close();
  });
});
