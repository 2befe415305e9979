// The workerd entry in real workerd (the npm package's binary, offline): the edge example
// (examples/worker) passes its own test, and the cross-runtime computation, including loading
// the counting filter, time window and SimHash index Node serialized, gives Node's bytes and
// answers.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import * as node from "../../build/js/index.node.js";
import { compute } from "../browser/compute.js";
import { fixtureWithBytes } from "../browser/fixture.js";

const root = new URL("../../", import.meta.url).pathname;
const WORKERD = join(root, "node_modules/.bin/workerd");

function workerdTest(dir: string): { code: number | null; output: string } {
  const result = spawnSync(WORKERD, ["test", "config.capnp"], { cwd: dir, encoding: "utf8", timeout: 180_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

beforeAll(async () => {
  await node.init();
});

describe("workerd", () => {
  it("runs the edge example: a filter made in Node answers for request URLs", () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-worker-"));
    const built = spawnSync(process.execPath, [join(root, "examples/worker/build.js"), dir], { encoding: "utf8" });
    expect(built.status, built.stderr).toBe(0);
    const { code, output } = workerdTest(dir);
    expect(output).toMatch(/worker ok: \{"keys":\d+/);
    expect(output).toMatch(/\[ PASS \] main/);
    expect(code).toBe(0);
  }, 180_000);

  it("gives Node's bytes and answers for every structure, and loads what Node serialized", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-edge-"));
    const f = fixtureWithBytes();
    const expected = compute(node, f);
    writeFileSync(join(dir, "fixture.json"), JSON.stringify(f));
    writeFileSync(join(dir, "expected.json"), JSON.stringify(expected));
    await build({
      entryPoints: [new URL("./cross-runtime-worker.js", import.meta.url).pathname],
      bundle: true,
      format: "esm",
      alias: { crawlsieve: join(root, "build/js/index.workerd.js") },
      plugins: [
        {
          name: "fixtures",
          setup: (b) => {
            b.onResolve({ filter: /\.wasm$/ }, () => ({ path: "./crawlsieve.wasm", external: true }));
            b.onResolve({ filter: /^\.\/(fixture|expected)\.json$/ }, (args) => ({ path: join(dir, args.path) }));
          },
        },
      ],
      outfile: join(dir, "worker.js"),
      logLevel: "warning",
    });
    copyFileSync(join(root, "build/crawlsieve.wasm"), join(dir, "crawlsieve.wasm"));
    writeFileSync(
      join(dir, "config.capnp"),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = ( services = [ (name = "main", worker = .w) ] );
const w :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js"), (name = "crawlsieve.wasm", wasm = embed "crawlsieve.wasm") ],
  compatibilityDate = "2024-09-23",
);
`,
    );
    const { code, output } = workerdTest(dir);
    expect(output).toMatch(
      /workerd agrees with Node on: canonical, fingerprints, md5s, bloom, blocked, answers, counting, multiplicity, window, simhash, index, near, loaded/,
    );
    expect(code).toBe(0);
  }, 180_000);
});
