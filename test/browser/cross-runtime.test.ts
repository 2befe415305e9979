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
import { fixture, fixtureWithBytes } from "./fixture.js";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const shared = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/vectors/${name}`, import.meta.url), "utf8"));

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
    for (const key of ["counting", "multiplicity", "window", "simhash", "index", "near"] as const)
      expect(inBrowser[key], key).toEqual(inNode[key]);
    // And the browser really ran the vectors: its canonical forms are w3lib's expected ones.
    expect(inBrowser.canonical).toEqual(
      shared("w3lib_canonicalize_url.json").cases.map((c: { expected: string }) => c.expected),
    );
  });

  it("loads in Chromium the counting filter, time window and SimHash index Node serialized, with Node's answers", async () => {
    const f = fixtureWithBytes();
    const inNode = compute(node, f);
    const inBrowser = await page.evaluate((f) => {
      const w = window as unknown as { cs: unknown; compute: typeof compute };
      return w.compute(w.cs, f);
    }, f);
    expect(inNode.loaded).toBeDefined();
    expect(inBrowser.loaded).toEqual(inNode.loaded);
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
