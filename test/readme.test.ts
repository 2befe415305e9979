// Every code block of README.md, extracted from the file and run as written. A block's info
// string says how: `js` runs under Node inside the repository (so "crawlsieve" resolves to this
// package), and each `console.log(...); // => X` line must print exactly X, in order;
// `sh quickstart` runs its first command on a copy of the repository and checks that CI runs
// the second; `js vite` / `sh vite` and `js esbuild` / `sh esbuild` are bundler recipes, built
// as written and loaded in headless Chromium; `sh worker` runs from the repository root;
// `text cli` must be the commands' own usage lines.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, serve, watchProblems } from "./browser/chromium.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const root = new URL("../", import.meta.url).pathname;
const CLI = join(root, "build/js/cli/main.js");

interface Block {
  readonly info: string;
  readonly code: string;
  readonly line: number;
}

/** The fenced blocks of a Markdown text, with their info strings; indented fences (in list items) included. */
function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(.*)$/.exec(lines[i]);
    if (open === null) continue;
    const indent = open[1].length;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && lines[j].trimEnd() !== `${" ".repeat(indent)}\`\`\``) body.push(lines[j++].slice(indent));
    if (j === lines.length) throw new Error(`README.md:${i + 1}: a code block is not closed`);
    found.push({ info: open[2].trim(), code: body.join("\n") + "\n", line: i + 1 });
    i = j;
  }
  return found;
}

const blocks = fencedBlocks(readFileSync(join(root, "README.md"), "utf8"));
const only = (info: string) => {
  const matching = blocks.filter((b) => b.info === info);
  expect(matching, `blocks "${info}"`).toHaveLength(1);
  return matching[0];
};
const KNOWN = ["js", "sh quickstart", "js vite", "sh vite", "js esbuild", "sh esbuild", "sh worker", "text cli"];

/** The outputs a js block promises: the X of every `// => X`, in order. */
function promised(code: string): string[] {
  return code.split("\n").flatMap((line) => {
    const match = /\/\/ => (.*)$/.exec(line);
    return match === null ? [] : [match[1]];
  });
}

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

