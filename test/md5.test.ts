// MD5 against RFC 1321's own test suite (appendix A.5) and node:crypto.
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError, Md5, md5, md5Hex, md5Many, md5Spans, toHex } from "../build/js/index.node.js";
import { randomBytes, ready, rng } from "./helpers.js";

const reference = (data: Uint8Array | string) => createHash("md5").update(data).digest("hex");

beforeAll(ready);

describe("md5", () => {
  it("matches the RFC 1321 test suite", () => {
    const suite: [string, string][] = [
      ["", "d41d8cd98f00b204e9800998ecf8427e"],
      ["a", "0cc175b9c0f1b6a831c399e269772661"],
      ["abc", "900150983cd24fb0d6963f7d28e17f72"],
      ["message digest", "f96b697d7cb7938d525a2f31aaf161d0"],
      ["abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"],
      ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"],
      [
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "57edf4a22be3c955ac49da2e2107b67a",
      ],
    ];
    for (const [input, digest] of suite) {
      expect(md5Hex(input)).toBe(digest);
      expect(md5Hex(new TextEncoder().encode(input))).toBe(digest);
    }
  });

  it("equals node:crypto on random inputs of every length 0..4096", () => {
    const next = rng(7);
    const inputs: Uint8Array[] = [];
    for (let length = 0; length <= 4096; length++) inputs.push(randomBytes(next, length));
    const batch = md5Many(inputs);
    for (let length = 0; length <= 4096; length++) {
      const expected = reference(inputs[length]);
      expect(toHex(batch.subarray(16 * length, 16 * length + 16)), `batch, length ${length}`).toBe(expected);
      if (length % 7 === 0) expect(md5Hex(inputs[length]), `one-shot, length ${length}`).toBe(expected);
    }
  });

  it("equals node:crypto when four lanes finish at different times, with idle lanes and across batches", () => {
    // md5Batch hashes four keys at once and a lane takes the next key when its own is done: mix
    // lengths around the padding edges (55/56, 63/64, 119/120) in every order and batch size.
    const next = rng(11);
    const edges = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 121, 200, 1000];
    for (let count = 1; count <= 9; count++) {
      const inputs = Array.from({ length: count }, () => randomBytes(next, edges[Math.floor(next() * edges.length)]));
      const digests = md5Many(inputs);
      inputs.forEach((input, i) =>
        expect(toHex(digests.subarray(16 * i, 16 * i + 16)), `batch of ${count}, key ${i}`).toBe(reference(input)),
      );
    }
    const many = Array.from({ length: 10_000 }, () => randomBytes(next, Math.floor(next() * 180)));
    const digests = md5Many(many);
    many.forEach((input, i) =>
      expect(toHex(digests.subarray(16 * i, 16 * i + 16)), `key ${i} of 10000`).toBe(reference(input)),
    );
  });

  it("streams across every block boundary split", () => {
    const next = rng(11);
    const data = randomBytes(next, 300);
    const expected = reference(data);
    for (const first of [0, 1, 55, 56, 57, 63, 64, 65, 127, 128, 129, 200, 300]) {
      for (const second of [0, 1, 55, 56, 63, 64, 65]) {
        const a = Math.min(first, data.length);
        const b = Math.min(a + second, data.length);
        const hasher = new Md5().update(data.subarray(0, a)).update(data.subarray(a, b)).update(data.subarray(b));
        expect(hasher.digestHex(), `split at ${a}, ${b}`).toBe(expected);
      }
    }
  });

  it("hashes strings as UTF-8, including astral characters and lone surrogates", () => {
    const strings = ["é", "日本語のテキスト", "emoji 🎉 ok", "lone \ud800 surrogate", "ascii then ü".repeat(50)];
    for (const s of strings) expect(md5Hex(s)).toBe(reference(Buffer.from(s, "utf8")));
    const batch = md5Many(strings);
    strings.forEach((s, i) =>
      expect(toHex(batch.subarray(16 * i, 16 * i + 16))).toBe(reference(Buffer.from(s, "utf8"))),
    );
  });

  it("handles inputs longer than its staging piece (3 MiB buffer, 1.5M-char string)", () => {
    const big = randomBytes(rng(3), 3 * 1024 * 1024 + 17);
    expect(md5Hex(big)).toBe(reference(big));
    const long = "x".repeat(1_500_000) + "é";
    expect(md5Hex(long)).toBe(reference(long));
  });

  it("hashes spans of one buffer like separate keys", () => {
    const data = new TextEncoder().encode("alpha\nbeta\n\ngamma");
    const spans = [0, 5, 6, 10, 11, 11, 12, 17];
    const digests = md5Spans(data, spans);
    ["alpha", "beta", "", "gamma"].forEach((s, i) =>
      expect(toHex(digests.subarray(16 * i, 16 * i + 16))).toBe(reference(s)),
    );
  });

  it("mixes string and byte keys in one batch", () => {
    const keys = ["a", new Uint8Array([98]), "c", new Uint8Array(0)];
    const digests = md5Many(keys);
    ["a", "b", "c", ""].forEach((s, i) => expect(toHex(digests.subarray(16 * i, 16 * i + 16))).toBe(reference(s)));
  });

  it("returns copies, not views into WebAssembly memory", () => {
    const first = md5("first");
    const copy = first.slice();
    md5("second");
    expect(first).toEqual(copy);
    expect(first.buffer.byteLength).toBe(16);
  });

  it("rejects bad input with a typed error naming it", () => {
    expect(() => md5(42 as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => md5(null as unknown as string)).toThrow(/input must be a string or a Uint8Array, got null/);
    expect(() => md5Many("abc" as unknown as string[])).toThrow(InvalidArgumentError);
    expect(() => md5Many(["ok", 5 as unknown as string])).toThrow(/keys\[1\]/);
    expect(() => md5Spans(new Uint8Array(4), [0, 5])).toThrow(/spans\[0\.\.1\]/);
    expect(() => md5Spans(new Uint8Array(4), [0])).toThrow(/even-length/);
    const hasher = new Md5();
    hasher.digest();
    expect(() => hasher.update("more")).toThrow(InvalidArgumentError);
    expect(() => hasher.digest()).toThrow(InvalidArgumentError);
  });
});
