// `npm run demo`: serves the demo page (examples/web) and the build it loads (build/) on
// http://127.0.0.1:PORT (default 8080; PORT=0 picks a free one), nothing else of the repository,
// and prints the demo's address. The page's Content-Security-Policy is the one crawlsieve needs:
// 'wasm-unsafe-eval' lets it compile its WebAssembly.
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
// The folders a request may read from: the page and the build, never the sources or .git.
const SERVED = ["examples/web", "build"].map((dir) => join(root, dir) + sep);
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".wasm": "application/wasm",
  ".css": "text/css",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".png": "image/png",
  ".map": "application/json",
};
const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:";

/** The port from PORT (default 8080), or an error naming the bad value. */
function portFromEnv() {
  const text = process.env.PORT ?? "8080";
  const port = Number(text);
  if (text.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number from 0 to 65535, got ${JSON.stringify(text)}`);
  return port;
}

/** Starts the server on `port` (default: PORT, else 8080); resolves with it and its origin, rejects with a one-line error when the port is taken. */
export function startDemo(port = portFromEnv()) {
  const server = createServer((request, response) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    } catch {
      return void response.writeHead(400).end("bad path");
    }
    const path = normalize(join(root, pathname === "/" ? "/examples/web/index.html" : pathname));
    try {
      if (!SERVED.some((dir) => path.startsWith(dir)) || !statSync(path).isFile()) throw new Error("not served");
    } catch {
      return void response.writeHead(404).end("not found");
    }
    response.writeHead(200, {
      "content-type": TYPES[extname(path)] ?? "application/octet-stream",
      "content-security-policy": CSP,
    });
    createReadStream(path).pipe(response);
  });
  return new Promise((resolve, reject) => {
    server.once("error", (error) => {
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`port ${port} on 127.0.0.1 is in use; set PORT to another (PORT=0 picks a free one)`)
          : error,
      );
    });
    server.listen(port, "127.0.0.1", () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const { origin } = await startDemo();
    console.log(`crawlsieve demo: ${origin}/examples/web/index.html  (Ctrl-C to stop)`);
  } catch (error) {
    process.stderr.write(`crawlsieve demo: ${error.message}\n`);
    process.exitCode = 1;
  }
}
