// Initialisation: idempotent, explicit, and a clear error before it.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const ENTRY = new URL("../build/js/index.node.js", import.meta.url).href;

function node(script: string) {
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script]);
  return { code: result.status, out: result.stdout.toString(), err: result.stderr.toString() };
}

describe("init", () => {
  it("throws NotInitializedError before init()", () => {
    const { out } = node(`
      import { BloomFilter, md5Hex, NotInitializedError } from ${JSON.stringify(ENTRY)};
      for (const attempt of [() => new BloomFilter({ items: 10, fpRate: 0.1 }), () => md5Hex("a")]) {
        try { attempt(); console.log("no error"); } catch (e) { console.log(e instanceof NotInitializedError, e.code, e.message); }
      }`);
    // Both attempts, each line on its own: a constructor and a hash function alike.
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(2);
    for (const line of lines)
      expect(line).toMatch(/^true ERR_NOT_INITIALIZED crawlsieve is not initialised: await init\(\) first/);
  });

  it("is idempotent and shared by concurrent callers; initSync works without await", () => {
    const { out, err } = node(`
      import { init, initSync, isInitialized, md5Hex } from ${JSON.stringify(ENTRY)};
      const a = init(), b = init();
      await Promise.all([a, b, init()]);
      initSync();
      console.log(isInitialized(), md5Hex("abc"));`);
    expect(err).toBe("");
    expect(out.trim()).toBe("true 900150983cd24fb0d6963f7d28e17f72");
    const sync = node(
      `import { initSync, md5Hex } from ${JSON.stringify(ENTRY)}; initSync(); console.log(md5Hex(""));`,
    );
    expect(sync.out.trim()).toBe("d41d8cd98f00b204e9800998ecf8427e");
  });
});
