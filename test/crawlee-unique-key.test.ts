// crawleeUniqueKey against Crawlee's own Request class (3.18.1, the newest; 3.15.0, the oldest
// with the requestManager option; 3.14.1, the line the Proxy fallback serves): a generated set
// of tens of thousands of URL spellings crossed with the key options, the upstream w3lib URL
// vectors and the Scrapy fingerprint requests. Crawlee computes the expected key; a mismatch or
// a throw on one side only fails.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Request as Request318, log } from "crawlee";
import fc from "fast-check";
import { Request as Request315 } from "crawlee-core-3.15";
import { describe, expect, it } from "vitest";
import { crawleeUniqueKey, type CrawleeKeyOptions } from "../src/crawlee/unique-key.js";
import { InvalidArgumentError } from "../src/errors.js";
import { rng } from "./helpers.js";

log.setLevel(log.LEVELS.OFF);
const require = createRequire(import.meta.url);
// The @crawlee/core that @crawlee/basic 3.14.1 depends on, from where that package sits.
const core314 = require(
  require.resolve("@crawlee/core", { paths: [require.resolve("crawlee-basic-3.14")] }),
) as typeof import("crawlee-core-3.15");
/** What the test needs of a Request class: built from options, a uniqueKey. */
type RequestClass = new (options: { url: string } & Record<string, unknown>) => { uniqueKey: string };
const VERSIONS: readonly (readonly [string, RequestClass])[] = [
  ["3.18.1", Request318 as unknown as RequestClass],
  ["3.15.0", Request315 as unknown as RequestClass],
  ["3.14.1", core314.Request as unknown as RequestClass],
];

// A seeded PRNG (test/helpers.ts), so a failure names a reproducible case.

const SCHEMES = [
  "http://",
  "https://",
  "HTTP://",
  "HtTpS://",
  "ftp://",
  "ws://",
  "file://",
  "foo://",
  "mailto:",
  "data:",
  "javascript:",
  "",
  "//",
  "http:/",
  "http:",
];
const USERINFO = ["", "", "", "user@", "user:pass@", "Us%20er:p%40ss@", "ü:ß@", ":@"];
const HOSTS = [
  "example.com",
  "EXAMPLE.com",
  "Example.COM",
  "www.example.com",
  "WWW.Example.Com.",
  "127.0.0.1",
  "0x7f.1",
  "[::1]",
  "[2001:DB8::1]",
  "xn--bcher-kva.de",
  "bücher.de",
  "ÄÖ.example",
  "exa mple.com",
  "a..b",
  "",
  "sub.domain.example.co.uk",
  "local_host",
  "%41.com",
];
const PORTS = ["", "", "", ":80", ":443", ":8080", ":0", ":65535", ":65536", ":abc", ":"];
const PATHS = [
  "",
  "/",
  "/a",
  "/a/",
  "/a//",
  "/A/B",
  "/a/./b/../c",
  "/%7Euser",
  "/ü/ñ",
  "/a b",
  "/a%2Fb/",
  "/é/",
  "/index.html",
  "/a/b/c/d/",
  "/..",
  "/%zz",
  "/a?",
  "/日本語/",
];
const QUERIES = [
  "",
  "",
  "?",
  "?a=1",
  "?b=2&a=1",
  "?a=1&b=2",
  "?utm_source=x&a=1",
  "?a=1&utm_medium=y&utm_campaign=z",
  "?utm_source=only",
  "?a=2&a=1&b",
  "?q=a+b",
  "?q=a%20b",
  "?gclid=123",
  "?fbclid=x&b=1",
  "?a=%E2%82%AC",
  "?€=1",
  "?Utm_source=1",
  "?utm_=1",
  "?a=1;b=2",
  "?&&a=1&",
  "?a==b",
  "?b&a",
  "?%zz=1",
  "?Z=1&a=1&_=2",
  "?é=1&e=2",
];
const FRAGMENTS = ["", "", "", "#", "#frag", "#Frag/x", "#a?b", "#ü", "#/route?x=1", "# sp"];
const PADS = ["", "", "", "", " ", "\t", "\n", "\u00a0", "\u2003", " \t\n"];
const METHODS = ["GET", "get", "POST", "post", "PUT", "Patch", "DELETE", "HEAD", "OPTIONS"];
const PAYLOADS: (string | Uint8Array | undefined)[] = [
  undefined,
  "",
  "a=1",
  '{"x":1}',
  "ü€",
  "a".repeat(1000),
  Buffer.from([0, 255, 10]),
  new Uint8Array([1, 2, 3]),
];

