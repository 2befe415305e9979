// A local web site for crawler tests, generated from a few numbers, served by node:http on
// loopback (127.0.0.1, and ::1 on the same port where the host has it, so "localhost" works
// whichever address a resolver returns first). Deterministic: the same options give the same
// bytes. Plain JavaScript so tests of any crawler integration and the benchmarks can start it.
//
// The shape is the one that hurts crawlers' dedup: every HTML page repeats the same navigation
// block of `navLinks` link occurrences (docs sites with ~1,250 identical links per page), and
// the block spells each page several ways:
// - spellings Crawlee's uniqueKey folds into one: "/p/7", "/p/7/", "/p/7?utm_source=nav",
//   "/p/7#main", "HTTP://LOCALHOST:port/p/7", "/p/7/?utm_medium=x&utm_campaign=y#f", and for
//   query pages "?a=1&b=2" against "?b=2&a=1";
// - spellings it keeps apart (distinct URLs to Crawlee, served with the same content):
//   "/p/7?gclid=g7", "/p/7?a=2&a=1";
// - redirects "/old/i" (301 to "/p/i"), pages that always fail ("/fail/i", 500), near-duplicate
//   templates ("/t/i": the article of "/p/i" in another template, one word changed), a POST
//   form ("/form" posting to "/submit", which answers per body).
// Every request is counted: by "METHOD /path?query" (the body appended for POSTs), in arrival
// order in `log`.
import { createServer } from "node:http";

/** mulberry32: a small seeded PRNG, so the text of a page depends only on its number. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ("crawler queue frontier request response header body link anchor page site host path query fragment redirect cache " +
  "filter bloom hash finger print near duplicate template article section paragraph title heading menu footer sidebar index " +
  "archive category tag author date update release version install guide tutorial reference example config option default " +
  "value number string array object method class module package export import function return error warning retry limit").split(" ");

/** The article text of page i: 400 words drawn from a PRNG seeded by i. */
export function articleText(i) {
  const next = rng(1000 + i);
  return Array.from({ length: 400 }, () => WORDS[Math.floor(next() * WORDS.length)]).join(" ");
}

const escape = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * Starts the site. Options: pages (content pages /p/0../p/N-1, default 100), navLinks (link
 * occurrences in the navigation block, default 1250), delayMs (before each answer, default 0),
 * redirects / failing (false: no /old/i, no /fail/i pages), onRequest(entry, count) (called on
 * arrival with "METHOD /path" and its count so far).
 */
