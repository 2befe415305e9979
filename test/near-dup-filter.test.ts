// NearDupFilter (one blocked Bloom filter per LSH band) held against references written apart
// from it: the S-curve 1 - (1 - J^r)^b at each pair's exact Jaccard (test/helpers.ts, brute force
// over shingle sets), the blocked filters' false-positive rate from first principles, an exact set
// of band keys (what the Bloom filters approximate), the golden file, and bad input by name.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { FormatError, InvalidArgumentError, NearDupFilter, sizing } from "../build/js/index.node.js";
import { blockedRate, exactJaccard, fourSigma, ready, rng, setJaccard, shingleSet } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;

/** A word of letters only from a number (the kernel and exactJaccard agree on letter runs). */
const word = (n: number) => {
  let s = "";
  do {
    s += String.fromCharCode(97 + (n % 26));
    n = Math.floor(n / 26);
  } while (n > 0);
  return s + "q";
};

/** `count` texts of `length` words from a vocabulary of 10^7 (unrelated: Jaccard about 0). */
function unrelated(next: () => number, count: number, length: number): string[] {
  return Array.from({ length: count }, () => Array.from({ length }, () => word(Math.floor(next() * 1e7))).join(" "));
}

/** A copy of `text` with each word replaced by a fresh one with probability `edit`. */
function edited(next: () => number, text: string, edit: number): string {
  return text
    .split(" ")
    .map((w) => (next() < edit ? word(1e7 + Math.floor(next() * 1e7)) : w))
    .join(" ");
}

describe("sizing.optimalNearDupFilter", () => {
  it("splits the whole test's rate over the bands and meets the 64-bytes-a-text target at 1e-4", () => {
    const plan = sizing.optimalNearDupFilter({ items: 1e6, fpRate: 1e-4, threshold: 0.8 });
    expect([plan.bands, plan.rows]).toEqual([16, 16]);
    expect(1 - (1 - plan.bandFpRate) ** plan.bands).toBeCloseTo(1e-4, 12);
    const band = blockedRate(1e6, plan.band.bits, plan.band.hashes);
    expect(band).toBeLessThanOrEqual(plan.bandFpRate * 1.0001);
    expect(1 - (1 - band) ** plan.bands).toBeLessThanOrEqual(1e-4 * 1.0001);
    expect(plan.bytesPerItem).toBe((plan.bands * plan.band.bits) / 8 / 1e6);
    expect(plan.bytesPerItem).toBeLessThanOrEqual(64);
    expect(plan.recallAtThreshold).toBeCloseTo(1 - (1 - 0.8 ** 16) ** 16, 12);
  });

  it("chooses the layout of least S-curve error (false positives below J plus misses above, equal weights) among at most 16 bands, by Simpson's rule here", () => {
    const simpson = (f: (x: number) => number, a: number, b: number) => {
      const n = 200;
      const h = (b - a) / n;
      let total = f(a) + f(b);
      for (let i = 1; i < n; i++) total += (i % 2 === 1 ? 4 : 2) * f(a + i * h);
      return (total * h) / 3;
    };
    for (const t of [0.6, 0.8]) {
      let best = { error: Infinity, layout: "" };
      for (let b = 1; b <= 16; b++) {
        for (let r = 1; b * r <= 1024; r++) {
          const hit = (s: number) => 1 - (1 - s ** r) ** b;
          const error = simpson(hit, 0, t) + simpson((s) => 1 - hit(s), t, 1);
          if (error < best.error) best = { error, layout: `${b}x${r}` };
        }
      }
      const { bands, rows } = sizing.filterLayout(t);
      expect(`${bands}x${rows}`, `threshold ${t}`).toBe(best.layout);
    }
    // The verified index's layout would report half of the pairs at J = 0.5: no filter can.
    expect(sizing.bandHitRate(0.5, sizing.lshLayout(0.8))).toBeGreaterThan(0.8);
    expect(sizing.bandHitRate(0.5, sizing.filterLayout(0.8))).toBeLessThan(0.001);
  });

  it("refuses bad plans by name", () => {
    expect(() => sizing.optimalNearDupFilter({ items: 0, fpRate: 0.01, threshold: 0.8 })).toThrow(
      /items must be an integer from 1/,
    );
    expect(() => sizing.optimalNearDupFilter({ items: 10, fpRate: 1, threshold: 0.8 })).toThrow(
      /fpRate must be a number strictly between 0 and 1, got 1/,
    );
    expect(() => sizing.optimalNearDupFilter({ items: 10, fpRate: 0.01, threshold: 0 })).toThrow(
      /threshold must be a number in \(0, 1\], got 0/,
    );
    expect(() => sizing.optimalNearDupFilter({ items: 10, fpRate: 0.01, threshold: 0.8, bands: 2000 })).toThrow(
      InvalidArgumentError,
    );
  });

  it("`crawlsieve size --near-dup --json` prints the plan, bytesPerItem at the top", () => {
    const run = (args: string[]) => spawnSync(process.execPath, [CLI, "size", ...args], { encoding: "utf8" });
    const json = run(["--near-dup", "--items", "1000000", "--fp-rate", "0.0001", "--threshold", "0.8", "--json"]);
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout);
    const plan = sizing.optimalNearDupFilter({ items: 1e6, fpRate: 1e-4, threshold: 0.8 });
    expect(report).toMatchObject({ bytesPerItem: plan.bytesPerItem, bands: 16, rows: 16, bandFpRate: plan.bandFpRate });
    expect(report.bandFilters).toHaveLength(16);
    expect(report.bandFilters[0]).toMatchObject({ bits: plan.band.bits, hashes: plan.band.hashes });
    const text = run(["--near-dup", "--items", "1000000", "--fp-rate", "0.0001"]);
    expect(text.stdout).toMatch(/bands x rows\s+16 x 16/);
    expect(text.stdout).toMatch(/bytes per item\s+62\.\d+/);
    const bad = run(["--near-dup", "--items", "10", "--fp-rate", "0.01", "--threshold", "1.5"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--threshold must be a number greater than 0 and at most 1, e.g. 0.9, got "1.5"/);
  });
});