function generatedUrls(count: number, seed: number): string[] {
  const next = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const urls: string[] = [];
  for (let i = 0; i < count; i++) {
    const url = `${pick(SCHEMES)}${pick(USERINFO)}${pick(HOSTS)}${pick(PORTS)}${pick(PATHS)}${pick(QUERIES)}${pick(FRAGMENTS)}`;
    urls.push(`${pick(PADS)}${url}${pick(PADS)}`);
  }
  return urls;
}

function optionsFor(next: () => number): CrawleeKeyOptions {
  const method = METHODS[Math.floor(next() * METHODS.length)];
  const payload =
    method.toUpperCase() === "GET" && next() < 0.9 ? undefined : PAYLOADS[Math.floor(next() * PAYLOADS.length)];
  return {
    keepUrlFragment: next() < 0.5,
    useExtendedUniqueKey: next() < 0.5,
    method,
    ...(payload === undefined ? {} : { payload }),
  };
}

type Outcome = { key: string } | { error: true };
const crawlee = (RequestClass: RequestClass, url: string, options?: CrawleeKeyOptions): Outcome => {
  try {
    return { key: new RequestClass({ url, ...options }).uniqueKey };
  } catch {
    return { error: true };
  }
};
const ours = (url: string, options?: CrawleeKeyOptions): Outcome => {
  try {
    return { key: crawleeUniqueKey(url, options) };
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return { error: true };
  }
};

/** Every case where the two disagree (empty when all agree). */
function mismatches(RequestClass: RequestClass, cases: readonly (readonly [string, CrawleeKeyOptions | undefined])[]) {
  const bad: { url: string; options?: CrawleeKeyOptions; crawlee: Outcome; ours: Outcome }[] = [];
  for (const [url, options] of cases) {
    const expected = crawlee(RequestClass, url, options);
    const actual = ours(url, options);
    if (JSON.stringify(expected) !== JSON.stringify(actual))
      bad.push({ url, options, crawlee: expected, ours: actual });
  }
  return bad;
}

