// The browser build in real headless Chromium gives the answers and the bytes Node gives:
// canonical URLs (all w3lib vectors), request fingerprints (all Scrapy vectors), MD5, and
// serialized Bloom filters.
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as node from "../../build/js/index.node.js";
import { launch, pageWithPackage, serve } from "./chromium.js";
import { compute } from "./compute.js";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const shared = (name: string) => JSON.parse(readFileSync(new URL(`../../../shared/vectors/${name}`, import.meta.url), "utf8"));

interface UrlCase { input: string | null; bytes: number[] | null; options: Record<string, unknown> }
interface Fixture {
  urls: UrlCase[];
  requests: { url: string; method?: string; body?: number[]; headers?: Record<string, string>; includeHeaders?: string[]; keepFragments?: boolean }[];
  keys: string[];
}

function fixture(): Fixture {
  const urls: UrlCase[] = shared("w3lib_canonicalize_url.json").cases.map((c: { input_kind: string; input?: string; input_bytes_hex?: string; kwargs: Record<string, unknown> }) => ({
    input: c.input_kind === "bytes" ? null : c.input_bytes_hex ? Buffer.from(c.input_bytes_hex, "hex").toString("latin1") : c.input!,
    bytes: c.input_kind === "bytes" ? [...Buffer.from(c.input_bytes_hex!, "hex")] : null,
    options: { keepBlankValues: c.kwargs.keep_blank_values, keepFragments: c.kwargs.keep_fragments, encoding: c.kwargs.encoding, querySeparator: c.kwargs.query_separator },
  }));
  const requests = shared("scrapy_request_fingerprint.json").cases.map((c: { request: { url: string; method?: string; body_hex?: string; headers?: Record<string, string> }; kwargs: { include_headers?: string[]; keep_fragments?: boolean } }) => ({
    url: c.request.url,
    method: c.request.method,
    body: c.request.body_hex ? [...Buffer.from(c.request.body_hex, "hex")] : undefined,
    headers: c.request.headers,
    includeHeaders: c.kwargs.include_headers,
    keepFragments: c.kwargs.keep_fragments,
  }));
  const keys = Array.from({ length: 2000 }, (_, i) => `https://cross.example/${i}?q=${i % 3 === 0 ? "日本語" : "x"}`);
  return { urls, requests, keys };
}

type Api = typeof node;

let server: Server;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await node.init();
  const served = await serve(root);
  server = served.server;
  browser = await launch();
  page = await pageWithPackage(browser, served.origin);
});

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe("Chromium and Node agree", () => {
  it("on canonical URLs, fingerprints, MD5 and serialized filters", async () => {
    const f = fixture();
    const inNode = compute(node, f);
    const inBrowser = await page.evaluate((f) => {
      const w = window as unknown as { cs: unknown; compute: typeof compute };
      return w.compute(w.cs, f);
    }, f);
    expect(inBrowser.canonical).toEqual(inNode.canonical);
    expect(inBrowser.fingerprints).toEqual(inNode.fingerprints);
    expect(inBrowser.md5s).toEqual(inNode.md5s);
    expect(inBrowser.bloom).toEqual(inNode.bloom);
    expect(inBrowser.blocked).toEqual(inNode.blocked);
    expect(inBrowser.answers).toEqual(inNode.answers);
    // And the browser really ran the vectors: its canonical forms are w3lib's expected ones.
    expect(inBrowser.canonical).toEqual(shared("w3lib_canonicalize_url.json").cases.map((c: { expected: string }) => c.expected));
  });

  it("loads in Chromium a filter serialized by Node", async () => {
    const filter = new node.BloomFilter({ items: 1000, fpRate: 0.001 });
    filter.addMany(["https://a.example/", "https://b.example/"]);
    const answers = await page.evaluate((bytes) => {
      const cs = (window as unknown as { cs: Api }).cs;
      const loaded = cs.BloomFilter.deserialize(new Uint8Array(bytes));
      return Array.from(loaded.hasMany(["https://a.example/", "https://b.example/", "https://c.example/"]));
    }, Array.from(filter.serialize()));
    expect(answers).toEqual([1, 1, 0]);
  });
});
