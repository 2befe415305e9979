// The API reference: TypeDoc over the public entry points (typedoc.json) with warnings as errors,
// so an export without a doc comment, a type the API names but does not export, or a broken link
// fails here. The output (build/api) is not committed.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;

describe("npm run docs", () => {
  it("builds the reference of every entry point with no warning", () => {
    const result = spawnSync(process.execPath, [join(root, "node_modules/typedoc/bin/typedoc")], { cwd: root, encoding: "utf8", timeout: 240_000 });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/warning/i);
    for (const page of ["index.html", "modules/index.node.html", "modules/redis.html", "modules/crawlee.html", "modules/crawler.html"]) expect(existsSync(join(root, "build/api", page)), page).toBe(true);
  }, 300_000);
});
