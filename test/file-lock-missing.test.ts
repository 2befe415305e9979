// Without the optional package fs-native-extensions (the disk seen-set's file locks), `dedup
// --store` and openSeenSet({ backend: "disk" }) stop with one typed line saying what to install,
// not Node's message and its require stack (issue 48, L). The package stays installed: a child
// process is started with a resolution override (NODE_OPTIONS --require) that cannot find it.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const ENTRY = new URL("../build/js/index.node.js", import.meta.url).href;
const dir = mkdtempSync(join(tmpdir(), "cs-no-locks-"));
const blocker = join(dir, "no-fs-native-extensions.cjs");
// Resolves that one package in a folder that does not exist, so Node throws its own MODULE_NOT_FOUND.
writeFileSync(
  blocker,
  `const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  if (request === "fs-native-extensions") return resolve.call(this, request, parent, isMain, { paths: [${JSON.stringify(join(dir, "nowhere"))}] });
  return resolve.call(this, request, parent, isMain, options);
};
`,
);

function run(args: string[], input = "") {
  const child = spawnSync(process.execPath, args, {
    input,
    env: { ...process.env, NODE_OPTIONS: `--require ${blocker}` },
    timeout: 180_000,
  });
  return { code: child.status, stdout: child.stdout.toString(), stderr: child.stderr.toString() };
}

const ONE_LINE =
  /^crawlsieve: the disk seen-set \(--store, backend "disk"\) locks its file with the optional package fs-native-extensions, which is not installed: install it with npm install fs-native-extensions\n$/;

describe("the disk seen-set without fs-native-extensions", () => {
  it("dedup --store: one line saying what to install, exit 2, nothing printed", () => {
    for (const extra of [[], ["--json-key", "k"]]) {
      const result = run([CLI, "dedup", "--store", join(dir, `store${extra.length}`), ...extra], '{"k":1}\n{"k":2}\n');
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(ONE_LINE);
      expect(result.stderr).not.toMatch(/Require stack/);
      expect(result.code).toBe(2);
    }
  });

  it("openSeenSet({ backend: 'disk' }): a CrawlsieveError ERR_NO_FILE_LOCKS", () => {
    const script = `import { openSeenSet } from ${JSON.stringify(ENTRY)};
try { await openSeenSet({ backend: "disk", path: ${JSON.stringify(join(dir, "api"))} }); console.log("opened"); }
catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`;
    const result = run(["--input-type=module", "-e", script]);
    const error = JSON.parse(result.stdout);
    expect(error).toMatchObject({ name: "CrawlsieveError", code: "ERR_NO_FILE_LOCKS" });
    expect(error.message).toContain("install it with npm install fs-native-extensions");
    expect(error.message).not.toContain("\n");
  });
});
