// Builds the Durable Object example for workerd: the worker bundled with crawlsieve's
// durable-object entry, the .wasm beside it, and a config.capnp that keeps the objects' SQLite
// files in STORAGE_DIR (so they survive a restart) and listens on PORT.
// Usage: node examples/durable-object/build.js OUT_DIR STORAGE_DIR [PORT]
//   then: cd OUT_DIR && npx workerd serve config.capnp --experimental
// bench/durable-object.bench.js passes its own entry (which re-exports this worker) and the
// names of the extra Durable Object classes it exports; each is bound under its class name.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const here = new URL(".", import.meta.url).pathname;
const root = resolve(here, "../..");

/** Writes worker.js, crawlsieve.wasm and config.capnp into `out`; objects persist in `storage`. */
export async function buildDurableWorker({ out, storage, port = 8788, entry = `${here}worker.js`, classes = [] }) {
  mkdirSync(out, { recursive: true });
  mkdirSync(storage, { recursive: true });
  await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    conditions: ["workerd", "worker"],
    alias: { "crawlsieve/durable-object": `${root}/build/js/durable-object/index.js` },
    // The .wasm stays a module of its own, named as the config names it.
    plugins: [
      {
        name: "wasm",
        setup: (b) => b.onResolve({ filter: /\.wasm$/ }, () => ({ path: "./crawlsieve.wasm", external: true })),
      },
    ],
    outfile: `${out}/worker.js`,
    logLevel: "warning",
  });
  copyFileSync(`${root}/build/crawlsieve.wasm`, `${out}/crawlsieve.wasm`);
  writeFileSync(`${out}/config.capnp`, config(resolve(storage), port, classes));
}

/** The workerd configuration: SQLite-backed objects (enableSql) on local disk, SeenSetDurableObject bound as SEEN. */
export function config(storage, port, extraClasses = []) {
  const classes = ["SeenSetDurableObject", ...extraClasses];
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "do-disk", disk = (path = ${JSON.stringify(storage)}, writable = true)),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "crawlsieve.wasm", wasm = embed "crawlsieve.wasm"),
  ],
  compatibilityDate = "2024-09-23",
  durableObjectNamespaces = [
${classes.map((c) => `    (className = "${c}", uniqueKey = "crawlsieve-${c}", enableSql = true),`).join("\n")}
  ],
  durableObjectStorage = (localDisk = "do-disk"),
  bindings = [
${classes.map((c, i) => `    (name = "${i === 0 ? "SEEN" : c}", durableObjectNamespace = "${c}"),`).join("\n")}
  ],
);
`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [out, storage, port] = process.argv.slice(2);
  if (out === undefined || storage === undefined) {
    console.error("usage: node examples/durable-object/build.js OUT_DIR STORAGE_DIR [PORT]");
    process.exit(2);
  }
  await buildDurableWorker({ out, storage, port: port === undefined ? undefined : Number(port) });
  console.log(`built ${out}: worker.js, crawlsieve.wasm, config.capnp (objects kept in ${storage})`);
}
