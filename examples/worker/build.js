// Builds the edge example: a Bloom filter of the sample's canonical links (serialized by Node),
// and the worker bundled with crawlsieve's workerd entry into one module beside the .wasm.
// Usage: node examples/worker/build.js [OUT_DIR]   (default examples/worker/dist)
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { build } from "esbuild";
import { BloomFilter, canonicalizeUrl, initSync } from "../../build/js/index.node.js";

initSync();
const here = new URL(".", import.meta.url).pathname;
const out = process.argv[2] ?? `${here}dist`;
mkdirSync(out, { recursive: true });
const links = readFileSync(new URL("../nodejs-doc-links.txt", import.meta.url), "utf8")
  .split("\n")
  .filter(Boolean);
const filter = new BloomFilter({ items: 100_000, fpRate: 1e-4 });
filter.addMany(links.map((link) => canonicalizeUrl(link)));
writeFileSync(`${out}/filter.bin`, filter.serialize());
await build({
  entryPoints: [`${here}worker.js`],
  bundle: true,
  format: "esm",
  conditions: ["workerd", "worker"],
  alias: { crawlsieve: `${here}../../build/js/index.workerd.js` },
  // The .wasm and the filter stay modules of their own, named as the config names them.
  plugins: [
    {
      name: "modules",
      setup: (b) =>
        b.onResolve({ filter: /\.(wasm|bin)$/ }, (args) => ({
          path: `./${args.path.split("/").pop()}`,
          external: true,
        })),
    },
  ],
  outfile: `${out}/worker.js`,
  logLevel: "warning",
});
copyFileSync(`${here}../../build/crawlsieve.wasm`, `${out}/crawlsieve.wasm`);
copyFileSync(`${here}config.capnp`, `${out}/config.capnp`);
console.log(`built ${out}: worker.js, crawlsieve.wasm, filter.bin (${filter.count} links), config.capnp`);
