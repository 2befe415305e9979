// Real headless Chromium (Debian's, driven by playwright-core) and a loopback file server.
import { createReadStream, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

const TYPES: Record<string, string> = {
  ".js": "text/javascript",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".html": "text/html",
};

/** Serves files under `root` on 127.0.0.1 (a free port), with `headers` on every file, and returns the server and its origin. */
export async function serve(
  root: string,
  headers: Record<string, string> = {},
): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const path = normalize(join(root, decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname)));
    if (!path.startsWith(root + sep) && path !== root) return void response.writeHead(403).end();
    try {
      if (!statSync(path).isFile()) throw new Error("not a file");
    } catch {
      return void response.writeHead(404).end();
    }
    response.writeHead(200, { "content-type": TYPES[extname(path)] ?? "text/plain", ...headers });
    createReadStream(path).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  return { server, origin: `http://127.0.0.1:${address.port}` };
}

const OPTIONS = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
};

/** Launches Debian's Chromium headless (a fresh temporary profile) with the flags this closed network needs. */
export async function launch(): Promise<Browser> {
  return chromium.launch(OPTIONS);
}

/** Launches Chromium on the profile in `dir` (kept when the browser closes: OPFS, IndexedDB and all), with the same flags. */
export async function launchPersistent(dir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(dir, OPTIONS);
}

/** Collects what goes wrong on a page (script errors, console errors, failed and 4xx/5xx requests), for assertion messages. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  page.on("requestfailed", (request) => problems.push(`failed: ${request.url()}`));
  page.on(
    "response",
    (response) => response.status() >= 400 && problems.push(`${response.status()}: ${response.url()}`),
  );
  return problems;
}

/** A page on the served origin with the browser build initialised as `window.cs` and compute.js as `window.compute`. */
export async function pageWithPackage(browser: Browser, origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/test/browser/blank.html`);
  // A string, not a function: the test transform would rewrite import() inside a function.
  await page.evaluate(`(async () => {
    const cs = await import("/build/js/index.browser.js");
    await cs.init();
    window.cs = cs;
    window.compute = (await import("/test/browser/compute.js")).compute;
  })()`);
  return page;
}
