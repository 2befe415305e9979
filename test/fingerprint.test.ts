// Request fingerprints against Scrapy's own known hashes (test/fixtures/vectors, copied from the upstream suites) and node:crypto.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalizeUrl, init, InvalidArgumentError, requestFingerprint, sha1Hex } from "../build/js/index.node.js";
import { randomBytes, rng } from "./helpers.js";

interface Case {
  request: { url: string; method?: string; body_hex?: string; headers?: Record<string, string> };
  kwargs: { include_headers?: string[]; keep_fragments?: boolean };
  fingerprint_2_7_sha1_hex: string;
  request_fingerprint_2_6_sha1_hex: string;
  fingerprint_json: string;
}

const vectors = JSON.parse(
  readFileSync(new URL("./fixtures/vectors/scrapy_request_fingerprint.json", import.meta.url), "utf8"),
) as { cases: Case[] };

const request = (c: Case) => ({
  url: c.request.url,
  method: c.request.method,
  body: c.request.body_hex === undefined ? undefined : new Uint8Array(Buffer.from(c.request.body_hex, "hex")),
  headers: c.request.headers,
});
const options = (c: Case) => ({ includeHeaders: c.kwargs.include_headers, keepFragments: c.kwargs.keep_fragments });

beforeAll(() => init());

describe("requestFingerprint: Scrapy's known hashes", () => {
  it("has all 15 cases", () => expect(vectors.cases).toHaveLength(15));

  it.each(vectors.cases.map((c, i) => [i, c] as const))("case %i: scrapy (>= 2.7 fingerprint())", (_i, c) => {
    expect(requestFingerprint(request(c), { ...options(c), algorithm: "scrapy" })).toBe(c.fingerprint_2_7_sha1_hex);
    // The hashed JSON itself, hashed by node:crypto, gives the same value: the JSON is exact.
    expect(createHash("sha1").update(c.fingerprint_json).digest("hex")).toBe(c.fingerprint_2_7_sha1_hex);
  });

  it.each(vectors.cases.map((c, i) => [i, c] as const))(
    "case %i: scrapy-legacy (< 2.7 request_fingerprint())",
    (_i, c) => {
      expect(requestFingerprint(request(c), { ...options(c), algorithm: "scrapy-legacy" })).toBe(
        c.request_fingerprint_2_6_sha1_hex,
      );
    },
  );
});

describe("requestFingerprint: other algorithms", () => {
  it("scrapy-redis hashes the sorted-key JSON of body, method and url (scrapy-redis 0.8)", () => {
    for (const c of vectors.cases) {
      const withoutHeaders = JSON.parse(c.fingerprint_json);
      const json = `{"body": "${withoutHeaders.body}", "method": "${withoutHeaders.method}", "url": "${canonicalizeUrl(c.request.url)}"}`;
      expect(requestFingerprint(request(c), { algorithm: "scrapy-redis" })).toBe(
        createHash("sha1").update(json).digest("hex"),
      );
    }
  });

  it("md5 (the default) hashes method, canonical URL and body with separators", () => {
    const fp = requestFingerprint({ url: "http://Example.com/a?b=2&a=1#top" });
    expect(fp).toBe(createHash("md5").update("GET\nhttp://example.com/a?a=1&b=2\n").digest("hex"));
    expect(fp).toBe(requestFingerprint({ url: "http://example.com/a?a=1&b=2", method: "get" }));
    // The legacy concatenation collides ("/a" + body "b" == "/ab"); the separators do not.
    expect(requestFingerprint({ url: "https://example.org/a", body: "b" })).not.toBe(
      requestFingerprint({ url: "https://example.org/ab" }),
    );
  });

  it("computes SHA-1 like node:crypto for every length 0..300", () => {
    const next = rng(13);
    for (let length = 0; length <= 300; length++) {
      const data = randomBytes(next, length);
      expect(sha1Hex(data), `length ${length}`).toBe(createHash("sha1").update(data).digest("hex"));
    }
    expect(sha1Hex("abc")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
  });

  it("rejects bad requests and options by name", () => {
    expect(() => requestFingerprint({ url: 5 } as never)).toThrow(/request.url must be a string/);
    expect(() => requestFingerprint({ url: "http://a/", method: "GE T" })).toThrow(InvalidArgumentError);
    expect(() => requestFingerprint({ url: "http://a/" }, { algorithm: "sha256" as never })).toThrow(
      /algorithm must be md5, scrapy/,
    );
    expect(() => requestFingerprint(null as never)).toThrow(/request must be an options object/);
  });
});
