// Format v1: round trips, golden files that must load forever, and every kind of bad bytes.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import {
  AgePartitionedFilter,
  Deduplicator,
  FingerprintSet,
  IdfTable,
  MinHashIndex,
  NearDupFilter,
  NearDupIndex,
  simhashMany,
  MultiDimBloomFilter,
  PartitionedBloomFilter,
  TimeWindowFilter,
  BlockedBloomFilter,
  BloomFilter,
  ChecksumMismatchError,
  CountingBloomFilter,
  FormatError,
  ScalableBloomFilter,
  TruncatedInputError,
  UnsupportedVersionError,
} from "../build/js/index.node.js";
import { Kind } from "../build/js/format/container.js";
import { ExactWindowSet } from "../build/js/window/exact-window-set.js";
import { ColdIndex } from "../build/js/seen/disk/cold-keys.js";
import { loadPartIndex } from "../build/js/seen/disk/part-index.js";
import { Arena } from "../build/js/wasm/arena.js";
import { blockedRate, ready, resigner, urls } from "./helpers.js";

let resign: Awaited<ReturnType<typeof resigner>>;
beforeAll(async () => {
  await ready();
  resign = await resigner();
});

const goldenKeys = Array.from(
  { length: 1000 },
  (_, i) => `https://golden.example/page/${i}?lang=${i % 3 === 0 ? "日本語" : "en"}`,
);
const golden = (name: string) => new Uint8Array(readFileSync(new URL(`./golden/${name}`, import.meta.url)));

type Loadable = {
  deserialize(bytes: Uint8Array): { hasMany(keys: string[]): Uint8Array; serialize(): Uint8Array; count: number };
};
const kinds: [string, Loadable, () => { addMany(keys: string[]): Uint8Array; serialize(): Uint8Array }][] = [
  ["BloomFilter", BloomFilter, () => new BloomFilter({ items: 5000, fpRate: 0.01 })],
  ["BlockedBloomFilter", BlockedBloomFilter, () => new BlockedBloomFilter({ items: 5000, fpRate: 0.01 })],
  [
    "partitioned BloomFilter",
    BloomFilter,
    () => new BloomFilter({ items: 5000, fpRate: 0.01, maxPartitionBytes: 1024 }),
  ],
  ["ScalableBloomFilter", ScalableBloomFilter, () => new ScalableBloomFilter({ fpRate: 0.01, initialItems: 1000 })],
  ["CountingBloomFilter", CountingBloomFilter, () => new CountingBloomFilter({ items: 5000, fpRate: 0.01 })],
];

describe.each(kinds)("%s", (_name, Class, make) => {
  it("round-trips: same answers, same count, identical bytes", () => {
    const filter = make();
    const keys = urls(4000, "rt");
    filter.addMany(keys);
    const bytes = filter.serialize();
    const loaded = Class.deserialize(bytes);
    expect(loaded.hasMany(keys).every((x) => x === 1)).toBe(true);
    const probes = urls(20_000, "probe");
    expect(loaded.hasMany(probes)).toEqual((filter as unknown as { hasMany(k: string[]): Uint8Array }).hasMany(probes));
    expect(loaded.serialize()).toEqual(bytes);
  });
});

/** A standard Bloom filter's rate from first principles: n keys, m bits, k positions each. */
const standardRate = (n: number, m: number, k: number) => (1 - Math.exp((-k * n) / m)) ** k;

