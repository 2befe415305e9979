// The demo server (examples/web/serve.js) as `npm run demo` starts it: it serves the demo page and
// the build and nothing else of the repository, takes PORT, and says in one line when the port is
// taken (issue 30 item 16: `/.git/config` answered 200, and a busy port was a stack trace).
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript without types
import { startDemo } from "../examples/web/serve.js";

const SERVE = new URL("../examples/web/serve.js", import.meta.url).pathname;
let server: Server;
let origin: string;

beforeAll(async () => {
  ({ server, origin } = await startDemo(0));
});
afterAll(() => server?.close());

describe("the demo server", () => {
  it("serves the demo and the build, and nothing else of the repository", async () => {
    const status = async (path: string) => (await fetch(origin + path)).status;
    for (const path of [
      "/",
      "/examples/web/index.html",
      "/examples/web/app.js",
      "/examples/web/worker.js",
      "/build/js/index.browser.js",
      "/build/crawlsieve.wasm",
    ]) {
      expect([path, await status(path)]).toEqual([path, 200]);
    }
    for (const path of [
      "/.git/config",
      "/package.json",
      "/README.md",
      "/src/index.common.ts",
      "/examples/nodejs-doc-links.txt",
      "/build/../package.json",
      "/examples/web/../../package.json",
      "/build%2f..%2fpackage.json",
      "/examples/webx/index.html",
    ]) {
      expect([path, await status(path)]).toEqual([path, 404]);
    }
    expect((await fetch(`${origin}/build/crawlsieve.wasm`)).headers.get("content-type")).toBe("application/wasm");
  });

  it("takes PORT, and says in one line when it is taken or not a port", async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const taken = spawnSync(process.execPath, [SERVE], {
        env: { ...process.env, PORT: String(port) },
        timeout: 120_000,
      });
      expect([taken.status, taken.stderr.toString()]).toEqual([
        1,
        `crawlsieve demo: port ${port} on 127.0.0.1 is in use; set PORT to another (PORT=0 picks a free one)\n`,
      ]);
    } finally {
      busy.close();
    }
    const bad = spawnSync(process.execPath, [SERVE], { env: { ...process.env, PORT: "http" }, timeout: 120_000 });
    expect([bad.status, bad.stderr.toString()]).toEqual([
      1,
      'crawlsieve demo: PORT must be a port number from 0 to 65535, got "http"\n',
    ]);
  });
});
