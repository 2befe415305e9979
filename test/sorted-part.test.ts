// Look-ups in the sorted part of a compacted seen-set file (src/seen/disk/sorted-part.ts): the
// records read for a batch of keys hold every one of them that the file holds, checked against a
// JavaScript Set of the same random fingerprints (node:crypto), for keys present, absent, equal
// to a record's first fingerprint and next to one; a damaged index or record is a typed error.
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createLogFile } from "../build/js/seen/disk/file-log.js";
import { writeCompaction } from "../build/js/seen/disk/log-compaction.js";
import { SortedPart } from "../build/js/seen/disk/sorted-part.js";
import { Arena } from "../build/js/wasm/arena.js";
import { encodeRecords } from "../build/js/seen/fingerprint-batches.js";
import { ready } from "./helpers.js";

beforeAll(ready);

const KEYS = 200_000;
const RECORD = 65_536;
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** A compacted file of `packed` fingerprints (16 bytes each) in a new folder: its path, and its sorted count from the header. */
function compactedFile(packed: Uint8Array): { path: string; count: number } {
  const dir = mkdtempSync(join(tmpdir(), "crawlsieve-sorted-"));
  const log = join(dir, "fingerprints.log");
  createLogFile(log, "xxh128", [encodeRecords(packed)]);
  const path = join(dir, "compacted");
  const fd = openSync(log, "r");
  try {
    const head = (count: number) => {
      const h = new Uint8Array(16);
      new DataView(h.buffer).setUint32(12, count, true);
      return h;
    };
    const done = writeCompaction(
      log,
      fd,
      statSync(log).size,
      16,
      head,
      false,
      new Arena(),
      join(dir, "fingerprints.log.1.00000000.tmp"),
    );
    writeFileSync(path, readFileSync(done.aside));
    return { path, count: done.fingerprints };
  } finally {
    closeSync(fd);
  }
}

/** The fingerprints of the records read for `keys` (packed), as hex strings, and how many records were read. */
function lookUp(
  path: string,
  count: number,
  keys: Uint8Array,
  stride = 16,
): { found: Set<string>; records: number; of: number } {
  const part = SortedPart.read(openSync(path, "r"), path, 16, count, statSync(path).size);
  try {
    part.mark(keys, stride);
    const found = new Set<string>();
    part.eachMarked((fingerprints: Uint8Array) => {
      for (let at = 0; at < fingerprints.length; at += 16) found.add(hex(fingerprints.subarray(at, at + 16)));
    });
    return { found, records: part.recordsRead, of: part.records };
  } finally {
    part.close();
  }
}

describe("the sorted part of a compacted seen-set file", () => {
  const packed = new Uint8Array(randomBytes(16 * KEYS));
  const all = new Set(Array.from({ length: KEYS }, (_, i) => hex(packed.subarray(16 * i, 16 * i + 16))));
  let file: { path: string; count: number };
  beforeAll(() => {
    file = compactedFile(packed);
  });

  it("reads, for each key, records holding it when the file does; a few keys read few records", () => {
    expect(file.count).toBe(KEYS);
    const bytes = readFileSync(file.path);
    // Each record's first fingerprint (fixed places), and the next byte-wise neighbours of it.
    const firsts = Array.from(
      { length: Math.ceil(KEYS / RECORD) },
      (_, r) => new Uint8Array(bytes.subarray(16 + r * (16 * RECORD + 16) + 8, 16 + r * (16 * RECORD + 16) + 24)),
    );
    const nudged = firsts.map((f) => {
      const g = new Uint8Array(f);
      g[0] ^= 1;
      return g;
    });
    const absent = new Uint8Array(randomBytes(16 * 1000));
    const present = Array.from({ length: 1000 }, () => Math.floor(Math.random() * KEYS)).map((i) =>
      packed.subarray(16 * i, 16 * i + 16),
    );
    const keys = [
      ...firsts,
      ...nudged,
      ...present,
      ...Array.from({ length: 1000 }, (_, i) => absent.subarray(16 * i, 16 * i + 16)),
    ];
    // Spill records are longer than a fingerprint: a stride of 24 with 8 bytes of index after each.
    const entries = new Uint8Array(24 * keys.length);
    keys.forEach((k, i) => entries.set(k, 24 * i));
    const { found } = lookUp(file.path, file.count, entries, 24);
    const wrong = keys.filter((k) => all.has(hex(k)) !== found.has(hex(k))).length;
    expect(wrong).toBe(0);
    // Three keys: at most two records each, of four.
    const few = lookUp(file.path, file.count, Buffer.concat(present.slice(0, 1)));
    expect(few.of).toBe(4);
    expect(few.records).toBeLessThanOrEqual(2);
    expect(few.found.has(hex(present[0]))).toBe(true);
  });

  it("a damaged first fingerprint, count or record is a typed error naming the file, or an answer still right: never a key missed", () => {
    const bytes = readFileSync(file.path);
    const probes = Array.from({ length: 400 }, (_, i) =>
      packed.subarray(16 * ((i * 499) % KEYS), 16 * ((i * 499) % KEYS) + 16),
    );
    const keys = Buffer.concat(probes);
    const damages: [string, (b: Buffer) => void][] = [
      [
        "record 2's first fingerprint made larger than every key",
        (b) => b.fill(0xff, 16 + 2 * (16 * RECORD + 16) + 8, 16 + 2 * (16 * RECORD + 16) + 24),
      ],
      [
        "record 1's first fingerprint made smaller than every key",
        (b) => b.fill(0, 16 + (16 * RECORD + 16) + 8, 16 + (16 * RECORD + 16) + 24),
      ],
      ["a byte inside record 0", (b) => (b[16 + 8 + 16 * 777] ^= 4)],
      ["record 3's count", (b) => b.writeUInt32LE(5, 16 + 3 * (16 * RECORD + 16) + 4)],
    ];
    for (const [what, damage] of damages) {
      const copy = Buffer.from(bytes);
      damage(copy);
      const path = `${file.path}.damaged`;
      writeFileSync(path, copy);
      let result: ReturnType<typeof lookUp> | undefined;
      try {
        result = lookUp(path, file.count, keys);
      } catch (error) {
        expect((error as { code?: string }).code, what).toBe("ERR_STORE_CORRUPT");
        expect((error as Error).message, what).toContain(path);
        continue;
      }
      // Read without an error: every probe found.
      expect(probes.filter((k) => !result!.found.has(hex(k))).length, what).toBe(0);
    }
    // A header counting more than the file holds.
    const fd = openSync(file.path, "r");
    try {
      expect(() => SortedPart.read(fd, file.path, 16, file.count + RECORD, statSync(file.path).size)).toThrow(
        /shorter than the/,
      );
    } finally {
      closeSync(fd);
    }
  });
});