describe("golden files (format v1 must load forever)", () => {
  // The geometries make-golden.js wrote (1000 keys each): m bits and k from the files' own
  // headers would be crawlsieve's reading, so they are restated here.
  const standard = standardRate(1000, 9586, 7);
  it.each([
    ["bloom-v1.bin", BloomFilter as Loadable, standard],
    ["blocked-bloom-v1.bin", BlockedBloomFilter as Loadable, blockedRate(1000, 10240, 7)],
    ["scalable-bloom-v1.bin", ScalableBloomFilter as Loadable, undefined],
    ["counting-bloom-v1.bin", CountingBloomFilter as Loadable, standard],
    ["age-partitioned-v1.bin", AgePartitionedFilter as unknown as Loadable, undefined],
    ["multi-dim-v1.bin", MultiDimBloomFilter as unknown as Loadable, undefined],
    // One live slice holds the keys; the other 23 are empty and match nothing.
    [
      "time-window-v1.bin",
      {
        deserialize: (bytes: Uint8Array) => TimeWindowFilter.deserialize(bytes, () => Date.UTC(2026, 0, 1, 12)),
      } as unknown as Loadable,
      standard,
    ],
  ])("%s loads, answers and re-serializes to the same bytes", (name, Class, expected) => {
    const bytes = golden(name);
    const filter = Class.deserialize(bytes);
    expect(filter.hasMany(goldenKeys).every((x) => x === 1)).toBe(true);
    const fp = filter.hasMany(urls(100_000, "golden-absent")).reduce((a, b) => a + b, 0) / 100_000;
    if (expected !== undefined) {
      // About 1,000 false positives expected: the bounds are several standard deviations wide, and
      // a 2x regression (or a layout that sets fewer bits) falls outside them.
      expect(fp).toBeGreaterThan(expected * 0.8);
      expect(fp).toBeLessThan(expected * 1.25);
    } else {
      // Several stages or vectors: bounded by the filter's own fill-based estimate, both sides.
      const estimate = (filter as unknown as { estimatedFpRate(): number }).estimatedFpRate();
      expect(fp).toBeGreaterThan(estimate / 1.5);
      expect(fp).toBeLessThan(estimate * 1.5);
    }
    expect(filter.serialize()).toEqual(bytes);
  });
});

describe("golden SimHash structures (format v1 must load forever)", () => {
  it("near-dup-index-v1.bin loads, finds every golden key's fingerprint and re-serializes to the same bytes", () => {
    const bytes = golden("near-dup-index-v1.bin");
    const index = NearDupIndex.deserialize(bytes);
    const fps = simhashMany(goldenKeys, { shingle: 1 });
    const answers = index.queryMany(fps);
    answers.forEach((list, i) => expect(list.some((m) => m.id === i && m.distance === 0)).toBe(true));
    expect(index.tables).toBe(10);
    expect(index.serialize()).toEqual(bytes);
  });

  it("idf-v1.bin loads with its counts and re-serializes to the same bytes", () => {
    const bytes = golden("idf-v1.bin");
    const table = IdfTable.deserialize(bytes);
    expect(table.documents).toBe(1000);
    expect(table.serialize()).toEqual(bytes);
    expect(table.serialize()).toEqual(IdfTable.build(goldenKeys, { shingle: 1 }).serialize());
  });
});

describe("bad headers", () => {
  const bytes = () => new BloomFilter({ items: 100, fpRate: 0.01 }).serialize();

  it("names a wrong magic", () => {
    const bad = bytes();
    bad[0] = 0x50;
    expect(() => BloomFilter.deserialize(bad)).toThrow(/not a crawlsieve structure: magic 0x56495350/);
  });

  it("names an unknown format version", () => {
    const bad = bytes();
    bad[4] = 2;
    expect(() => BloomFilter.deserialize(bad)).toThrow(UnsupportedVersionError);
    expect(() => BloomFilter.deserialize(bad)).toThrow(/unsupported format version 2/);
  });

  it("refuses another kind", () => {
    const blocked = new BlockedBloomFilter({ items: 100, fpRate: 0.01 }).serialize();
    expect(() => BloomFilter.deserialize(blocked)).toThrow(
      /kind 2 \(BlockedBloomFilter\) where BloomFilter was expected/,
    );
    expect(() => ScalableBloomFilter.deserialize(bytes())).toThrow(/where ScalableBloomFilter was expected/);
  });

  it("refuses trailing bytes, absurd lengths and non-bytes before allocating", () => {
    const good = bytes();
    const longer = new Uint8Array(good.length + 3);
    longer.set(good);
    expect(() => BloomFilter.deserialize(longer)).toThrow(/3 bytes after its end/);
    const huge = good.slice();
    new DataView(huge.buffer).setBigUint64(16, 1n << 60n, true);
    expect(() => BloomFilter.deserialize(huge)).toThrow(/payload length \d+ is impossible|truncated/);
    const mismatched = good.slice();
    new DataView(mismatched.buffer).setUint32(12, 36, true);
    expect(() => BloomFilter.deserialize(mismatched)).toThrow(FormatError);
    expect(() => BloomFilter.deserialize("CSIV" as never)).toThrow(/must be a Uint8Array/);
    expect(() => BloomFilter.deserialize(new Uint8Array(0))).toThrow(/expected 24 bytes, got 0/);
  });

  it("rejects parameters that contradict the payload even with a valid checksum", () => {
    // Re-sign a header whose partition count is doubled: the declared payload no longer fits.
    const good = bytes();
    const bad = good.slice();
    new DataView(bad.buffer).setUint32(24 + 8, 2, true);
    expect(() => BloomFilter.deserialize(bad)).toThrow(/payload of \d+ bytes where 2 x \d+ were declared/);
  });
});

