// The local site the crawler tests crawl: what it serves and what it counts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSite, type CrawlSite } from "./support/crawl-site.js";

let site: CrawlSite;
beforeAll(async () => {
  site = await startSite({ pages: 40, navLinks: 1250 });
});
afterAll(async () => {
  await site.close();
});

const get = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${site.origin}${path}`, { redirect: "manual", ...init });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
};

describe("the crawl site", () => {
  it("repeats the same navigation block of navLinks links on every HTML page", async () => {
    const home = await get("/");
    const page = await get("/p/3/?utm_source=x");
    const anchors = (html: string) =>
      [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1].replaceAll("&amp;", "&"));
    expect(anchors(home.text)).toHaveLength(1250);
    expect(anchors(page.text)).toEqual(anchors(home.text));
    expect(new Set(anchors(home.text))).toEqual(new Set(site.slots()));
    for (const spelling of [
      "/p/3/",
      "/p/3?utm_source=nav",
      "/p/3#main",
      "/q/5?b=2&a=1",
      "/p/10?gclid=g10",
      "/old/0",
      "/fail/1",
      "/t/10",
    ])
      expect(site.slots()).toContain(spelling);
    expect(site.slots()).toContain(`${site.origin.replace("http://localhost", "HTTP://LOCALHOST")}/p/3`);
  });

  it("serves the same page for every spelling, redirects, fails, and answers POSTs per body", async () => {
    const a = await get("/p/7");
    expect(a.status).toBe(200);
    for (const spelling of ["/p/7/", "/p/7?utm_source=nav", "/p/7?gclid=g7"])
      expect((await get(spelling)).text).toBe(a.text);
    expect(await get("/old/20")).toMatchObject({ status: 301, location: "/p/20" });
    expect((await get("/fail/26")).status).toBe(500);
    expect((await get("/p/40")).status).toBe(404);
    const t = await get("/t/10");
    expect(t.text).not.toBe((await get("/p/10")).text);
    expect(t.text).toContain("changed");
    const posted = await get("/submit", {
      method: "POST",
      body: "q=2",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(posted.text).toContain("you sent q=2");
  });

  it("counts every request by method, path, query (and body for POSTs), in arrival order", async () => {
    site.reset();
    await get("/p/1");
    await get("/p/1");
    await get("/p/1/");
    await get("/submit", { method: "POST", body: "q=1" });
    expect([...site.hits]).toEqual([
      ["GET /p/1", 2],
      ["GET /p/1/", 1],
      ["POST /submit q=1", 1],
    ]);
    expect(site.log).toEqual(["GET /p/1", "GET /p/1", "GET /p/1/", "POST /submit q=1"]);
  });

  it("is deterministic: a second site of the same options serves the same bytes", async () => {
    const other = await startSite({ pages: 40, navLinks: 1250 });
    try {
      const mine = (await get("/p/9")).text.replaceAll(site.origin.split(":")[2], "PORT");
      const theirs = (await (await fetch(`${other.origin}/p/9`)).text()).replaceAll(other.origin.split(":")[2], "PORT");
      expect(theirs).toBe(mine);
    } finally {
      await other.close();
    }
  });
});
