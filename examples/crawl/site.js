// An offline copy of the link structure of Node's API documentation, served on loopback: the
// shipped crawl of it (examples/nodejs-doc-links.txt, every link of every page in crawl order)
// is cut into pages, one per distinct URL in order of first appearance, each listing the next
// slice of links as the real crawl met them (with their fragments, queries and hosts, all
// rewritten to this server), plus table-of-contents links. So a crawler here meets the real
// spellings and repeats of a docs site.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const LINKS = new URL("../nodejs-doc-links.txt", import.meta.url);

/**
 * Starts the site with `pages` pages (at most 11,401) on `port` (0: any free one; a fixed port
 * keeps URLs, and so the keys of a seen-set on disk, the same from run to run). Resolves with
 * { origin, start, pages, hits, close }.
 */
export async function startDocsSite(pages = 2000, port = 0) {
  const stream = readFileSync(LINKS, "utf8").split("\n").filter(Boolean);
  // Every URL becomes a local path: /<host><path><query>, its fragment kept in the link.
  const local = (url) => {
    const u = new URL(url);
    return `/${u.host}${u.pathname}${u.search}${u.hash}`;
  };
  const order = [];
  const index = new Map();
  // The prefix of the crawl that met the first `pages` URLs is shared out among them.
  let prefix = 0;
  for (const url of stream) {
    const key = local(url).replace(/#.*/, "");
    if (!index.has(key)) {
      if (order.length === pages) break;
      index.set(key, order.length);
      order.push(key);
    }
    prefix++;
  }
  const perPage = Math.ceil(prefix / order.length);
  const hits = new Map();
  const server = createServer((req, res) => {
    hits.set(req.url, (hits.get(req.url) ?? 0) + 1);
    const page = index.get(req.url);
    if (page === undefined) return res.writeHead(404).end();
    // Links to pages past the site's size are left out, so the site is closed.
    const links = stream
      .slice(page * perPage, (page + 1) * perPage)
      .map(local)
      .filter((l) => index.has(l.replace(/#.*/, "")));
    // And links down a table of contents (pages 2i + 1 and 2i + 2), as documentation sites have,
    // so every page can be reached and the frontier widens as a real crawl's does.
    for (const child of [2 * page + 1, 2 * page + 2]) if (child < order.length) links.push(order[child]);
    const body = links.map((href) => `<a href="${href}">${href}</a>`).join("\n");
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(`<!doctype html><title>${req.url}</title>\n${body}\n`);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    start: `${origin}${order[0]}`,
    pages: order.length,
    hits,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
