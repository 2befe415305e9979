// A run's file of unprinted lines (src/seen/disk/unprinted-file.ts) against a model: batches are
// recorded, marks taken when output is handed over, and marks confirmed late and out of step, as
// the pipeline does (a write in flight while the next batch is recorded). After every step the
// file holds exactly the batches no confirmed mark covers, across the file being emptied and its
// live bytes moved to the front (a mark taken before either once confirmed batches recorded after
// it: 7,192 lines lost in a CI run under load); a dead run's file is read back the same by
// deadRuns, and a live run's is passed over.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { deadRuns, UnprintedFile } from "../build/js/seen/disk/unprinted-file.js";
import { randomBytes, ready, rng } from "./helpers.js";

beforeAll(ready);

const hex = (batches: Uint8Array[]) => batches.map((batch) => Buffer.from(batch).toString("hex"));

describe("the file of unprinted lines", () => {
  it("holds exactly the batches no confirmed mark covers, through emptyings and moves to the front", () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-unprinted-"));
    const file = UnprintedFile.create(dir, false, join(dir, "fingerprints.log"));
    const random = rng(48_3);
    const batches: Uint8Array[] = [];
    // Each mark: how many batches were recorded when it was taken.
    const marks: { mark: number; batches: number }[] = [];
    let confirmed = 0;
    for (let step = 0; step < 400; step++) {
      const r = random();
      if (r < 0.45) {
        // Mostly small batches, now and then one of up to 50,000 fingerprints (800 KB): dead bytes pass 1 MiB.
        const n = random() < 0.2 ? 1 + Math.floor(random() * 50_000) : 1 + Math.floor(random() * 300);
        const batch = randomBytes(random, 16 * n);
        file.record(batch, true);
        batches.push(batch);
      } else if (r < 0.75) {
        marks.push({ mark: file.mark(), batches: batches.length });
      } else if (marks.length > 0) {
        // The oldest write in flight completes (sometimes two at once, or everything).
        const taken = random() < 0.1 ? marks.splice(0) : marks.splice(0, 1);
        for (const { mark, batches: covered } of taken) {
          file.printed(mark);
          confirmed = Math.max(confirmed, covered);
        }
      }
      expect(hex(file.unprinted()), `step ${step}`).toEqual(hex(batches.slice(confirmed)));
    }
    file.printed(Infinity);
    expect(file.unprinted()).toEqual([]);
    file.close();
  });

  it("a dead run's batches are read back by deadRuns; a live run's file is passed over", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-unprinted-dead-"));
    const url = new URL("../build/js/seen/disk/unprinted-file.js", import.meta.url).href;
    // A child records two batches, confirms the first, says so and waits to be killed.
    const entry = new URL("../build/js/index.node.js", import.meta.url).href;
    const script = `import { UnprintedFile } from ${JSON.stringify(url)};
      import { initSync } from ${JSON.stringify(entry)};
      initSync();
      const file = UnprintedFile.create(${JSON.stringify(dir)}, true, "log");
      file.record(new Uint8Array(32).fill(1), true);
      const mark = file.mark();
      file.record(new Uint8Array(16).fill(2), true);
      file.printed(mark);
      console.log("ready");
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.once("data", () => resolve());
      child.once("close", (code) => reject(new Error(`the child ended first (${code})`)));
    });
    expect(deadRuns(dir, undefined)).toEqual([]);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("close", resolve));
    const dead = deadRuns(dir, undefined);
    expect(dead).toHaveLength(1);
    expect(hex(dead[0].batches)).toEqual([Buffer.alloc(16, 2).toString("hex")]);
    expect(dead[0].lines).toBe(1);
    dead[0].take();
    expect(deadRuns(dir, undefined)).toEqual([]);
  });
});
