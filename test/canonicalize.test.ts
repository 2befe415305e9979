// canonicalizeUrl against every case of w3lib's own test suite (test/fixtures/vectors, copied from the upstream suites), plus properties.
// The suite is w3lib's main branch: every case runs under w3lib: "head", and those that pass on release 2.4.1 under the default too.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalizeUrl, InvalidArgumentError, TRACKING_PARAMETERS } from "../build/js/index.node.js";

interface Case {
  test: string;
  input_kind: string;
  input?: string;
  input_bytes_hex?: string;
  kwargs: { keep_blank_values?: boolean; keep_fragments?: boolean; encoding?: string; query_separator?: string };
  expected: string;
  passes_w3lib_2_4_1: boolean;
}

const vectors = JSON.parse(
  readFileSync(new URL("./fixtures/vectors/w3lib_canonicalize_url.json", import.meta.url), "utf8"),
) as { cases: Case[] };

/**
 * The JavaScript input nearest to each Python one: str as a string; bytes as a Uint8Array;
 * a urlparse()/parse_url() result as the string it was parsed from (both parsers only split it);
 * parse_url(bytes, encoding="latin1") as the bytes decoded from latin1 into a string.
 */
function input(c: Case): string | Uint8Array {
  if (c.input_kind === "str" || c.input_kind === "urlparse" || c.input_kind === "parse_url") return c.input!;
  const bytes = Buffer.from(c.input_bytes_hex!, "hex");
  if (c.input_kind === "bytes") return new Uint8Array(bytes);
  if (c.input_kind.startsWith("parse_url") && c.input_kind.includes("latin1")) return bytes.toString("latin1");
  throw new Error(`unknown input kind ${c.input_kind}`);
}

const options = (c: Case, w3lib?: "head") => ({
  keepBlankValues: c.kwargs.keep_blank_values,
  keepFragments: c.kwargs.keep_fragments,
  encoding: c.kwargs.encoding,
  querySeparator: c.kwargs.query_separator,
  w3lib,
});

describe("canonicalizeUrl: w3lib's test suite", () => {
  it("has all 81 cases", () => expect(vectors.cases).toHaveLength(81));
  it.each(vectors.cases.map((c, i) => [i, c.test, c] as const))("case %i (%s)", (_i, _name, c) => {
    expect(canonicalizeUrl(input(c), options(c, "head"))).toBe(c.expected);
    if (c.passes_w3lib_2_4_1) expect(canonicalizeUrl(input(c), options(c))).toBe(c.expected);
  });
  it("folds userinfo into the IDNA label by default, as w3lib 2.4.1 does", () => {
    expect(
      vectors.cases.filter((c) => !c.passes_w3lib_2_4_1 && c.test === "test_canonicalize_idns_with_userinfo"),
    ).toHaveLength(2);
    // The expected form printed by /usr/bin/python3 -c 'import w3lib.url; print(w3lib.url.canonicalize_url("http://user@bücher.de/"))' (w3lib 2.1.1 and 2.4.1).
    expect(canonicalizeUrl("http://user@b\u00fccher.de/")).toBe("http://xn--user@bcher-feb.de/");
  });
});

describe("canonicalizeUrl: properties", () => {
  const urlish = fc.oneof(
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.string({ unit: "grapheme", maxLength: 80 }),
    fc.string({ unit: "binary", maxLength: 80 }),
  );

  it("is idempotent", () => {
    fc.assert(
      fc.property(urlish, (url) => {
        const once = canonicalizeUrl(url);
        expect(canonicalizeUrl(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
    for (const c of vectors.cases) {
      const once = canonicalizeUrl(input(c), options(c));
      expect(canonicalizeUrl(once, options(c)), c.test).toBe(once);
    }
  });

  it("never throws on any string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (url) => {
        expect(typeof canonicalizeUrl(url)).toBe("string");
      }),
      { numRuns: 3000 },
    );
  });

  it("sorts long queries like short ones (both sorting paths)", () => {
    const pairs = Array.from({ length: 40 }, (_, i) => `k${(i * 7) % 40}=${i % 3}`);
    const expected = [...pairs]
      .map((p) => p.split("="))
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1))
      .map((p) => p.join("="))
      .join("&");
    expect(canonicalizeUrl(`http://e.com/?${pairs.join("&")}`)).toBe(`http://e.com/?${expected}`);
    expect(canonicalizeUrl(`http://e.com/?${pairs.slice(0, 10).join("&")}`)).toBe(
      canonicalizeUrl(`http://e.com/?${pairs.slice(0, 10).reverse().join("&")}`),
    );
  });

  it("treats reordered queries, host case and fragments as the same page", () => {
    expect(canonicalizeUrl("http://Example.com/a?b=2&a=1#top")).toBe(canonicalizeUrl("http://example.com/a?a=1&b=2"));
  });

  it("percent-encodes bytes that are not UTF-8 instead of failing", () => {
    expect(canonicalizeUrl(new Uint8Array([...Buffer.from("http://e.com/r"), 0xe9, ...Buffer.from("s")]))).toBe(
      "http://e.com/r%E9s",
    );
  });

  it("rejects bad options by name", () => {
    expect(() => canonicalizeUrl(5 as never)).toThrow(InvalidArgumentError);
    expect(() => canonicalizeUrl("http://a/", { encoding: "no-such-encoding" })).toThrow(/encoding must be/);
    expect(() => canonicalizeUrl("http://a/", { querySeparator: "" })).toThrow(/querySeparator/);
    expect(() => canonicalizeUrl("http://a/", null as never)).toThrow(/options must be an options object/);
  });
});

describe("canonicalizeUrl: opt-in extras", () => {
  it("leaves the Scrapy form alone by default", () => {
    expect(canonicalizeUrl("http://www.example.com:80/a/./b/../c?utm_source=x&id=1")).toBe(
      "http://www.example.com:80/a/./b/../c?id=1&utm_source=x",
    );
  });

  it("removes default ports, dot segments, tracking parameters and www. when asked", () => {
    const all = { removeDefaultPort: true, removeDotSegments: true, removeTrackingParams: true, foldWww: true };
    expect(canonicalizeUrl("http://www.example.com:80/a/./b/../c?utm_source=x&id=1&fbclid=abc&gclid=1", all)).toBe(
      "http://example.com/a/c?id=1",
    );
    expect(canonicalizeUrl("https://www.example.com:443/", all)).toBe("https://example.com/");
    expect(canonicalizeUrl("https://example.com:8443/", all)).toBe("https://example.com:8443/");
    expect(canonicalizeUrl("http://e.com/../../a/..", { removeDotSegments: true })).toBe("http://e.com/");
    expect(canonicalizeUrl("http://e.com/?sid=1&x=2", { removeTrackingParams: ["sid"] })).toBe("http://e.com/?x=2");
    expect(TRACKING_PARAMETERS).toContain("utm_*");
  });
});
