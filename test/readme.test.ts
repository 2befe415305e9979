// Every code block of README.md and of the guides in docs/, extracted from the files and run as
// written. A block's info string says how: `js` runs under Node inside the repository (so
// "crawlsieve" resolves to this package), and each `console.log(...); // => X` line must print
// exactly X, in order; `ts` is type-checked by tsc under `strict` against the built package;
// `text` is prose (an install line) and is not run;
// `sh quickstart` runs its first command on a copy of the repository and checks that CI runs
// the second; `js vite` / `sh vite` and `js esbuild` / `sh esbuild` are bundler recipes, built
// as written and loaded in headless Chromium; `sh worker` runs from the repository root;
// `text cli` must be the commands' own usage lines; `js durable-object`, `capnp durable-object`
// and `sh durable-object` are a Worker, its workerd config and the commands, run in a project
// with the package installed (`workerd test` must pass); `toml wrangler` must bind the class that
// Worker exports as a SQLite class; `js seen-page` / `sh seen-page` are a page built as written
// and loaded in Chromium on a persistent profile, before and after a browser restart.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, launchPersistent, serve, watchProblems } from "./browser/chromium.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

const root = new URL("../", import.meta.url).pathname;
const CLI = join(root, "build/js/cli/main.js");

interface Block {
  /** The Markdown file, relative to the repository. */
  readonly file: string;
  readonly info: string;
  readonly code: string;
  readonly line: number;
}

/** The fenced blocks of a Markdown text, with their info strings; indented fences (in list items) included. */
function fencedBlocks(markdown: string, file: string): Block[] {
  const lines = markdown.split("\n");
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(.*)$/.exec(lines[i]);
    if (open === null) continue;
    const indent = open[1].length;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && lines[j].trimEnd() !== `${" ".repeat(indent)}\`\`\``)
      body.push(lines[j++].slice(indent));
    if (j === lines.length) throw new Error(`${file}:${i + 1}: a code block is not closed`);
    found.push({ file, info: open[2].trim(), code: body.join("\n") + "\n", line: i + 1 });
    i = j;
  }
  return found;
}

/** README.md and every Markdown file under docs/. */
function markdownFiles(): string[] {
  const docs = execFileSync("find", [join(root, "docs"), "-name", "*.md"], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .sort();
  return ["README.md", ...docs.map((file) => relative(root, file))];
}

const files = markdownFiles();
const blocks = files.flatMap((file) => fencedBlocks(readFileSync(join(root, file), "utf8"), file));
const only = (info: string) => {
  const matching = blocks.filter((b) => b.info === info);
  expect(matching, `blocks "${info}"`).toHaveLength(1);
  return matching[0];
};
const KNOWN = [
  "js",
  "ts",
  "text",
  "sh quickstart",
  "js vite",
  "sh vite",
  "js esbuild",
  "sh esbuild",
  "sh worker",
  "text cli",
  "toml wrangler",
  "js durable-object",
  "capnp durable-object",
  "sh durable-object",
  "js seen-page",
  "sh seen-page",
];

/** A user's project in a temporary folder: the package and the named tools installed (linked from this checkout). */
function project(prefix: string, tools: readonly string[]): string {
  const app = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(app, "node_modules", ".bin"), { recursive: true });
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: prefix.replace(/\W/g, ""), private: true, type: "module" }),
  );
  symlinkSync(root, join(app, "node_modules", "crawlsieve"));
  for (const tool of tools) {
    symlinkSync(join(root, "node_modules", tool), join(app, "node_modules", tool));
    symlinkSync(join(root, "node_modules", ".bin", tool), join(app, "node_modules", ".bin", tool));
  }
  return app;
}

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
}, 120_000);
afterAll(async () => {
  await redis?.stop();
});

