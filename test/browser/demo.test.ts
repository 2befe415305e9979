// The demo page (examples/web) in real headless Chromium: it dedups the sample file in its Web
// Worker and shows the very lines `crawlsieve dedup` prints (the list's text is checked, in a
// screenshot saved to build/demo.png, and the download is the whole list byte for byte);
// "remember across visits" drops, after a reload, the lines kept on the first visit; it checks
// lines against a filter the Node CLI saved, finds the near-duplicate groups the CLI finds
// (MinHash), and measures 1e6 URLs against Node (reported, not asserted: speed lives in benchmarks).
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
}, 180_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe("the demo page", () => {
  it("dedups the sample in its worker: the list shown and downloaded is what the CLI prints", async () => {
    const cli = spawnSync(process.execPath, [CLI, "dedup", SAMPLE], { encoding: "utf8", maxBuffer: 1 << 26 });
    const expected = cli.stdout.split("\n").slice(0, -1);
    expect(expected).toHaveLength(11_401);
    await page.setInputFiles("#files", SAMPLE);
    await page.click("#dedup");
    expect(await numberAttribute("unique")).toBe(expected.length);
    // The page shows the first 2,000 lines and says how many more the download holds.
    const shown = (await page.locator("#result").innerText()).split("\n");
    expect(shown.slice(0, 2000)).toEqual(expected.slice(0, 2000));
    expect(shown.slice(2000)).toEqual([
      `… and ${(expected.length - 2000).toLocaleString("en-US")} more lines: download the list for all of them`,
    ]);
    const download = page.waitForEvent("download");
    await page.click("#download");
    const file = await (await download).path();
    expect(readFileSync(file, "utf8")).toBe(cli.stdout);
    await page.check("input[name=mode][value=approx]");
    await page.click("#dedup");
    expect(await numberAttribute("unique")).toBe(expected.length);
    await page.check("input[name=mode][value=exact]");
  }, 120_000);

  it("remembers across visits: after a reload, only lines no earlier visit kept are listed (screenshot)", async () => {
    const first = ["https://a.example/1", "https://a.example/2", "https://a.example/1", "https://a.example/3"];
    const second = [
      "https://a.example/2",
      "https://b.example/1",
      "https://a.example/3",
      "https://b.example/1",
      "https://b.example/2",
    ];
    await page.click("#clearInput");
    await page.check("#remember");
    await page.fill("#paste", first.join("\n"));
    await page.click("#dedup");
    expect(await numberAttribute("kept")).toBe(3);
    expect(await page.locator("#result").innerText()).toBe(
      "https://a.example/1\nhttps://a.example/2\nhttps://a.example/3",
    );
    // Another visit: the page and its worker start again and find what the first one kept.
    await page.reload();
    await page.waitForSelector("body[data-ready=true]");
    expect(await page.getAttribute("#memory", "data-size")).toBe("3");
    expect(await page.locator("#memory").innerText()).toContain("Origin Private File System");
    await page.check("#remember");
    await page.fill("#paste", second.join("\n"));
    await page.click("#dedup");
    expect(await numberAttribute("kept")).toBe(2);
    await page.screenshot({ path: join(root, "build/demo.png"), fullPage: true });
    const list = page.locator("#result");
    expect(await list.isVisible()).toBe(true);
    expect(await list.innerText()).toBe("https://b.example/1\nhttps://b.example/2");
    expect(await page.locator("#numbers").innerText()).toMatch(/seen on earlier visits\s+2/);
    // Forgotten, the same input is new again.
    await page.click("#forget");
    await page.waitForSelector("#memory[data-size='0']");
    await page.click("#dedup");
    expect(await numberAttribute("kept")).toBe(4);
    await page.click("#forget");
    await page.uncheck("#remember");
    await page.click("#clearInput");
  }, 120_000);

  it("checks lines against a filter saved by the Node CLI, with Node's answers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-demo-"));
    const filterPath = join(dir, "filter.bin");
    const saved = spawnSync(
      process.execPath,
      [CLI, "dedup", "--approx", "--items", "20000", "--save-filter", filterPath],
      { input: "https://a.example/\nhttps://b.example/\n" },
    );
    expect(saved.status).toBe(0);
    const probe = join(dir, "probe.txt");
    const probeLines = [
      "https://a.example/",
      "https://b.example/",
      ...Array.from({ length: 500 }, (_, i) => `https://c.example/${i}`),
    ];
    (await import("node:fs")).writeFileSync(probe, probeLines.join("\n") + "\n");
    const inNode = node.BloomFilter.deserialize(new Uint8Array(readFileSync(filterPath)))
      .hasMany(probeLines)
      .reduce((a, b) => a + b, 0);
    await page.setInputFiles("#files", probe);
    await page.setInputFiles("#filterFile", filterPath);
    expect(await numberAttribute("present")).toBe(inNode);
    expect(inNode).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it("finds the near-duplicate groups the CLI finds (MinHash)", async () => {
    const folder = join(root, "examples/near-dups");
    const cli = spawnSync(process.execPath, [CLI, "near-dups", "--json", folder], { encoding: "utf8" });
    const expected = cli.stdout
      .trim()
      .split("\n")
      .map((line) =>
        JSON.parse(line)
          .members.map((m: { id: string }) => m.id.split("/").pop())
          .sort(),
      );
    expect(expected.length).toBeGreaterThanOrEqual(2);
    await page.setInputFiles(
      "#files",
      readdirSync(folder).map((name) => join(folder, name)),
    );
    await page.click("#near");
    const handle = await page.waitForSelector("#groups[data-groups]");
    expect(JSON.parse((await handle.getAttribute("data-groups"))!)).toEqual(expected);
    await page.click("#clearInput");
  }, 180_000);

  it("dedups 1e6 URLs in the browser; the rate against Node is reported", async () => {
    await page.click("#bench");
    const browserRate = await numberAttribute("rate");
    // The page's list: every fourth URL repeats the one before it, so 750,000 are distinct.
    const url = (j: number) => `https://www.site-${j % 997}.example.com/page/${j}.html?ref=${j % 13}`;
    const urls = Array.from({ length: 1_000_000 }, (_, i) => url(i - (i % 4 === 3 ? 1 : 0)));
    expect(new Set(urls).size).toBe(750_000);
    expect(await numberAttribute("unique")).toBe(750_000);
    const input = new TextEncoder().encode(urls.join("\n") + "\n");
    const dedup = new node.LineDeduplicator();
    const started = performance.now();
    for (let at = 0; at < input.length; at += 1 << 20) dedup.push(input.subarray(at, at + (1 << 20)));
    dedup.end();
    const nodeRate = urls.length / ((performance.now() - started) / 1000);
    const { unique } = dedup.stats;
    dedup.dispose();
    console.log(
      `demo bench: browser ${Math.round(browserRate)} URLs/s, Node ${Math.round(nodeRate)} URLs/s, ratio ${(browserRate / nodeRate).toFixed(2)}`,
    );
    expect(unique).toBe(750_000);
    expect(browserRate).toBeGreaterThan(0);
  }, 120_000);
  it("stays 1,280 pixels wide after a dedup of long URLs, and asks for no icon it lacks", async () => {
    const asked: string[] = [];
    page.on("request", (request) => asked.push(new URL(request.url()).pathname));
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.reload();
    await page.waitForSelector("body[data-ready=true]");
    const long = Array.from({ length: 3 }, (_, i) => `https://long.example/${i}/${"segment/".repeat(400)}end`);
    await page.fill("#paste", [...long, long[0]].join("\n"));
    await page.click("#dedup");
    expect(await numberAttribute("unique")).toBe(3);
    const { scroll, inner } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      inner: window.innerWidth,
    }));
    expect(scroll).toBeLessThanOrEqual(inner);
    expect(asked.filter((path) => path.endsWith("favicon.ico"))).toEqual([]);
  }, 120_000);
});
