// The main entry's values: the job doors listed here and nothing else (issue 43 keeps it near 50),
// plus the names kept one minor version as deprecated aliases, each marked so in the shipped .d.ts.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const DOORS = [
  "AgePartitionedFilter",
  "BlockedBloomFilter",
  "BloomFilter",
  "ChecksumMismatchError",
  "CountingBloomFilter",
  "CrawlsieveError",
  "Deduplicator",
  "DisposedError",
  "FORMAT_VERSION",
  "FilterTooLargeError",
  "FingerprintSet",
  "FormatError",
  "InvalidArgumentError",
  "LineDeduplicator",
  "Md5",
  "MinHashIndex",
  "MinHashSpill",
  "MultiDimBloomFilter",
  "NearDupFilter",
  "NearDupIndex",
  "NotInitializedError",
  "ScalableBloomFilter",
  "StorageQuotaError",
  "TRACKING_PARAMETERS",
  "TimeWindowFilter",
  "TruncatedInputError",
  "UnsupportedVersionError",
  "canonicalizeUrl",
  "clusterGroups",
  "dedupLines",
  "fileSpill",
  "groupPairs",
  "leaderClusters",
  "hammingDistance",
  "init",
  "initSync",
  "isSeenSet",
  "md5",
  "md5Hex",
  "md5Many",
  "nearDupGroups",
  "openDiskDeduplicator",
  "openSeenSet",
  "optimalBloom",
  "requestFingerprint",
  "sha1",
  "sha1Hex",
  "simhash",
  "sizing",
  "sketchMany",
  "withRecentCache",
  "xxh128",
  "xxh64",
];

const DEPRECATED = [
  "BloomWorkerPool",
  "DEFAULT_SHINGLE",
  "DEFAULT_SKETCH_SIZE",
  "IdfTable",
  "PartitionedBloomFilter",
  "PersistedSeenSet",
  "StoreDeduplicator",
  "WorkerJobError",
  "features",
  "isInitialized",
  "lshLayout",
  "md5Spans",
  "openDiskSeenSet",
  "openLmdbStore",
  "segmentWords",
  "simhashMany",
  "toHex",
];

describe("the main entry (Node)", () => {
  it("exports exactly the job doors and the deprecated aliases", async () => {
    const entry = await import("../build/js/index.node.js");
    const values = Object.keys(entry).sort();
    expect(values).toEqual([...DOORS, ...DEPRECATED].sort());
    expect(DOORS.length).toBeLessThanOrEqual(55);
  });

  it("marks every deprecated alias @deprecated in the shipped declarations", () => {
    const declared = ["deprecated.d.ts", "deprecated.node.d.ts"]
      .map((file) => readFileSync(new URL(`../build/js/${file}`, import.meta.url), "utf8"))
      .join("\n");
    const lines = declared.split("\n");
    for (const name of DEPRECATED.filter((n) => n !== "StoreDeduplicator")) {
      const at = lines.findIndex((line) => new RegExp(`^export declare (const|function|class) ${name}\\b`).test(line));
      expect(at, name).toBeGreaterThan(0);
      expect(lines[at - 1], name).toMatch(/^\/\*\* @deprecated Since 0\.3\.0/);
    }
    const store = readFileSync(new URL("../build/js/seen/lmdb/store-deduplicator.d.ts", import.meta.url), "utf8");
    expect(store).toMatch(/@deprecated Since 0\.3\.0[^\n]*openDiskDeduplicator/);
  });
});