describe("README.md", () => {
  it("has only blocks this test runs, each kind where it belongs", () => {
    for (const block of blocks) expect(KNOWN, `README.md:${block.line} has a block "${block.info}"`).toContain(block.info);
    expect(blocks.filter((b) => b.info === "js").length).toBeGreaterThanOrEqual(3);
  });

  describe.each(blocks.filter((b) => b.info === "js").map((b) => [b.line, b] as const))("the js block at line %i", (line, block) => {
    it("runs and prints what its comments say", () => {
      const dir = join(root, "build", "readme");
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `block-${line}.mjs`);
      writeFileSync(file, block.code);
      const result = spawnSync(process.execPath, [file], { cwd: dir, encoding: "utf8", timeout: 60_000, env: { ...process.env, REDIS_URL: redis.url } });
      expect(result.status, `README.md:${line}\n${result.stderr}`).toBe(0);
      const printed = result.stdout.split("\n").slice(0, -1);
      expect(printed).toEqual(promised(block.code));
    });
  });

  it("quick start: the first command works on a copy of the repository", () => {
    const command = only("sh quickstart").code.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"))[0];
    const copy = mkdtempSync(join(tmpdir(), "cs-clone-"));
    // What a clone has: the tracked files and the new ones not ignored (this test also runs before a commit).
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
    for (const file of files) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      try {
        copyFileSync(join(root, file), join(copy, file));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error; // deleted, not yet committed
      }
    }
    const out = command.match(/> (\S+)$/)?.[1];
    expect(out, "the command writes the unique links to a file").toBeDefined();
    // Written inside the copy (not at the README's fixed path, which another run may hold), and
    // installed from npm's cache alone: the test needs no registry and fails if the lock file
    // names a package the cache lacks.
    const target = join(copy, "unique-links.txt");
    const result = spawnSync("bash", ["-c", command.replace(out!, target)], { cwd: copy, encoding: "utf8", timeout: 540_000, env: { ...process.env, npm_config_offline: "true" } });
    expect(result.status, result.stderr.slice(-2000)).toBe(0);
    const stats = JSON.parse(result.stderr.trim().split("\n").pop()!);
    const input = readFileSync(join(root, "examples/nodejs-doc-links.txt"), "utf8").split("\n").slice(0, -1);
    const firsts = [...new Set(input)];
    expect([stats.lines, stats.unique]).toEqual([57_287, 11_401]);
    expect(readFileSync(target, "utf8")).toBe(firsts.join("\n") + "\n");
    rmSync(copy, { recursive: true, force: true });
  }, 600_000);

  it("quick start: the second command is the one CI runs", () => {
    const command = only("sh quickstart").code.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"))[1];
    expect(command).toBe("npm ci && npm test");
    const ci = readFileSync(join(root, ".ci/run"), "utf8");
    const steps = ci.split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
    // Unmasked: each step of the command on a line of its own, in order, under `set -e`, and no
    // `&&` or `||` list anywhere (bash ignores a failure inside a non-final `&&` part).
    expect(steps).toContain("set -euo pipefail");
    const at = command.split("&&").map((part) => steps.indexOf(part.trim()));
    expect(at.every((i) => i >= 0), `${command} split into lines of .ci/run`).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(steps.filter((line) => /&&|\|\|/.test(line))).toEqual([]);
    // What CI installs for the tests, the README names as the second command's prerequisites.
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const prerequisites = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("```sh quickstart"));
    const installed = [...ci.matchAll(/missing\+=\(([\w-]+)\)/g)].map((m) => m[1]);
    expect(installed.length).toBeGreaterThanOrEqual(4);
    for (const name of installed) expect(prerequisites, name).toContain(`\`${name}\``);
  });

  it("the command-line synopsis is each command's own usage line", () => {
    const help = spawnSync(process.execPath, [CLI, "--help"], { encoding: "utf8" }).stdout.split("\n");
    for (const line of only("text cli").code.trim().split("\n")) expect(help, line).toContain(line);
  });

  it("the edge worker example runs as the block says", () => {
    const result = spawnSync("bash", ["-e", "-c", only("sh worker").code], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/\[ PASS \] main/);
  }, 150_000);

  describe.each([
    ["vite", "main.js", '<!doctype html><html><head><link rel="icon" href="data:,"></head><body><script type="module" src="/main.js"></script></body></html>', "index.html"],
    ["esbuild", "app.js", '<!doctype html><html><head><link rel="icon" href="data:,"></head><body><script type="module" src="app.js"></script></body></html>', "dist/index.html"],
  ] as const)("the %s recipe", (tool, entry, html, htmlAt) => {
    it("builds as written, and the page runs in headless Chromium", async () => {
      const app = mkdtempSync(join(tmpdir(), `cs-${tool}-`));
      // A user's project: the package and the bundler installed (linked from this checkout).
      mkdirSync(join(app, "node_modules", ".bin"), { recursive: true });
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: `${tool}-app`, private: true, type: "module" }));
      symlinkSync(root, join(app, "node_modules", "crawlsieve"));
      symlinkSync(join(root, "node_modules", tool), join(app, "node_modules", tool));
      symlinkSync(join(root, "node_modules", ".bin", tool), join(app, "node_modules", ".bin", tool));
      writeFileSync(join(app, entry), only(`js ${tool}`).code);
      mkdirSync(join(app, dirname(htmlAt)), { recursive: true });
      writeFileSync(join(app, htmlAt), html);
      const built = spawnSync("bash", ["-e", "-c", only(`sh ${tool}`).code], { cwd: app, encoding: "utf8", timeout: 120_000, env: { ...process.env, npm_config_offline: "true" } });
      expect(built.status, `${built.stdout}${built.stderr}`).toBe(0);
      const { server, origin } = await serve(join(app, "dist"));
      const browser = await launch();
      try {
        const page = await browser.newPage();
        const problems = watchProblems(page);
        await page.goto(`${origin}/index.html`);
        await page.waitForFunction(() => document.body.textContent !== "", undefined, { timeout: 30_000 }).catch((error: Error) => {
          throw new Error(`${error.message}\n${problems.join("\n")}`);
        });
        expect(await page.evaluate(() => document.body.textContent)).toBe("1,0");
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
        server.close();
      }
    }, 150_000);
  });
});
