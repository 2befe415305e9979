// `items` of the exact set is checked before anything is reserved, and sizes only its first shard
// (issue 48, H3: every shard was made up front, so items 1e15 hung and 1e11 reserved 1.88 TB).
// The machine's memory and one memory's table are injected (CRAWLSIEVE_TEST_MACHINE_MEMORY,
// CRAWLSIEVE_TEST_PER_MEMORY): the test asserts shard counts, sizes and errors, never durations.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { FilterTooLargeError, FingerprintSet, openSeenSet } from "../build/js/index.node.js";
import { ready } from "./helpers.js";

beforeAll(ready);

const saved = { ...process.env };
afterEach(() => {
  for (const name of ["CRAWLSIEVE_TEST_MACHINE_MEMORY", "CRAWLSIEVE_TEST_PER_MEMORY"]) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** The error `make` throws (or undefined). */
function thrown(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
}

// A 16-byte fingerprint in a table loaded to at most 0.85 takes at least 16 / 0.85 bytes.
const LEAST_BYTES_PER_KEY = 16 / 0.85;

describe("FingerprintSet items", () => {
  it("sizes one shard, within one memory, however many keys are planned; the others come as it fills", () => {
    process.env.CRAWLSIEVE_TEST_PER_MEMORY = String(1 << 20);
    // 10^6 keys need about 19 MB: 32 memories of 1 MiB if all were made now.
    const set = new FingerprintSet({ items: 1e6 });
    expect(set.memories).toBe(1);
    // One memory: its table of at most 1 MiB and the module's data and batch regions.
    expect(set.byteLength).toBeLessThanOrEqual(2 << 20);
    const keys = Array.from({ length: 120_000 }, (_, i) => `https://a.example/${i}`);
    expect(set.addMany(keys).every((f) => f === 1)).toBe(true);
    expect(set.memories).toBeGreaterThan(1);
    expect(set.size).toBe(keys.length);
    expect(set.hasMany(keys).every((f) => f === 1)).toBe(true);
    set.dispose();
  });

  it("refuses a plan past the machine's memory before reserving any, naming it", async () => {
    process.env.CRAWLSIEVE_TEST_MACHINE_MEMORY = String(64 << 20);
    const error = thrown(() => new FingerprintSet({ items: 1e7 }));
    expect(error).toBeInstanceOf(FilterTooLargeError);
    expect(error).toMatchObject({ code: "ERR_TOO_LARGE" });
    expect((error as FilterTooLargeError).bytes).toBeGreaterThanOrEqual(1e7 * LEAST_BYTES_PER_KEY);
    expect((error as Error).message).toMatch(/items 10000000 .*machine's memory \(67108864 bytes/);
    await expect(openSeenSet({ backend: "memory", items: 1e7 })).rejects.toThrow(/items 10000000 /);
    // What fits is made: 10^6 keys take about 19 MB.
    const fits = new FingerprintSet({ items: 1e6 });
    expect(fits.memories).toBe(1);
    fits.dispose();
  });

  it("refuses openSeenSet({ backend: 'memory', items: 1e15 }) on this machine (about 19 PB of tables)", async () => {
    await expect(openSeenSet({ backend: "memory", items: 1e15 })).rejects.toThrow(FilterTooLargeError);
    await expect(openSeenSet({ backend: "memory", items: 1e15 })).rejects.toThrow(/items 1000000000000000 /);
  });

  it("refuses a plan past what 2^26 memories hold, whatever the machine", () => {
    process.env.CRAWLSIEVE_TEST_MACHINE_MEMORY = String(2 ** 60);
    // 16 KiB a memory: 64 partitions of 4 buckets of 4 slots, loaded to 0.85: 13 keys a partition, 832 a memory.
    process.env.CRAWLSIEVE_TEST_PER_MEMORY = String(16 << 10);
    const most = 2 ** 26 * 832;
    const error = thrown(() => new FingerprintSet({ items: most + 1 }));
    expect(error).toBeInstanceOf(FilterTooLargeError);
    expect((error as Error).message).toContain(`items ${most + 1} is past the ${most} keys`);
    const fits = new FingerprintSet({ items: most });
    expect(fits.memories).toBe(1);
    expect(fits.byteLength).toBeLessThanOrEqual(1 << 20);
    fits.dispose();
  });
});

describe("a disk store's items", () => {
  it("is refused past the machine's memory when every key is kept in memory, and sized to the budget under `memory`", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-bounds-"));
    await expect(
      openSeenSet({ backend: "disk", path: join(dir, "all-in-memory"), items: 1e15, durable: false }),
    ).rejects.toThrow(/items 1000000000000000 /);
    // Under a budget the store stays on disk past it: the plan sizes a table of the budget at most.
    const set = await openSeenSet({
      backend: "disk",
      path: join(dir, "budget"),
      items: 1e15,
      memory: 16 << 20,
      durable: false,
    });
    expect(Array.from(await set.addMany(["a", "b", "a"]))).toEqual([1, 1, 0]);
    expect(await set.size()).toBe(2);
    await set.close();
  });
});
