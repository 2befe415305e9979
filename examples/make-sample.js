// Regenerates examples/nodejs-doc-links.txt: every link (<a href>) of the Node.js API
// documentation that Debian's nodejs package installs in /usr/share/doc/nodejs/api, in document
// order, resolved to absolute URLs against the page's address on nodejs.org. Real crawl frontier
// data: the same URL appears from many pages, with and without fragments.
// Usage: node examples/make-sample.js [DOC_DIR] > examples/nodejs-doc-links.txt
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Parser } from "htmlparser2";

const dir = process.argv[2] ?? "/usr/share/doc/nodejs/api";
const version = process.version;
const out = [];
for (const file of readdirSync(dir)
  .filter((name) => name.endsWith(".html"))
  .sort()) {
  const base = `https://nodejs.org/docs/${version}/api/${file}`;
  const parser = new Parser({
    onopentag(name, attributes) {
      if (name !== "a" || attributes.href === undefined) return;
      try {
        out.push(new URL(attributes.href, base).href);
      } catch {
        // An href no URL parser accepts is not a crawlable link.
      }
    },
  });
  parser.write(readFileSync(join(dir, file), "utf8"));
  parser.end();
}
process.stdout.write(out.join("\n") + "\n");