export async function startSite(options = {}) {
  const pages = options.pages ?? 100;
  const navLinks = options.navLinks ?? 1250;
  const delayMs = options.delayMs ?? 0;
  const onRequest = options.onRequest;
  const every = (n) => Array.from({ length: pages }, (_, i) => i).filter((i) => i % n === 0);
  const redirects = options.redirects === false ? [] : every(20);
  const failing = options.failing === false ? [] : every(25).map((i) => i + 1).filter((i) => i < pages);
  const templates = every(10);
  const queryPages = every(5);
  const extras = every(10);

  const hits = new Map();
  const log = [];
  let origin = "";

  /** The navigation block's link targets, each spelling once (the block cycles through them). */
  const slots = () => {
    const upper = origin.replace("http://localhost", "HTTP://LOCALHOST");
    const list = ["/", "/form"];
    for (let i = 0; i < pages; i++) {
      list.push(`/p/${i}`, `/p/${i}/`, `/p/${i}?utm_source=nav`, `/p/${i}#main`, `${upper}/p/${i}`, `/p/${i}/?utm_medium=x&utm_campaign=y#f`);
      if (extras.includes(i)) list.push(`/p/${i}?gclid=g${i}`, `/p/${i}?a=2&a=1`);
      if (queryPages.includes(i)) list.push(`/q/${i}?a=1&b=2`, `/q/${i}?b=2&a=1`);
      if (redirects.includes(i)) list.push(`/old/${i}`);
      if (templates.includes(i)) list.push(`/t/${i}`);
      if (failing.includes(i)) list.push(`/fail/${i}`);
    }
    return list;
  };
  let navHtml = "";
  const nav = () => {
    if (navHtml === "") {
      const list = slots();
      const items = Array.from({ length: navLinks }, (_, j) => `<li><a href="${escape(list[j % list.length])}">link ${j}</a></li>`);
      navHtml = `<nav><ul>${items.join("")}</ul></nav>`;
    }
    return navHtml;
  };
  const page = (title, body, template = "a") =>
    template === "a"
      ? `<!doctype html><html><head><title>${title}</title></head><body><header>Site</header>${nav()}<main><article><h1>${title}</h1>${body}</article></main><footer>footer</footer></body></html>`
      : `<!doctype html><html><head><title>${title}</title><style>.x{}</style></head><body><div class="top"><header>Other site chrome</header></div><aside>related: ${WORDS.slice(0, 8).join(" ")}</aside>${nav()}<main><div class="wrap"><article><h1>${title}</h1>${body}</article></div></main><footer>other footer</footer></body></html>`;

  const answer = (req, res, body) => {
    const url = new URL(req.url, "http://x");
    const path = url.pathname;
    const send = (status, html, headers = {}) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
      res.end(html);
    };
    let m;
    if (req.method === "POST" && path === "/submit") return send(200, page("Submitted", `<p>you sent ${escape(body)}</p>`));
    if (path === "/") return send(200, page("Home", "<p>welcome</p>"));
    if (path === "/form") return send(200, page("Form", `<form method="post" action="/submit"><input name="q" value="1"><button>go</button></form>`));
    if ((m = /^\/p\/(\d+)\/?$/.exec(path)) && Number(m[1]) < pages) return send(200, page(`Page ${m[1]}`, `<p>${articleText(Number(m[1]))}</p>`));
    if ((m = /^\/q\/(\d+)$/.exec(path)) && queryPages.includes(Number(m[1]))) return send(200, page(`Query ${m[1]}`, `<p>${articleText(10_000 + Number(m[1]))}</p>`));
    if ((m = /^\/t\/(\d+)$/.exec(path)) && templates.includes(Number(m[1]))) {
      // The same article in the other template, its first word changed.
      const words = articleText(Number(m[1])).split(" ");
      words[0] = "changed";
      return send(200, page(`Page ${m[1]}`, `<p>${words.join(" ")}</p>`, "b"));
    }
    if ((m = /^\/old\/(\d+)$/.exec(path)) && redirects.includes(Number(m[1]))) return send(301, "<p>moved</p>", { location: `/p/${m[1]}` });
    if ((m = /^\/fail\/(\d+)$/.exec(path)) && failing.includes(Number(m[1]))) return send(500, "<p>server error</p>");
    return send(404, "<p>not found</p>");
  };

  const handler = (req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const entry = `${req.method} ${req.url}${req.method === "POST" ? ` ${body}` : ""}`;
      const count = (hits.get(entry) ?? 0) + 1;
      hits.set(entry, count);
      log.push(entry);
      onRequest?.(entry, count);
      if (delayMs > 0) setTimeout(() => answer(req, res, body), delayMs);
      else answer(req, res, body);
    });
  };

  const v4 = createServer(handler);
  await new Promise((resolve, reject) => {
    v4.once("error", reject);
    v4.listen(0, "127.0.0.1", resolve);
  });
  const port = v4.address().port;
  // The same site on ::1 where the host has IPv6 loopback; without it, localhost is 127.0.0.1.
  const v6 = createServer(handler);
  const hasV6 = await new Promise((resolve) => {
    v6.once("error", () => resolve(false));
    v6.listen(port, "::1", () => resolve(true));
  });
  origin = `http://localhost:${port}`;
  const servers = hasV6 ? [v4, v6] : [v4];

  return {
    origin,
    port,
    pages,
    navLinks,
    redirects,
    failing,
    templates,
    queryPages,
    extras,
    hits,
    log,
    slots,
    /** Forgets the counts (between two crawls of one site). */
    reset() {
      hits.clear();
      log.length = 0;
    },
    async close() {
      await Promise.all(servers.map((s) => new Promise((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      })));
    },
  };
}
