// canonicalizeUrl and requestFingerprint against the output of the real w3lib (2.4.1 and its main
// branch) and Scrapy 2.8 on generated URLs and requests (test/fixtures/urls, made by generate.py
// there; see its header for the versions). Python is not needed: the vectors are the test.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalizeUrl, init, requestFingerprint, type CanonicalizeOptions } from "../build/js/index.node.js";

interface UrlVectors {
  w3lib: string;
  kwargs: { keep_blank_values?: boolean; keep_fragments?: boolean; encoding?: string }[];
  cases: [string, number, string | null][];
}

function load<T>(name: string): T {
  return JSON.parse(
    gunzipSync(readFileSync(new URL(`./fixtures/urls/${name}`, import.meta.url))).toString("utf8"),
  ) as T;
}

function disagreements(vectors: UrlVectors, rules: CanonicalizeOptions["w3lib"]) {
  const options = vectors.kwargs.map((kw) => ({
    keepBlankValues: kw.keep_blank_values,
    keepFragments: kw.keep_fragments,
    encoding: kw.encoding,
    w3lib: rules,
  }));
  const wrong: { url: string; kwargs: object; w3lib: string; crawlsieve: string }[] = [];
  let raised = 0;
  for (const [url, kw, expected] of vectors.cases) {
    if (expected === null) {
      raised++;
      expect(typeof canonicalizeUrl(url, options[kw])).toBe("string"); // where w3lib raises we return a string
      continue;
    }
    const got = canonicalizeUrl(url, options[kw]);
    if (got !== expected) wrong.push({ url, kwargs: vectors.kwargs[kw], w3lib: expected, crawlsieve: got });
  }
  return { wrong, raised };
}

describe("canonicalizeUrl against the real w3lib", () => {
  it("agrees with w3lib 2.4.1 (the default) on all 50,000 generated URLs", () => {
    const vectors = load<UrlVectors>("w3lib-2.4.1.json.gz");
    expect(vectors.w3lib).toBe("2.4.1");
    expect(vectors.cases.length).toBeGreaterThanOrEqual(50_000);
    const { wrong, raised } = disagreements(vectors, undefined);
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(wrong.length).toBe(0);
    expect(raised).toBe(28); // invalid IPv6 brackets and NFKC-forbidden netlocs: urlsplit raises
  });

  it('agrees with w3lib\'s main branch under w3lib: "head"', () => {
    const vectors = load<UrlVectors>("w3lib-head.json.gz");
    expect(vectors.w3lib).toBe("head");
    const { wrong } = disagreements(vectors, "head");
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(wrong.length).toBe(0);
  });
});

interface RequestVectors {
  scrapy: string;
  w3lib: string;
  cases: {
    url: string;
    method: string;
    body_hex: string;
    headers_hex: Record<string, string[]>;
    include_headers: string[] | null;
    keep_fragments: boolean;
    fingerprint: string;
    request_fingerprint: string;
  }[];
}

describe("requestFingerprint against the real Scrapy", () => {
  beforeAll(() => init());
  const vectors = load<RequestVectors>("scrapy-2.8.0.json.gz");
  const request = (c: RequestVectors["cases"][number]) => ({
    url: c.url,
    method: c.method,
    body: new Uint8Array(Buffer.from(c.body_hex, "hex")),
    headers: Object.fromEntries(
      Object.entries(c.headers_hex).map(([name, values]) => [
        name,
        values.map((v) => new Uint8Array(Buffer.from(v, "hex"))),
      ]),
    ),
  });

  it("has 8,000 requests from Scrapy 2.8 on w3lib 2.4.1", () => {
    expect([vectors.scrapy, vectors.w3lib, vectors.cases.length]).toEqual(["2.8.0", "2.4.1", 8000]);
  });

  for (const [algorithm, field] of [
    ["scrapy", "fingerprint"],
    ["scrapy-legacy", "request_fingerprint"],
  ] as const) {
    it(`${algorithm} equals Scrapy's ${field}() of the URL scrapy.Request holds`, () => {
      const wrong = vectors.cases.filter(
        (c) =>
          requestFingerprint(request(c), {
            algorithm,
            includeHeaders: c.include_headers ?? undefined,
            keepFragments: c.keep_fragments,
          }) !== c[field],
      );
      expect(wrong.slice(0, 3)).toEqual([]);
    });
  }
});
