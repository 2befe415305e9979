// The persisted seen-sets' batch records (src/seen/fingerprint-batches.ts), shared by the browser
// seen-set's OPFS file and IndexedDB rows: a round trip; a record cut at any length, a bad last
// record or a zero tail is a torn write (reported with the bytes to keep, never thrown), while a
// bad record with whole records after it is corruption (a typed error); and addFresh hands back
// exactly the fingerprints it found new, in key order. In Node, the "browser" backend is refused.
import { describe, expect, it } from "vitest";
import {
  ChecksumMismatchError,
  CrawlsieveError,
  FingerprintSet,
  FormatError,
  initSync,
  openSeenSet,
} from "../build/js/index.node.js";
import { addFresh, decodeRecords, encodeRecords, RECORD_FINGERPRINTS } from "../build/js/seen/fingerprint-batches.js";

// The records are built while the tests are collected.
initSync();

const fps = (from: number, to: number) =>
  FingerprintSet.fingerprintMany(Array.from({ length: to - from }, (_, i) => `https://records.example/${from + i}`));
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};

describe("batch records", () => {
  const a = encodeRecords(fps(0, 3));
  const b = encodeRecords(fps(3, 10));
  const c = encodeRecords(fps(10, 12));

  it("read back as they were written", () => {
    const decoded = decodeRecords(concat(a, b, c), "test");
    expect(decoded.torn).toBe(false);
    expect(decoded.goodBytes).toBe(a.length + b.length + c.length);
    expect(decoded.batches.map((batch) => Array.from(batch.fingerprints))).toEqual(
      [fps(0, 3), fps(3, 10), fps(10, 12)].map((x) => Array.from(x)),
    );
    expect(a.length).toBe(8 + 3 * 16 + 8);
  });

  it("a batch larger than one record is written as several, read back whole", () => {
    const big = fps(0, 2 * RECORD_FINGERPRINTS + 5);
    const encoded = encodeRecords(big);
    expect(encoded.length).toBe(big.length + 3 * 16);
    const decoded = decodeRecords(encoded, "test");
    expect(decoded.batches.map((b) => b.fingerprints.length / 16)).toEqual([
      RECORD_FINGERPRINTS,
      RECORD_FINGERPRINTS,
      5,
    ]);
    expect(Buffer.from(concat(...decoded.batches.map((b) => b.fingerprints))).equals(Buffer.from(big))).toBe(true);
    expect(encodeRecords(new Uint8Array(0))).toHaveLength(0);
  });

  it("a last record cut at any length is a torn tail: the records before it are kept", () => {
    for (let cut = 1; cut < c.length; cut++) {
      const decoded = decodeRecords(concat(a, b, c.subarray(0, cut)), "test");
      expect(decoded, `cut at ${cut}`).toMatchObject({ torn: true, goodBytes: a.length + b.length });
      expect(decoded.batches).toHaveLength(2);
    }
  });

  it("a changed byte in the last record, or a tail of zeros, is torn; in an earlier record it is a ChecksumMismatchError", () => {
    for (let at = 8; at < c.length; at++) {
      const bad = concat(a, b, c);
      bad[a.length + b.length + at] ^= 0x40;
      expect(decodeRecords(bad, "test"), `byte ${at}`).toMatchObject({ torn: true, goodBytes: a.length + b.length });
    }
    expect(decodeRecords(concat(a, new Uint8Array(100)), "test")).toMatchObject({ torn: true, goodBytes: a.length });
    const middle = concat(a, b, c);
    middle[a.length + 20] ^= 1;
    expect(() => decodeRecords(middle, "test")).toThrow(ChecksumMismatchError);
    const garbage = concat(a, new Uint8Array(30).fill(7), c);
    expect(() => decodeRecords(garbage, "test")).toThrow(FormatError);
  });

  it("addFresh returns the flags and the new fingerprints only, in key order", () => {
    const set = new FingerprintSet();
    set.addFingerprints(fps(2, 4));
    const packed = concat(fps(0, 6), fps(0, 1));
    const { flags, fresh } = addFresh(set, packed);
    expect(Array.from(flags)).toEqual([1, 1, 0, 0, 1, 1, 0]);
    expect(Array.from(fresh)).toEqual(Array.from(concat(fps(0, 2), fps(4, 6))));
    set.dispose();
  });

  it("openSeenSet refuses the browser backend in Node with a typed error", async () => {
    const error = await openSeenSet({ backend: "browser", name: "x" } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrawlsieveError);
    expect((error as CrawlsieveError).code).toBe("ERR_BROWSER_ONLY");
  });
});