describe("NearDupFilter against exact Jaccard", () => {
  it("reports pairs at the rate 1 - (1 - J^r)^b of their exact Jaccard, and never misses one above 0.97", () => {
    const next = rng(47);
    const filter = new NearDupFilter({ items: 2000, fpRate: 1e-4, threshold: 0.8 });
    const bases = unrelated(next, 600, 120);
    const copies = bases.map((text, i) => edited(next, text, [0.002, 0.02, 0.04, 0.08][i % 4]));
    expect(Array.from(filter.addMany(bases)).filter(Boolean)).toEqual([]);
    const reported = filter.hasMany(copies);
    let expected = 0;
    let variance = 0;
    let hits = 0;
    copies.forEach((copy, i) => {
      const j = exactJaccard(bases[i], copy);
      const p = sizing.bandHitRate(j, filter.plan);
      expected += p;
      variance += p * (1 - p);
      hits += reported[i];
      if (j >= 0.97) expect(reported[i], `copy ${i} at J = ${j}`).toBe(1);
    });
    // OPH bins agree with probability J; the bands are near independent: the count stays within 4 sigma (and a little for densification).
    expect(Math.abs(hits - expected)).toBeLessThanOrEqual(4 * Math.sqrt(variance) + 0.02 * copies.length);
    expect(hits).toBeLessThan(copies.length);
    expect(filter.count).toBe(600);
  });

  it("the band filters' false positives on unrelated texts stay within the blocked filters' theory", () => {
    const next = rng(48);
    const items = 3000;
    const filter = new NearDupFilter({ items, fpRate: 0.05, threshold: 0.8 });
    filter.addMany(unrelated(next, items, 30));
    const probes = unrelated(next, 12_000, 30);
    const measured = Array.from(filter.hasMany(probes)).filter(Boolean).length / probes.length;
    const { bits, hashes } = filter.plan.band;
    const theory = 1 - (1 - blockedRate(items, bits, hashes)) ** filter.bands;
    expect(theory).toBeLessThanOrEqual(0.05 * 1.0001);
    expect(Math.abs(measured - theory)).toBeLessThanOrEqual(fourSigma(theory, probes.length) + 0.002);
    expect(filter.designedFpRate()).toBeCloseTo(theory, 6);
  });

  it("answers as an exact set of the same band keys (what its Bloom filters approximate), batch or one by one", () => {
    const next = rng(49);
    const bases = unrelated(next, 150, 60);
    const texts: string[] = [];
    for (let i = 0; i < 400; i++)
      texts.push(i < 150 ? bases[i] : edited(next, bases[Math.floor(next() * 150)], next() * 0.3));
    texts.push("", "   ", texts[3]);
    const batch = new NearDupFilter({ items: 1000, fpRate: 1e-6 });
    const single = new NearDupFilter({ items: 1000, fpRate: 1e-6 });
    const answers = batch.addMany(texts);
    const keys = batch.bandKeys(texts);
    const seen = Array.from({ length: batch.bands }, () => new Set<string>());
    const exact = texts.map((_, i) => {
      if (keys.empty[i] === 1) return 0;
      let hit = 0;
      for (let b = 0; b < batch.bands; b++) {
        const at = 2 * (i * batch.bands + b);
        const key = `${keys.keys[at]}:${keys.keys[at + 1]}`;
        if (seen[b].has(key)) hit = 1;
        seen[b].add(key);
      }
      return hit;
    });
    expect(Array.from(answers)).toEqual(exact);
    expect(texts.map((t) => (single.add(t) ? 1 : 0))).toEqual(exact);
    // Texts without a word are near-duplicates of nothing, and never recorded.
    expect(answers.slice(-3)).toEqual(new Uint8Array([0, 0, 1]));
    expect(batch.count).toBe(401);
    expect(batch.serialize()).toEqual(single.serialize());
  });

  it("hasMany records nothing", () => {
    const filter = new NearDupFilter({ items: 100, fpRate: 0.001 });
    const texts = unrelated(rng(50), 3, 50);
    expect(filter.hasMany(texts)).toEqual(new Uint8Array(3));
    expect(filter.hasMany(texts)).toEqual(new Uint8Array(3));
    expect(filter.addMany([texts[0], texts[0]])).toEqual(new Uint8Array([0, 1]));
    expect(filter.has(texts[0])).toBe(true);
    expect(filter.count).toBe(2);
  });
});

