// The spill's kept lists with their fingerprints (src/lines/file-spill.ts): output(before) hands a
// store the fingerprints of every kept line exactly once, window by window, before any line of
// the window is given back, and only the kept lines come out, in spill order. Checked against
// the lines' own numbers (a fingerprint here is the line's index written into 16 bytes), over
// partitions whose kept lists span several reads and spill indexes over three windows (2^20 each).
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FileSpill } from "../build/js/lines/file-spill.js";
import { ready } from "./helpers.js";

beforeAll(ready);

const WINDOW = 2 ** 20;

describe("FileSpill.output(before)", () => {
  it("hands each kept line's fingerprint once, a window at a time, before that window's lines", () => {
    const dir = mkdtempSync(join(tmpdir(), "crawlsieve-file-spill-"));
    const spill = new FileSpill(dir, 24, 16 << 20);
    const lines = 2.5 * WINDOW;
    // Line i is "i\n"; the lines go in pieces, as the engine hands them over.
    for (let from = 0; from < lines; from += 100_000) {
      const text = Array.from({ length: Math.min(100_000, lines - from) }, (_, j) => `${from + j}\n`).join("");
      spill.append(new TextEncoder().encode(text), new Uint8Array(0), new Uint32Array(spill.partitions + 1));
    }
    // Partition p keeps the lines i = p (mod 256) that are not multiples of 3, in chunks of 700, with a restart in partition 5.
    const keptOf = (p: number) =>
      Array.from({ length: Math.ceil((lines - p) / 256) }, (_, j) => p + 256 * j).filter((i) => i % 3 !== 0);
    const fingerprintsOf = (indexes: number[]) => {
      const out = new Uint8Array(16 * indexes.length);
      const view = new DataView(out.buffer);
      indexes.forEach((v, j) => view.setFloat64(16 * j, v, true));
      return out;
    };
    for (let p = 0; p < spill.partitions; p++) {
      const kept = keptOf(p);
      if (p === 5) spill.keep(p, Float64Array.from([1, 2, 3]), true, fingerprintsOf([1, 2, 3]));
      for (let c = 0; c < kept.length; c += 700) {
        const part = kept.slice(c, c + 700);
        spill.keep(p, Float64Array.from(part), c === 0, fingerprintsOf(part));
      }
    }
    const handed: number[][] = [];
    let printed = 0;
    let lastPrinted = -1;
    let outOfOrder = 0;
    let beforeHanded = 0;
    let text = "";
    for (const chunk of spill.output((pieces) => {
      const window: number[] = [];
      for (const fingerprints of pieces) {
        const view = new DataView(fingerprints.buffer, fingerprints.byteOffset, fingerprints.length);
        for (let j = 0; j < fingerprints.length; j += 16) window.push(view.getFloat64(j, true));
      }
      handed.push(window);
    })) {
      text += new TextDecoder().decode(chunk);
      // Every line given back so far belongs to a window already handed over.
      const complete = text
        .slice(0, text.lastIndexOf("\n") + 1)
        .split("\n")
        .filter(Boolean)
        .map(Number);
      text = text.slice(text.lastIndexOf("\n") + 1);
      for (const i of complete) {
        if (i <= lastPrinted) outOfOrder++;
        if (Math.floor(i / WINDOW) >= handed.length) beforeHanded++;
        lastPrinted = i;
        printed++;
      }
    }
    expect(outOfOrder).toBe(0);
    expect(beforeHanded).toBe(0);
    const expected = Array.from({ length: lines }, (_, i) => i).filter((i) => i % 3 !== 0);
    expect(printed).toBe(expected.length);
    // Three windows, each handed the fingerprints of exactly its kept lines.
    expect(handed.length).toBe(3);
    handed.forEach((window, w) => {
      const want = expected.filter((i) => Math.floor(i / WINDOW) === w);
      const got = [...window].sort((a, b) => a - b);
      // Compared here, not with toEqual: a diff of arrays this long takes minutes to print.
      const firstDifference = got.findIndex((v, j) => v !== want[j]);
      expect({ window: w, length: got.length, firstDifference }).toEqual({
        window: w,
        length: want.length,
        firstDifference: -1,
      });
    });
    spill.close();
    expect(readdirSync(dir)).toEqual([]);
  }, 180_000);
});
