// batchGroups (src/cli/batch-groups.ts), how `dedup --store` gathers line batches into commits:
// every batch once, in order; no group over its line bound (a batch that would overflow starts
// the next group); a batch that comes later than the wait ends its group, so a slow input's lines
// are committed without waiting for more.
import { describe, expect, it } from "vitest";
import { batchGroups } from "../build/js/cli/batch-groups.js";
import type { LineBatch } from "../build/js/cli/lines.js";

const batch = (id: number, count: number): LineBatch => ({
  data: Uint8Array.of(id),
  spans: new Uint32Array(2 * count),
  ends: new Uint32Array(count),
  count,
  unterminated: false,
});

async function* source(counts: number[], delayMs: (i: number) => number) {
  for (let i = 0; i < counts.length; i++) {
    const wait = delayMs(i);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    yield batch(i, counts[i]);
  }
}

async function groups(
  counts: number[],
  maxLines: number,
  delayMs: (i: number) => number = () => 0,
): Promise<number[][]> {
  const out: number[][] = [];
  for await (const group of batchGroups(source(counts, delayMs), maxLines)) out.push(group.map((b) => b.data[0]));
  return out;
}

describe("batchGroups", () => {
  it("keeps every batch once, in order, and no group over maxLines but a single larger batch", async () => {
    const counts = [4096, 4096, 3000, 4096, 100, 70_000, 4096, 1];
    const got = await groups(counts, 10_000);
    expect(got.flat()).toEqual(counts.map((_, i) => i));
    for (const group of got) {
      const lines = group.reduce((n, i) => n + counts[i], 0);
      if (group.length > 1) expect(lines).toBeLessThanOrEqual(10_000);
    }
    expect(got).toEqual([[0, 1], [2, 3, 4], [5], [6, 7]]);
  });

  it("ends a group when the next batch is late, so a slow input is not held back", async () => {
    const got = await groups([10, 10, 10, 10], 1000, (i) => (i === 2 ? 60 : 0));
    expect(got).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });
});
