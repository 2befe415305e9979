// A real crawl-order link stream for `npm run bench:cli`: each documentation site (HTML files on
// disk from Debian doc packages, see bench/crawl-stream.sh) is crawled breadth-first from its
// index.html as if served at BASE_URL; every href of every page is printed, resolved (and without
// its fragment unless --fragments is given), in the order a crawler extracts them. Navigation
// makes most of them repeats. Pages are queued once each, whatever fragments link to them.
// usage: node bench/crawl-links.js [--fragments] DIR BASE_URL [DIR BASE_URL ...] > stream.txt
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const keepFragments = process.argv[2] === "--fragments";
const args = process.argv.slice(keepFragments ? 3 : 2);
const HREF = /href\s*=\s*(?:"([^"]*)"|'([^']*)')/gi;
let out = [];
let size = 0;
const flush = () => {
  process.stdout.write(out.join(""));
  out = [];
  size = 0;
};

for (let s = 0; s < args.length; s += 2) {
  const dir = args[s];
  const base = new URL(args[s + 1].endsWith("/") ? args[s + 1] : args[s + 1] + "/");
  const queue = [new URL("index.html", base).href];
  const queued = new Set(queue);
  for (let head = 0; head < queue.length; head++) {
    const page = queue[head];
    const file = join(dir, decodeURIComponent(page.slice(base.href.length)));
    let html;
    try {
      html = readFileSync(file, "latin1");
    } catch {
      continue;
    }
    for (const match of html.matchAll(HREF)) {
      const href = match[1] ?? match[2];
      if (href === "" || /^(mailto|javascript|data):/i.test(href)) continue;
      let url;
      try {
        url = new URL(href.replace(/&amp;/g, "&"), page);
      } catch {
        continue;
      }
      if (!keepFragments) url.hash = "";
      const text = url.href;
      out.push(text + "\n");
      size += text.length;
      if (size > 1 << 20) flush();
      url.hash = "";
      const pageUrl = url.href;
      if (!pageUrl.startsWith(base.href) || queued.has(pageUrl)) continue;
      let target;
      try {
        target = join(dir, decodeURIComponent(url.pathname.slice(base.pathname.length)));
      } catch {
        continue;
      }
      if (existsSync(target) && statSync(target).isDirectory()) target = join(target, "index.html");
      if (/\.html?$/.test(target) && existsSync(target)) {
        queued.add(pageUrl);
        queue.push(pageUrl);
      }
    }
  }
}
flush();
