// writeStoredFile over segments of shared memory (copied a piece at a time, one copy buffer for the
// whole call) and of plain bytes: the file reads back byte for byte through readStoredFile, whose
// checksum is folded by another path, and a flipped byte in a copied piece is refused.
import { randomFillSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FormatError } from "../build/js/errors.js";
import { Kind } from "../build/js/format/container.js";
import type { Recipe } from "../build/js/format/recipe.js";
import { readStoredFile, writeStoredFile } from "../build/js/files/stored-file.js";
import { ready } from "./helpers.js";

beforeAll(ready);

const dir = mkdtempSync(join(tmpdir(), "cs-stored-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const recipe: Recipe<{ sizes: number[] }> = {
  kind: Kind.DiskPartIndex,
  what: "a test structure of three segments",
  paramBytes: 12,
  read(view) {
    return { sizes: [view.getUint32(0, true), view.getUint32(4, true), view.getUint32(8, true)] };
  },
};

/** `n` random bytes in a SharedArrayBuffer, at an offset into it (a view, as a filter in a memory is). */
function sharedRandom(n: number): Uint8Array {
  const bytes = new Uint8Array(new SharedArrayBuffer(n + 7), 7, n);
  randomFillSync(new Uint8Array(bytes.length)).forEach((b, i) => {
    bytes[i] = b;
  });
  return bytes;
}

describe("writeStoredFile (shared memory copied a piece at a time)", () => {
  // A small shared segment first: the copy buffer must grow for the large one after.
  const segments = [sharedRandom(5), randomFillSync(new Uint8Array(100)), sharedRandom((9 << 20) + 3)];
  const params = new Uint8Array(12);
  const view = new DataView(params.buffer);
  segments.forEach((s, i) => view.setUint32(4 * i, s.length, true));
  const path = join(dir, "three");
  beforeAll(() => writeStoredFile(path, Kind.DiskPartIndex, params, segments));

  it("reads back byte for byte, the checksum folded by the read", () => {
    const into = segments.map((s) => new Uint8Array(s.length));
    const read = readStoredFile(path, recipe, (p) => p.sizes.map((n, i) => into[i] ?? new Uint8Array(n)));
    expect(read.sizes).toEqual(segments.map((s) => s.length));
    for (const [i, s] of segments.entries()) expect(Buffer.from(into[i] ?? []).equals(Buffer.from(s))).toBe(true);
  });

  it("refuses the file with one byte of a later copied piece flipped", () => {
    const bytes = readFileSync(path);
    const at = bytes.length - 200 - (5 << 20);
    bytes[at] = (bytes[at] ?? 0) ^ 1;
    const damaged = join(dir, "damaged");
    writeFileSync(damaged, bytes);
    expect(() => readStoredFile(damaged, recipe, (p) => p.sizes.map((n) => new Uint8Array(n)))).toThrow(FormatError);
  });
});
