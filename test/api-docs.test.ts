// The API reference: TypeDoc over the public entry points (typedoc.json) with warnings as errors,
// so an export without a doc comment, a type the API names but does not export, or a broken link
// fails here. The output (build/api) is not committed.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;

describe("npm run docs", () => {
  it("builds the reference of every entry point with no warning", () => {
    rmSync(join(root, "build/api"), { recursive: true, force: true });
    const result = spawnSync(process.execPath, [join(root, "node_modules/typedoc/bin/typedoc")], {
      cwd: root,
      encoding: "utf8",
      timeout: 240_000,
    });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/warning/i);
    // Modules are named by import path (@module NAME in each entry), not by file.
    const pages = [
      "crawlsieve",
      "crawlsieve_redis",
      "crawlsieve_crawlee",
      "crawlsieve_crawler",
      "crawlsieve_durable-object",
      "crawlsieve_html",
    ];
    for (const page of ["index.html", ...pages.map((m) => `modules/${m}.html`)])
      expect(existsSync(join(root, "build/api", page)), page).toBe(true);
    expect(
      readdirSync(join(root, "build/api/modules")).filter((f) =>
        /^(index\.node|edge|redis|crawlee|crawler|html_)/.test(f),
      ),
    ).toEqual([]);
  }, 300_000);
});