describe("crawleeUniqueKey equals new Request({ url, ...options }).uniqueKey", () => {
  const urls = generatedUrls(40_000, 15);
  const next = rng(1515);
  // Every URL with no options, and again with a random combination of method, payload, fragment and extended key.
  const cases = urls.flatMap(
    (url) =>
      [
        [url, undefined],
        [url, optionsFor(next)],
      ] as const,
  );

  it("covers what it claims: fragments, utm_, reordered parameters, trailing slashes, host case, userinfo, ports, non-ASCII, invalid URLs, methods, payloads", () => {
    expect(cases.length).toBe(80_000);
    const keys = cases.map(([url, options]) => ours(url, options));
    const valid = cases.filter(
      (_, i) => "key" in keys[i] && !(keys[i] as { key: string }).key.includes(cases[i][0].trim()),
    );
    // Many URLs change under normalization, many do not parse (their raw string is the key), some throw (GET with a payload).
    expect(valid.length).toBeGreaterThan(20_000);
    expect(cases.filter(([url]) => URL.canParse(url.trim())).length).toBeLessThan(70_000);
    expect(keys.filter((k) => "error" in k).length).toBeGreaterThan(100);
    for (const part of ["#frag", "utm_source", "b=2&a=1", "/a/", "EXAMPLE", "user:pass@", ":8080", "ü", "€"])
      expect(
        urls.some((u) => u.includes(part)),
        part,
      ).toBe(true);
    const extended = cases.filter(([, o]) => o?.useExtendedUniqueKey && o.payload !== undefined && o.payload !== "");
    expect(extended.length).toBeGreaterThan(5_000);
  });

  // All of them against the newest Crawlee; the first 20,000 against the older ones (the same code, checked for drift).
  it.each(VERSIONS.map(([v, R], i) => [v, i === 0 ? cases.length : 20_000, R] as const))(
    "Crawlee %s: the first %i generated cases",
    (_, count, RequestClass) => {
      const bad = mismatches(RequestClass, cases.slice(0, count));
      expect(bad.slice(0, 5)).toEqual([]);
    },
  );

  it("for the upstream w3lib URL vectors and the Scrapy fingerprint requests, with every option combination", () => {
    const w3lib = JSON.parse(
      readFileSync(new URL("fixtures/vectors/w3lib_canonicalize_url.json", import.meta.url), "utf8"),
    ).cases as { input_kind: string; input: string; expected: string }[];
    const scrapy = JSON.parse(
      readFileSync(new URL("fixtures/vectors/scrapy_request_fingerprint.json", import.meta.url), "utf8"),
    ).cases as { request: { url: string; method?: string; body?: string } }[];
    const strings = w3lib.filter((c) => c.input_kind === "str").flatMap((c) => [c.input, c.expected]);
    expect(strings.length).toBeGreaterThan(100);
    const vectorCases: [string, CrawleeKeyOptions | undefined][] = [];
    for (const url of strings) {
      vectorCases.push([url, undefined]);
      for (const keepUrlFragment of [false, true])
        for (const useExtendedUniqueKey of [false, true])
          vectorCases.push([url, { keepUrlFragment, useExtendedUniqueKey }]);
    }
    for (const { request } of scrapy) {
      const method = request.method ?? "GET";
      const payload = request.body ? Buffer.from(request.body, "hex") : undefined;
      for (const useExtendedUniqueKey of [false, true])
        vectorCases.push([
          request.url,
          { method, useExtendedUniqueKey, ...(payload && method !== "GET" ? { payload } : {}) },
        ]);
    }
    for (const [, RequestClass] of VERSIONS) expect(mismatches(RequestClass, vectorCases).slice(0, 5)).toEqual([]);
  });

  it("for 5,000 URLs from fast-check's web URL generator (fixed seed)", () => {
    const sample = fc.sample(
      fc.tuple(
        fc.webUrl({
          withFragments: true,
          withQueryParameters: true,
          authoritySettings: { withUserInfo: true, withPort: true, withIPv4: true, withIPv6: true },
        }),
        fc.boolean(),
        fc.boolean(),
      ),
      { numRuns: 5_000, seed: 15 },
    );
    const fcCases = sample.map(
      ([url, keepUrlFragment, useExtendedUniqueKey]) => [url, { keepUrlFragment, useExtendedUniqueKey }] as const,
    );
    expect(mismatches(VERSIONS[0][1], fcCases).slice(0, 5)).toEqual([]);
  });

  it("rejects what is not a URL string or a valid option with a typed error naming it", () => {
    expect(() => crawleeUniqueKey(42 as unknown as string)).toThrow(/url must be a string, got/);
    expect(() => crawleeUniqueKey("http://a.com", { method: 1 as unknown as string })).toThrow(
      /method must be a string/,
    );
    expect(() => crawleeUniqueKey("http://a.com", { keepUrlFragment: "yes" as unknown as boolean })).toThrow(
      /keepUrlFragment must be a boolean/,
    );
    expect(() => crawleeUniqueKey("http://a.com", { method: "POST", payload: 5 as unknown as string })).toThrow(
      /payload must be a string or a Uint8Array/,
    );
    expect(() => crawleeUniqueKey("http://a.com", { payload: "x" })).toThrow(InvalidArgumentError);
  });
});
