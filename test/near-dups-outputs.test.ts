// Where `near-dups --dedup` writes, when the writing fails (issue 48 C2 and L): a --removed file
// that cannot be written (/dev/full, a full disk) is exit 2 and one line naming it, never exit 0
// with part of the output; a full --tmp under the copy of stdin is a typed line naming the folder;
// stdout closed early (`| head -3`) leaves --removed complete for every record decided; a record
// without an id is named "FILE:LINE" ("stdin:LINE"), never a number a real id may have. The
// corpus is pairs of exact copies of unrelated pages, so what is removed is known by construction.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rng } from "./helpers.js";
import { onFullDisk } from "./support/full-disk.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-nd-outputs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 10,000 records: record 2k + 1 is an exact copy of record 2k, a page of 40 random words (ids 0..9999). */
const RECORDS = 10_000;
const next = rng(48);
const pages = Array.from({ length: RECORDS / 2 }, () =>
  Array.from({ length: 40 }, () => `w${Math.floor(next() * 1e9)}`).join(" "),
);
const LINES = Array.from({ length: RECORDS }, (_, id) => JSON.stringify({ id, text: pages[id >> 1] }));
const INPUT = join(dir, "pairs.jsonl");
writeFileSync(INPUT, LINES.map((line) => `${line}\n`).join(""));
/** The removed line of record 2k + 1, as the docs give its form. */
const removedLine = (k: number) => JSON.stringify({ id: 2 * k + 1, duplicate_of: 2 * k, similarity: 1 });

function run(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 1 << 28, timeout: 120_000 });
  return { code: result.status, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

describe("near-dups --dedup outputs that cannot be written", () => {
  it("the reference: with room, every even record is kept and every odd one removed as a copy of the one before", () => {
    const removed = join(dir, "all-removed.jsonl");
    const { code, stdout, stderr } = run(["near-dups", "--dedup", "--removed", removed, INPUT]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toBe(
      LINES.filter((_, id) => id % 2 === 0)
        .map((line) => `${line}\n`)
        .join(""),
    );
    expect(readFileSync(removed, "utf8")).toBe(
      Array.from({ length: RECORDS / 2 }, (_, k) => `${removedLine(k)}\n`).join(""),
    );
  });

  it("--removed /dev/full: exit 2 and one line naming the file and ENOSPC", () => {
    const { code, stderr } = run(["near-dups", "--dedup", "--removed", "/dev/full", INPUT]);
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: "crawlsieve: cannot write --removed /dev/full: ENOSPC: no space left on device, write\n",
    });
  });

  it("stdout on /dev/full with --removed: exit 2 and one line (the --removed file's close no longer waits forever)", () => {
    const full = openSync("/dev/full", "w");
    try {
      const result = spawnSync(
        process.execPath,
        [CLI, "near-dups", "--dedup", "--removed", join(dir, "r.jsonl"), INPUT],
        { stdio: ["ignore", full, "pipe"], timeout: 120_000 },
      );
      expect({ code: result.status, stderr: result.stderr.toString() }).toEqual({
        code: 2,
        stderr: "crawlsieve: cannot write output: ENOSPC: no space left on device, write\n",
      });
    } finally {
      closeSync(full);
    }
  });

  it("--removed on a full disk: exit 2 and one line naming the file", () => {
    const full = join(dir, "full");
    const { code, stdout, stderr } = onFullDisk(
      "64k",
      `"$NODE" "$CLI" near-dups --dedup --removed "$FULL/removed.jsonl" "$INPUT" > /dev/null 2> "$FULL/../err.txt" || echo "exit $?"; cat "$FULL/../err.txt"`,
      { FULL: full, CLI, INPUT, NODE: process.execPath },
    );
    expect({ code, stdout, stderr }).toEqual({
      code: 0,
      stdout: `exit 2\ncrawlsieve: cannot write --removed ${full}/removed.jsonl: ENOSPC: no space left on device, write\n`,
      stderr: "",
    });
  });

  it("stdin with a full --tmp: exit 2 and one line naming the folder, no stack trace", () => {
    const full = join(dir, "full-tmp");
    // Long lines of few distinct words: the copy of stdin fills the disk long before the sketches do.
    const long = Array.from({ length: 200 }, (_, id) =>
      JSON.stringify({ id, text: `${"lorem ipsum dolor ".repeat(2_000)}${id}` }),
    ).join("\n");
    writeFileSync(join(dir, "long.jsonl"), `${long}\n`);
    const { code, stdout, stderr } = onFullDisk(
      "256k",
      `"$NODE" "$CLI" near-dups --dedup --tmp "$FULL" < "$LONG" > /dev/null 2> "$FULL/../err-tmp.txt" || echo "exit $?"; cat "$FULL/../err-tmp.txt"`,
      { FULL: full, CLI, LONG: join(dir, "long.jsonl"), NODE: process.execPath },
    );
    expect({ code, stdout, stderr }).toEqual({
      code: 0,
      stdout: `exit 2\ncrawlsieve: cannot keep the copy of stdin that --dedup reads twice in ${full} (no space left on the device, ENOSPC); give a writable --tmp with room for the whole input\n`,
      stderr: "",
    });
  });

  it("stdout closed early (| head): exit 0, quiet, and --removed holds the removed record of every record up to the last kept one read", async () => {
    const removed = join(dir, "head-removed.jsonl");
    const child = spawn(process.execPath, [CLI, "near-dups", "--dedup", "--removed", removed, INPUT], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let received = "";
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    // As `head -3` does: the reader goes away after three lines (with whatever came in that read).
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (d) => {
        received += d;
        if (received.split("\n").length > 3) {
          child.stdout.destroy();
          resolve();
        }
      });
    });
    expect(await code).toBe(0);
    expect(stderr).toBe("");
    const kept = received.split("\n").slice(0, -1);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(RECORDS / 2);
    expect(kept).toEqual(LINES.filter((_, id) => id % 2 === 0).slice(0, kept.length));
    // A prefix of the reference, at least as long as what was read: record 2k was decided for every kept line 2k read, so was 2k - 1.
    const lines = readFileSync(removed, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.length).toBeGreaterThanOrEqual(kept.length - 1);
    expect(lines).toEqual(Array.from({ length: lines.length }, (_, k) => removedLine(k)));
  });
});

describe("near-dups --dedup names a record without an id by FILE:LINE", () => {
  it('{"id": 3} and the third line without an id stay two documents, in a file and on stdin', () => {
    const page = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const text = [
      JSON.stringify({ id: 3, text: page }),
      JSON.stringify({ id: "other", text: "an unrelated page of a few words only" }),
      JSON.stringify({ text: page }),
    ]
      .map((l) => `${l}\n`)
      .join("");
    const file = join(dir, "ids.jsonl");
    writeFileSync(file, text);
    const removed = join(dir, "ids-removed.jsonl");
    for (const [args, input, name] of [
      [[file], undefined, file],
      [[], text, "stdin"],
    ] as const) {
      const result = run(["near-dups", "--dedup", "--removed", removed, ...args], input);
      expect([result.code, result.stderr]).toEqual([0, ""]);
      expect(result.stdout).toBe(
        text
          .split("\n")
          .slice(0, 2)
          .map((l) => `${l}\n`)
          .join(""),
      );
      expect(readFileSync(removed, "utf8")).toBe(
        `${JSON.stringify({ id: `${name}:3`, duplicate_of: 3, similarity: 1 })}\n`,
      );
    }
  });
});
