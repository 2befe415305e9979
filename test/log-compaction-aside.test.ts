// A compaction written aside as of a snapshot and installed later (src/seen/disk/file-log.ts
// compactAside/installAside, the first step of issue 46 item 1): records appended after the
// snapshot are copied onto the new file before it is renamed in, so no key acknowledged meanwhile
// is lost; one whose file another process replaced meanwhile is discarded, the file left as is.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
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
    // Opening the store removes asides left by killed processes, this one too (a limit of this
    // first step: a background merge's aside needs a name that open cleanup spares): install
    // must then fail and leave the file as it was, never install a file without its header.
    expect(() => file.installAside(pending)).toThrow();
    await file.close();
    const after = await openSeenSet({ backend: "disk", path: dir });
    expect(news(await after.addMany(keys(0, 60_000)))).toBe(0);
    expect(news(await after.addMany(keys(60_000, 60_010)))).toBe(10);
    await after.close();
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