/** One serializable kind: how to make a small populated instance's bytes, and how to load bytes. */
interface KindRow {
  readonly name: string;
  readonly kind: number;
  readonly bytes: () => Uint8Array;
  readonly load: (bytes: Uint8Array) => unknown;
  /** Payload segment lengths, for kinds whose payload is checksummed in several segments. */
  readonly segments?: (bytes: Uint8Array) => number[];
}

const texts = Array.from(
  { length: 40 },
  (_, i) => `document ${i % 7} about crawling the web ${i} times with words ${i * 3} and more words`,
);
const instant = () => Date.UTC(2026, 0, 1, 12);
/** A filled structure's bytes. */
const filled =
  <T extends { serialize(): Uint8Array }>(make: () => T, fill: (s: T) => void) =>
  () => {
    const structure = make();
    fill(structure);
    return structure.serialize();
  };
const partitionSegments = (bytes: Uint8Array) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const partitions = view.getUint32(24 + 8, true);
  const payload = Number(view.getBigUint64(16, true));
  return Array.from({ length: partitions }, () => payload / partitions);
};

const rows: KindRow[] = [
  {
    name: "BloomFilter",
    kind: Kind.BloomFilter,
    bytes: filled(
      () => new BloomFilter({ items: 500, fpRate: 0.01 }),
      (f) => f.addMany(urls(300, "t")),
    ),
    load: (b) => BloomFilter.deserialize(b),
  },
  {
    name: "partitioned BloomFilter",
    kind: Kind.BloomFilter,
    bytes: filled(
      () => new BloomFilter({ items: 5000, fpRate: 0.01, maxPartitionBytes: 1024 }),
      (f) => f.addMany(urls(300, "t")),
    ),
    load: (b) => BloomFilter.deserialize(b),
    segments: partitionSegments,
  },
  // Shared-memory filters write and read kind 1; loading sizes a shared memory from the parameters, so it must refuse what BloomFilter refuses.
  {
    name: "PartitionedBloomFilter",
    kind: Kind.BloomFilter,
    bytes: filled(
      () => new PartitionedBloomFilter({ items: 500, fpRate: 0.01, shards: 1 }),
      (f) => f.addMany(urls(300, "t")),
    ),
    load: (b) => PartitionedBloomFilter.deserialize(b),
  },
  {
    name: "PartitionedBloomFilter, 4 shards",
    kind: Kind.BloomFilter,
    bytes: filled(
      () => new PartitionedBloomFilter({ items: 2000, fpRate: 0.01, shards: 4 }),
      (f) => f.addMany(urls(300, "t")),
    ),
    load: (b) => PartitionedBloomFilter.deserialize(b),
    segments: partitionSegments,
  },
  {
    name: "BlockedBloomFilter",
    kind: Kind.BlockedBloomFilter,
    bytes: filled(
      () => new BlockedBloomFilter({ items: 500, fpRate: 0.01 }),
      (f) => f.addMany(urls(300, "t")),
    ),
    load: (b) => BlockedBloomFilter.deserialize(b),
  },
  {
    name: "ScalableBloomFilter",
    kind: Kind.ScalableBloomFilter,
    bytes: filled(
      () => new ScalableBloomFilter({ fpRate: 0.01, initialItems: 100 }),
      (f) => f.addMany(urls(300, "t")),
    ),
    load: (b) => ScalableBloomFilter.deserialize(b),
  },
  {
    name: "CountingBloomFilter",
    kind: Kind.CountingBloomFilter,
    bytes: filled(
      () => new CountingBloomFilter({ items: 500, fpRate: 0.01 }),
      (f) => f.addMany(urls(300, "t")),
    ),
    load: (b) => CountingBloomFilter.deserialize(b),
    segments: partitionSegments,
  },
  {
    name: "TimeWindowFilter",
    kind: Kind.TimeWindowFilter,
    bytes: filled(
      () => new TimeWindowFilter({ granularity: "hour", slices: 3, itemsPerSlice: 100, fpRate: 0.01, now: instant }),
      (f) => f.seenMany(urls(80, "t")),
    ),
    load: (b) => TimeWindowFilter.deserialize(b, instant),
  },
  {
    name: "AgePartitionedFilter",
    kind: Kind.AgePartitionedFilter,
    bytes: filled(
      () => new AgePartitionedFilter({ items: 200, fpRate: 0.01 }),
      (f) => f.addMany(urls(150, "t")),
    ),
    load: (b) => AgePartitionedFilter.deserialize(b),
  },
  {
    name: "MultiDimBloomFilter",
    kind: Kind.MultiDimBloomFilter,
    bytes: filled(
      () => new MultiDimBloomFilter({ groups: 2, bits: 512, hashes: 3 }),
      (f) => f.addMany(urls(60, "t")),
    ),
    load: (b) => MultiDimBloomFilter.deserialize(b),
  },
  {
    name: "IdfTable",
    kind: Kind.IdfTable,
    bytes: () => IdfTable.build(texts, { shingle: 2 }).serialize(),
    load: (b) => IdfTable.deserialize(b),
  },
  {
    name: "NearDupIndex",
    kind: Kind.NearDupIndex,
    bytes: filled(
      () => new NearDupIndex({ maxDistance: 3 }),
      (x) =>
        x.addMany(
          texts.map((_, i) => i),
          simhashMany(texts),
        ),
    ),
    load: (b) => NearDupIndex.deserialize(b),
  },
  {
    name: "MinHashIndex",
    kind: Kind.MinHashIndex,
    bytes: filled(
      () => new MinHashIndex({ threshold: 0.8, sketchSize: 16 }),
      (x) =>
        x.addMany(
          texts.map((_, i) => i),
          texts,
        ),
    ),
    load: (b) => MinHashIndex.deserialize(b),
  },
  {
    name: "NearDupFilter",
    kind: Kind.NearDupFilter,
    bytes: filled(
      () => new NearDupFilter({ items: 100, fpRate: 0.01 }),
      (x) => x.addMany(texts),
    ),
    load: (b) => NearDupFilter.deserialize(b),
  },
  {
    name: "Deduplicator",
    kind: Kind.Deduplicator,
    bytes: filled(
      () => new Deduplicator({ items: 100 }),
      (x) => x.checkMany([...urls(120, "t"), ...urls(30, "t")]),
    ),
    load: (b) => Deduplicator.deserialize(b),
  },
  {
    name: "FingerprintSet",
    kind: Kind.FingerprintSet,
    bytes: filled(
      () => new FingerprintSet({ items: 100 }),
      (x) => x.addMany(urls(120, "t")),
    ),
    load: (b) => FingerprintSet.deserialize(b),
  },
  {
    name: "ExactWindowSet",
    kind: Kind.ExactWindowSet,
    bytes: filled(
      () => new ExactWindowSet({ ttl: "7d", items: 100, now: () => 1.8e12 }),
      (x) => {
        x.addMany(urls(120, "t"));
        x.forgetHost("example.com");
      },
    ),
    load: (b) => ExactWindowSet.deserialize(b, { ttl: "7d" }),
  },
  {
    // A file's structure (src/files/stored-file.ts): the bytes are written to a file and read back from it.
    name: "DiskPartIndex",
    kind: Kind.DiskPartIndex,
    bytes: () => {
      const index = new ColdIndex(new Arena(), 700, 16 << 20);
      const fingerprints = new Uint8Array(16 * 700);
      for (let i = 0; i < fingerprints.length; i++) fingerprints[i] = (i * 2654435761) >>> 24;
      index.add(fingerprints);
      const path = join(scratch, `made-${made++}`);
      index.save(path, 0x5eed);
      return new Uint8Array(readFileSync(path));
    },
    load: (b) => {
      const path = join(scratch, `read-${made++}`);
      writeFileSync(path, b);
      try {
        return loadPartIndex(path, new Arena());
      } finally {
        rmSync(path);
      }
    },
    // The index's block firsts, their checksums, the filter's bits: one checksum segment each.
    segments: (bytes) => {
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      const blocks = view.getUint32(24 + 4, true);
      return [20 * blocks, 8 * blocks, 64 * view.getUint32(24 + 8, true)];
    },
  },
];
const scratch = mkdtempSync(join(tmpdir(), "crawlsieve-part-index-"));
let made = 0;