describe("README.md and docs/", () => {
  it("have only blocks this test runs, each kind where it belongs", () => {
    expect(files.length).toBeGreaterThan(8);
    for (const block of blocks)
      expect(KNOWN, `${block.file}:${block.line} has a block "${block.info}"`).toContain(block.info);
    expect(blocks.filter((b) => b.info === "js").length).toBeGreaterThanOrEqual(3);
    expect(blocks.filter((b) => b.info === "ts").length).toBeGreaterThanOrEqual(1);
    // The README is an entry point, not a reference.
    expect(readFileSync(join(root, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(250);
  });

  describe.each(blocks.filter((b) => b.info === "js").map((b) => [`${b.file}:${b.line}`, b] as const))(
    "the js block at %s",
    (where, block) => {
      it("runs and prints what its comments say", () => {
        const dir = join(root, "build", "readme");
        mkdirSync(dir, { recursive: true });
        const file = join(dir, `block-${where.replace(/[^\w]+/g, "-")}.mjs`);
        writeFileSync(file, block.code);
        const result = spawnSync(process.execPath, [file], {
          cwd: dir,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, REDIS_URL: redis.url },
        });
        expect(result.status, `${where}\n${result.stderr}`).toBe(0);
        const printed = result.stdout.split("\n").slice(0, -1);
        expect(printed).toEqual(promised(block.code));
      });
    },
  );

  it("every ts block type-checks under strict against the built package", () => {
    const dir = join(root, "build", "readme-ts");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const names = blocks
      .filter((b) => b.info === "ts")
      .map((block) => {
        const name = `block-${block.file.replace(/[^\w]+/g, "-")}-${block.line}.ts`;
        writeFileSync(join(dir, name), block.code);
        return name;
      });
    const config = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        types: ["node"],
        skipLibCheck: true,
      },
      files: names,
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config));
    const result = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", dir], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
  }, 150_000);

  it("quick start: the first command works on a copy of the repository", () => {
    const command = only("sh quickstart")
      .code.split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("#"))[0];
    const copy = mkdtempSync(join(tmpdir(), "cs-clone-"));
    // What a clone has: the tracked files and the new ones not ignored (this test also runs before a commit).
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
    })
      .split("\0")
      .filter(Boolean);
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
    // installed from npm's cache first (prefer-offline: the registry only for what the cache
    // lacks; forced offline, npm ci still asks for some packages' metadata and fails).
    const target = join(copy, "unique-links.txt");
    const result = spawnSync("bash", ["-c", command.replace(out!, target)], {
      cwd: copy,
      encoding: "utf8",
      timeout: 540_000,
      env: { ...process.env, npm_config_prefer_offline: "true" },
    });
    expect(result.status, result.stderr.slice(-2000)).toBe(0);
    const stats = JSON.parse(result.stderr.trim().split("\n").pop()!);
    const input = readFileSync(join(root, "examples/nodejs-doc-links.txt"), "utf8").split("\n").slice(0, -1);
    const firsts = [...new Set(input)];
    expect([stats.lines, stats.unique]).toEqual([57_287, 11_401]);
    expect(readFileSync(target, "utf8")).toBe(firsts.join("\n") + "\n");
    rmSync(copy, { recursive: true, force: true });
  }, 600_000);

  it("examples/README.md names every example, and each test it names runs that example", () => {
    const index = readFileSync(join(root, "examples/README.md"), "utf8");
    const rows = [...index.matchAll(/^\| `([^`]+)` \|.*\| `(test\/[^`]+)` \|$/gm)].map((m) => ({
      example: m[1],
      test: m[2],
    }));
    const entries = execFileSync("git", ["ls-files", "examples"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter((f) => f && f !== "examples/README.md");
    // Every tracked file is an example or lies in an example folder that has a row.
    for (const file of entries)
      expect(
        rows.some(
          (r) =>
            file === `examples/${r.example}` ||
            file.startsWith(`examples/${r.example.replace(/\/?$/, "/")}`) ||
            file.startsWith(`examples/${r.example.split("/")[0]}/`),
        ),
        file,
      ).toBe(true);
    for (const { example, test } of rows) {
      const source = readFileSync(join(root, test), "utf8");
      const path = `examples/${example}`.replace(/\/$/, "");
      expect(source.includes(path) || source.includes(dirname(path) + "/"), `${test} runs ${path}`).toBe(true);
    }
    expect(rows.length).toBeGreaterThanOrEqual(8);
  });

  it("quick start: the second command is the one CI runs", () => {
    const command = only("sh quickstart")
      .code.split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("#"))[1];
    expect(command).toBe("npm ci && npm test");
    const ci = readFileSync(join(root, ".ci/run"), "utf8");
    const steps = ci.split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
    // Unmasked: each step of the command on a line of its own, in order, under `set -e`, and no
    // `&&` or `||` list anywhere (bash ignores a failure inside a non-final `&&` part).
    expect(steps).toContain("set -euo pipefail");
    const at = command.split("&&").map((part) => steps.indexOf(part.trim()));
    expect(
      at.every((i) => i >= 0),
      `${command} split into lines of .ci/run`,
    ).toBe(true);
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
    const result = spawnSync("bash", ["-e", "-c", only("sh worker").code], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/\[ PASS \] main/);
  }, 150_000);

  describe.each([
    [
      "vite",
      "main.js",
      '<!doctype html><html><head><link rel="icon" href="data:,"></head><body><script type="module" src="/main.js"></script></body></html>',
      "index.html",
    ],
    [
      "esbuild",
      "app.js",
      '<!doctype html><html><head><link rel="icon" href="data:,"></head><body><script type="module" src="app.js"></script></body></html>',
      "dist/index.html",
    ],
  ] as const)("the %s recipe", (tool, entry, html, htmlAt) => {
    it("builds as written, and the page runs in headless Chromium", async () => {
      const app = project(`cs-${tool}-`, [tool]);
      writeFileSync(join(app, entry), only(`js ${tool}`).code);
      mkdirSync(join(app, dirname(htmlAt)), { recursive: true });
      writeFileSync(join(app, htmlAt), html);
      const built = spawnSync("bash", ["-e", "-c", only(`sh ${tool}`).code], {
        cwd: app,
        encoding: "utf8",
        timeout: 120_000,
        env: { ...process.env, npm_config_offline: "true" },
      });
      expect(built.status, `${built.stdout}${built.stderr}`).toBe(0);
      const { server, origin } = await serve(join(app, "dist"));
      const browser = await launch();
      try {
        const page = await browser.newPage();
        const problems = watchProblems(page);
        await page.goto(`${origin}/index.html`);
        await page
          .waitForFunction(() => document.body.textContent !== "", undefined, { timeout: 120_000 })
          .catch((error: Error) => {
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

  it("the Durable Object recipe: the Worker and its workerd config run as written (workerd test)", () => {
    const app = project("cs-do-recipe-", ["esbuild", "workerd"]);
    writeFileSync(join(app, "worker.js"), only("js durable-object").code);
    writeFileSync(join(app, "config.capnp"), only("capnp durable-object").code);
    const result = spawnSync("bash", ["-e", "-c", only("sh durable-object").code], {
      cwd: app,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/\[ PASS \] main/);
    rmSync(app, { recursive: true, force: true });
  }, 150_000);

  it("the wrangler block binds the class the Worker exports, as a SQLite class", () => {
    const toml = only("toml wrangler").code;
    const exported = /export \{ (\w+) \}/.exec(only("js durable-object").code)?.[1];
    expect(exported).toBe("SeenSetDurableObject");
    expect(toml).toMatch(
      new RegExp(`\\[\\[durable_objects\\.bindings\\]\\]\\nname = "SEEN"\\nclass_name = "${exported}"`),
    );
    expect(toml).toMatch(new RegExp(`new_sqlite_classes = \\["${exported}"\\]`));
    expect(only("capnp durable-object").code).toContain(`(name = "SEEN", durableObjectNamespace = "${exported}")`);
  });

  it("the browser seen-set recipe: built as written, it remembers a page's links across a browser restart", async () => {
    const app = project("cs-seen-page-", ["esbuild"]);
    writeFileSync(join(app, "page.js"), only("js seen-page").code);
    const built = spawnSync("bash", ["-e", "-c", only("sh seen-page").code], {
      cwd: app,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, npm_config_offline: "true" },
    });
    expect(built.status, `${built.stdout}${built.stderr}`).toBe(0);
    writeFileSync(
      join(app, "dist", "index.html"),
      '<!doctype html><html><head><link rel="icon" href="data:,"></head><body><a href="https://example.com/a">a</a> <a href="https://example.com/b">b</a> <a href="https://example.com/c">c</a> <output></output><script type="module" src="page.js"></script></body></html>',
    );
    const { server, origin } = await serve(join(app, "dist"));
    const profile = mkdtempSync(join(tmpdir(), "cs-seen-profile-"));
    const visit = async () => {
      const context = await launchPersistent(profile);
      try {
        const page = await context.newPage();
        const problems = watchProblems(page);
        await page.goto(`${origin}/index.html`);
        await page
          .waitForFunction(() => document.querySelector("output")?.textContent !== "", undefined, { timeout: 120_000 })
          .catch((error: Error) => {
            throw new Error(`${error.message}\n${problems.join("\n")}`);
          });
        expect(problems).toEqual([]);
        return await page.evaluate(() => document.querySelector("output")!.textContent);
      } finally {
        await context.close();
      }
    };
    try {
      expect(await visit()).toBe("3 new, 0 seen before (opfs)");
      expect(await visit()).toBe("0 new, 3 seen before (opfs)");
    } finally {
      server.close();
      rmSync(profile, { recursive: true, force: true });
      rmSync(app, { recursive: true, force: true });
    }
  }, 150_000);
});
