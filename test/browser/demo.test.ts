// The demo page (examples/web) in real headless Chromium: it dedups the sample file in its Web
// Worker with Node's numbers, checks lines against a filter the Node CLI saved, finds the
// near-duplicate groups the CLI finds, and measures 1e6 URLs against Node (reported, not
// asserted: speed lives in benchmarks). A screenshot is saved to build/demo.png.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as node from "../../build/js/index.node.js";
// @ts-expect-error: plain JavaScript without types
import { startDemo } from "../../examples/web/serve.js";
import { launch } from "./chromium.js";

const root = new URL("../../", import.meta.url).pathname;
const SAMPLE = join(root, "examples/nodejs-doc-links.txt");
const CLI = join(root, "build/js/cli/main.js");
let server: Server;
let browser: Browser;
let page: Page;

function lines(path: string): string[] {
  const all = readFileSync(path, "utf8").split("\n");
  if (all[all.length - 1] === "") all.pop();
  return all;
}

async function numberAttribute(name: string): Promise<number> {
  const handle = await page.waitForSelector(`#numbers[data-${name}]`, { timeout: 120_000 });
  const value = Number(await handle.getAttribute(`data-${name}`));
  await page.evaluate(`document.getElementById("numbers").removeAttribute("data-${name}")`);
  return value;
}

beforeAll(async () => {
  await node.init();
  const demo = await startDemo(0);
  server = demo.server;
  browser = await launch();
  page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${demo.origin}/examples/web/index.html`);
  await page.waitForSelector("body[data-ready=true]");
  expect(errors).toEqual([]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe("the demo page", () => {
  it("dedups the sample in its worker with Node's count (exact and Bloom)", async () => {
    const expected = node.Deduplicator && new node.Deduplicator({ items: 100_000 }).checkMany(lines(SAMPLE)).isNew.reduce((a, b) => a + b, 0);
    expect(expected).toBe(11_401);
    await page.setInputFiles("#files", SAMPLE);
    await page.click("#dedup");
    expect(await numberAttribute("unique")).toBe(expected);
    await page.check("input[name=mode][value=approx]");
    await page.click("#dedup");
    expect(await numberAttribute("unique")).toBe(expected);
    expect(await page.isEnabled("#download")).toBe(true);
    await page.screenshot({ path: join(root, "build/demo.png"), fullPage: true });
  }, 120_000);

  it("checks lines against a filter saved by the Node CLI, with Node's answers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-demo-"));
    const filterPath = join(dir, "filter.bin");
    const saved = spawnSync(process.execPath, [CLI, "dedup", "--approx", "--items", "20000", "--save-filter", filterPath], { input: "https://a.example/\nhttps://b.example/\n" });
    expect(saved.status).toBe(0);
    const probe = join(dir, "probe.txt");
    const probeLines = ["https://a.example/", "https://b.example/", ...Array.from({ length: 500 }, (_, i) => `https://c.example/${i}`)];
    (await import("node:fs")).writeFileSync(probe, probeLines.join("\n") + "\n");
    const inNode = node.BloomFilter.deserialize(new Uint8Array(readFileSync(filterPath))).hasMany(probeLines).reduce((a, b) => a + b, 0);
    await page.setInputFiles("#files", probe);
    await page.setInputFiles("#filterFile", filterPath);
    expect(await numberAttribute("present")).toBe(inNode);
    expect(inNode).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("finds the near-duplicate groups the CLI finds", async () => {
    const folder = join(root, "examples/near-dups");
    const cli = spawnSync(process.execPath, [CLI, "near-dups", "--max-distance", "6", "--json", folder], { encoding: "utf8" });
    const expected = cli.stdout.trim().split("\n").map((line) => JSON.parse(line).members.map((m: { id: string }) => m.id.split("/").pop()).sort());
    await page.setInputFiles("#files", readdirSync(folder).map((name) => join(folder, name)));
    await page.fill("#maxDistance", "6");
    await page.click("#near");
    const handle = await page.waitForSelector("#groups[data-groups]");
    expect(JSON.parse((await handle.getAttribute("data-groups"))!)).toEqual(expected);
  }, 60_000);

  it("dedups 1e6 URLs in the browser; the rate against Node is reported", async () => {
    await page.click("#bench");
    const browserRate = await numberAttribute("rate");
    // The page's list: every fourth URL repeats the one before it, so 750,000 are distinct.
    const url = (j: number) => `https://www.site-${j % 997}.example.com/page/${j}.html?ref=${j % 13}`;
    const urls = Array.from({ length: 1_000_000 }, (_, i) => url(i - (i % 4 === 3 ? 1 : 0)));
    expect(new Set(urls).size).toBe(750_000);
    expect(await numberAttribute("unique")).toBe(750_000);
    const dedup = new node.Deduplicator({ items: urls.length });
    let unique = 0;
    const started = performance.now();
    for (let i = 0; i < urls.length; i += 65_536) for (const flag of dedup.checkMany(urls.slice(i, i + 65_536)).isNew) unique += flag;
    const nodeRate = urls.length / ((performance.now() - started) / 1000);
    console.log(`demo bench: browser ${Math.round(browserRate)} URLs/s, Node ${Math.round(nodeRate)} URLs/s, ratio ${(browserRate / nodeRate).toFixed(2)}`);
    expect(unique).toBe(750_000);
    expect(browserRate).toBeGreaterThan(0);
  }, 120_000);
});