describe("NearDupFilter serialization (format v1, kind 13)", () => {
  const goldenKeys = Array.from(
    { length: 1000 },
    (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`,
  );

  it("loads the golden file byte for byte, with every golden text in it, and this build writes the same bytes", () => {
    const bytes = new Uint8Array(readFileSync(new URL("./golden/near-dup-filter-v1.bin", import.meta.url)));
    const loaded = NearDupFilter.deserialize(bytes);
    expect([loaded.threshold, loaded.bands, loaded.rows, loaded.plan.items, loaded.plan.fpRate]).toEqual([
      0.8, 13, 3, 1000, 0.01,
    ]);
    expect(Array.from(loaded.hasMany(goldenKeys)).every((x) => x === 1)).toBe(true);
    expect(loaded.serialize()).toEqual(bytes);
    const fresh = new NearDupFilter({ items: 1000, fpRate: 0.01, threshold: 0.8, bands: 13, rows: 3 });
    fresh.addMany(goldenKeys);
    expect(fresh.serialize()).toEqual(bytes);
  });

  it("round-trips answers, and refuses bytes whose bands do not fit its plan", () => {
    const next = rng(51);
    const filter = new NearDupFilter({ items: 500, fpRate: 0.001, threshold: 0.7, shingle: 2 });
    const texts = unrelated(next, 300, 40);
    filter.addMany(texts);
    const loaded = NearDupFilter.deserialize(filter.serialize());
    const probes = [...texts.slice(0, 50).map((t) => edited(next, t, 0.05)), ...unrelated(next, 50, 40)];
    expect(loaded.hasMany(probes)).toEqual(filter.hasMany(probes));
    expect([loaded.count, loaded.params.shingle, loaded.threshold]).toEqual([300, 2, 0.7]);
    // Another plan's bands under these parameters: the bands' own headers disagree.
    const other = new NearDupFilter({ items: 600, fpRate: 0.001, threshold: 0.7, shingle: 2 }).serialize();
    const forged = filter.serialize();
    const head = 24 + 48;
    const spliced = new Uint8Array([...forged.subarray(0, head), ...other.subarray(head)]);
    new DataView(spliced.buffer).setBigUint64(16, BigInt(other.length - head - 8), true);
    expect(() => NearDupFilter.deserialize(spliced)).toThrow(FormatError);
  });
});

describe("NearDupFilter bad input", () => {
  it("names the bad value", () => {
    expect(() => new NearDupFilter({ items: -1, fpRate: 0.01 })).toThrow(
      /items must be an integer from 1 to \d+, got -1/,
    );
    expect(() => new NearDupFilter({ items: 10, fpRate: 0 })).toThrow(
      /fpRate must be a number strictly between 0 and 1, got 0/,
    );
    expect(() => new NearDupFilter({ items: 10, fpRate: 0.01, threshold: 2 })).toThrow(
      /threshold must be a number in \(0, 1\], got 2/,
    );
    expect(() => new NearDupFilter({ items: 10, fpRate: 0.01, shingle: 0 })).toThrow(
      /shingle must be an integer from 1/,
    );
    const filter = new NearDupFilter({ items: 10, fpRate: 0.01 });
    expect(() => filter.addMany("text" as unknown as string[])).toThrow(
      /texts must be an array of strings, got "text"/,
    );
    expect(() => filter.hasMany(["a", 5 as unknown as string])).toThrow(/texts\[1\] must be a string, got 5/);
    expect(() => filter.addKeys({ count: 2, keys: new Uint32Array(3), empty: new Uint8Array(2) })).toThrow(
      InvalidArgumentError,
    );
    filter.dispose();
    expect(() => filter.add("x")).toThrow(/NearDupFilter was used after dispose/);
  });
});

describe("crawlsieve near-dups --filter", () => {
  const run = (args: string[], input?: string) => {
    const result = spawnSync(process.execPath, [CLI, "near-dups", "--filter", ...args], {
      input,
      encoding: "utf8",
      maxBuffer: 1 << 26,
    });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it("prints each record as it came unless an earlier one is a near-duplicate: never one within 0.97 of an earlier record, never one sharing nothing with all", () => {
    const next = rng(52);
    const bases = unrelated(next, 60, 80);
    const records: string[] = [];
    const texts: string[] = [];
    for (let i = 0; i < 240; i++) {
      const text = i < 60 ? bases[i] : edited(next, bases[Math.floor(next() * 60)], [0.002, 0.01, 0.05, 0.3][i % 4]);
      texts.push(text);
      // Spacing, key order and escapes of each line stay as they came.
      records.push(
        i % 3 === 0 ? `{"text": "${text}",  "id": ${i}, "x": "\\u00e9"}` : JSON.stringify({ id: `r${i}`, text }),
      );
    }
    records.splice(100, 0, '{"id": "no-text"}');
    texts.splice(100, 0, "");
    const { code, stdout } = run(["--threshold", "0.8", "--items", "1000"], records.join("\n") + "\n");
    expect(code).toBe(0);
    const printed = new Set(stdout.split("\n").filter(Boolean));
    const api = new NearDupFilter({ items: 1000, fpRate: 1e-4, threshold: 0.8 }).addMany(texts);
    const sets = texts.map(shingleSet);
    records.forEach((record, i) => {
      expect(printed.has(record), `record ${i}`).toBe(api[i] === 0);
      let best = 0;
      for (let j = 0; j < i; j++) best = Math.max(best, setJaccard(sets[i], sets[j]));
      if (best >= 0.97) expect(printed.has(record), `record ${i}, J = ${best} to an earlier one`).toBe(false);
      if (best === 0) expect(printed.has(record), `record ${i}, alone`).toBe(true);
    });
    expect(stdout.split("\n").filter(Boolean)).toEqual(records.filter((r) => printed.has(r)));
  });

  it("reads files and stdin in order, and refuses flags of the other modes by name", () => {
    const a = JSON.stringify({ id: 1, text: "one two three four five six seven eight nine ten" });
    const b = JSON.stringify({ id: 2, text: "one two three four five six seven eight nine ten" });
    const dir = mkdtempSync(join(tmpdir(), "cs-filter-"));
    writeFileSync(join(dir, "a.jsonl"), a + "\n");
    expect(run([join(dir, "a.jsonl"), "-"], b + "\n").stdout).toBe(a + "\n");
    expect(run(["--dedup"]).stderr).toMatch(/--dedup does not apply to --filter/);
    expect(run(["--removed", "x"]).stderr).toMatch(/--removed does not apply to --filter/);
    expect(run(["--items", "0"]).stderr).toMatch(/--items must be an integer from 1/);
    expect(run(["--fp-rate", "2"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--fp-rate must be a number strictly between 0 and 1, got "2"/),
    });
    expect(run(["-"], "not json\n")).toMatchObject({ code: 2, stderr: expect.stringMatching(/stdin line 1/) });
    const noFilter = spawnSync(process.execPath, [CLI, "near-dups", "--items", "10"], { encoding: "utf8", input: "" });
    expect(noFilter.stderr).toMatch(/--items applies to --filter; add --filter/);
  });
});
