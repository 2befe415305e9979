// `npm run demo`: serves the repository on http://127.0.0.1:PORT (default 8080; PORT=0 picks a
// free one) and prints the demo's address. The page's Content-Security-Policy is the one
// crawlsieve needs: 'wasm-unsafe-eval' lets it compile its WebAssembly.
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css", ".txt": "text/plain; charset=utf-8", ".svg": "image/svg+xml", ".json": "application/json" };
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:";

/** Starts the server; resolves with its origin. */
export function startDemo(port = Number(process.env.PORT ?? 8080)) {
  const server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    const path = normalize(join(root, pathname === "/" ? "/examples/web/index.html" : pathname));
    if (!path.startsWith(root + sep)) return void response.writeHead(403).end();
    try {
      if (!statSync(path).isFile()) throw new Error("not a file");
    } catch {
      return void response.writeHead(404).end("not found");
    }
    response.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream", "content-security-policy": CSP });
    createReadStream(path).pipe(response);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { origin } = await startDemo();
  console.log(`crawlsieve demo: ${origin}/examples/web/index.html  (Ctrl-C to stop)`);
}