/** Loads bytes; a structure that loads is disposed. Returns the error thrown, or undefined. */
function attempt(row: KindRow, bytes: Uint8Array): unknown {
  try {
    (row.load(bytes) as { dispose?(): void }).dispose?.();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe("every kind against bad bytes (one table)", () => {
  it("the table covers every kind of format v1", () => {
    expect([...new Set(rows.map((r) => r.kind))].sort((a, b) => a - b)).toEqual(
      Object.values(Kind).sort((a, b) => a - b),
    );
  });

  it("every kind is read back through the one recipe (src/format/recipe.ts): no other file parses a header", () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
      );
    const src = fileURLToPath(new URL("../src/", import.meta.url));
    const parsing = sources(src).filter(
      (file) =>
        !file.startsWith(join(src, "format")) &&
        /\b(readContainer|expectParams|verifiedPayload)\b/.test(readFileSync(file, "utf8")),
    );
    expect(parsing).toEqual([]);
    const recipes = sources(src).filter((file) => /\breadStored\(/.test(readFileSync(file, "utf8")));
    expect(recipes.length).toBeGreaterThanOrEqual(10);
  });

  describe.each(rows)("$name", (row) => {
    it("loads its own bytes, and re-signing them unchanged changes nothing", () => {
      const bytes = row.bytes();
      expect(attempt(row, bytes)).toBeUndefined();
      expect(resign(bytes, row.segments?.(bytes))).toEqual(bytes);
    });

    it("truncated: every shorter length is a TruncatedInputError", () => {
      const bytes = row.bytes();
      for (let length = 0; length < bytes.length; length += Math.max(1, Math.floor(bytes.length / 200))) {
        expect(attempt(row, bytes.subarray(0, length)), `length ${length}`).toBeInstanceOf(TruncatedInputError);
      }
      expect(attempt(row, bytes.subarray(0, bytes.length - 1))).toBeInstanceOf(TruncatedInputError);
    });

    it("damaged: a flipped bit anywhere is a FormatError (in the payload, a checksum mismatch)", () => {
      const bytes = row.bytes();
      for (let at = 0; at < bytes.length; at += Math.max(1, Math.floor(bytes.length / 300))) {
        const bad = bytes.slice();
        bad[at] ^= 0x10;
        expect(attempt(row, bad), `byte ${at}`).toBeInstanceOf(FormatError);
      }
      const payloadFlip = bytes.slice();
      payloadFlip[bytes.length - 9] ^= 1;
      expect(attempt(row, payloadFlip)).toBeInstanceOf(ChecksumMismatchError);
    });

    it("forged header and parameters (checksum re-signed): loads, or a FormatError; never another error", () => {
      const bytes = row.bytes();
      const segments = row.segments?.(bytes);
      const paramEnd = 24 + new DataView(bytes.buffer).getUint32(12, true);
      const words = [0, 1, 2, 0xffffffff, 0x80000000, 0x40000000, 0x7ff80000, 0x41e00000, 0xbff00000];
      const wrong: string[] = [];
      for (let at = 4; at + 4 <= paramEnd; at += 2) {
        for (const word of words) {
          const forged = bytes.slice();
          new DataView(forged.buffer).setUint32(at, word, true);
          if (forged.every((b, i) => b === bytes[i])) continue;
          const error = attempt(row, resign(forged, segments));
          if (error !== undefined && !(error instanceof FormatError))
            wrong.push(`byte ${at} = 0x${word.toString(16)}: ${String(error)}`);
        }
      }
      expect(wrong).toEqual([]);
    });

    it("wrong kind: every other kind's bytes are refused by kind", () => {
      for (const other of rows) {
        if (other.kind === row.kind) continue;
        const error = attempt(row, other.bytes());
        expect(error, other.name).toBeInstanceOf(FormatError);
        expect((error as FormatError).code, other.name).toBe("ERR_WRONG_KIND");
      }
    });
  });
});
