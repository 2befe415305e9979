// The boundary checks itself: the TypeScript kernel interfaces (src/wasm/kernels.ts, read with
// the TypeScript compiler) against the modules' own exports (their .wat text, which asc writes
// beside every build): the same names, the same kinds, the same number of parameters, and i64
// exactly where TypeScript says bigint. Every kernel must be called somewhere in src/ (no dead
// exports), and the release and debug builds must export the same things.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;

/** One export as both sides describe it: "memory", "global i32", or "(i32 i64) -> i64". */
type Shape = string;

/** The members of an interface of src/wasm/kernels.ts, as shapes in wasm terms. */
function declared(name: string): Map<string, Shape> {
  const file = ts.createSourceFile(
    "kernels.ts",
    readFileSync(join(root, "src/wasm/kernels.ts"), "utf8"),
    ts.ScriptTarget.Latest,
  );
  const decl = file.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name,
  );
  if (decl === undefined) throw new Error(`src/wasm/kernels.ts has no interface ${name}`);
  const wasmType = (type: ts.TypeNode | undefined): string => {
    const text = type?.getText(file);
    if (text === "bigint") return "i64";
    if (text === "number") return "num";
    if (text === "void") return "";
    throw new Error(`${name}: a kernel type must be number, bigint or void, not ${text}`);
  };
  const out = new Map<string, Shape>();
  for (const member of decl.members) {
    const key = member.name!.getText(file);
    if (ts.isMethodSignature(member)) {
      out.set(key, `(${member.parameters.map((p) => wasmType(p.type)).join(" ")}) -> ${wasmType(member.type)}`);
    } else if (ts.isPropertySignature(member)) {
      const text = member.type?.getText(file);
      out.set(
        key,
        text === "WebAssembly.Memory" ? "memory" : text === "WebAssembly.Global" ? "global i32" : `property ${text}`,
      );
    }
  }
  return out;
}

/** The exports of a module as its .wat text shows them, in the same terms (f64 and i32 both "num"). */
function exported(wat: string): Map<string, Shape> {
  const text = readFileSync(join(root, "build", wat), "utf8");
  const num = (t: string) => (t === "i64" ? "i64" : "num");
  const out = new Map<string, Shape>();
  for (const [, name, kind, internal] of text.matchAll(/^ \(export "([^"]+)" \((func|global|memory) (\S+)\)\)$/gm)) {
    if (kind === "memory") out.set(name, "memory");
    else if (kind === "global") {
      const global = new RegExp(`^ \\(global ${internal.replace(/[$/]/g, "\\$&")} (\\S+) \\(`, "m").exec(text);
      out.set(name, `global ${global?.[1]}`);
    } else {
      const head = new RegExp(
        `^ \\(func ${internal.replace(/[$/]/g, "\\$&")}((?: \\(type \\$\\d+\\))?(?: \\(param \\S+ \\S+\\))*(?: \\(result \\S+\\))?)$`,
        "m",
      ).exec(text);
      if (head === null) throw new Error(`${wat}: no signature for ${internal}`);
      const params = [...head[1].matchAll(/\(param \S+ (\S+)\)/g)].map((m) => num(m[1]));
      const result = /\(result (\S+)\)/.exec(head[1]);
      out.set(name, `(${params.join(" ")}) -> ${result === null ? "" : num(result[1])}`);
    }
  }
  return out;
}

/** Every .ts file under src/ but the interface itself, joined. */
function sourcesText(dir = "src"): string {
  return readdirSync(join(root, dir))
    .map((name) => {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) return sourcesText(path);
      return name.endsWith(".ts") && path !== "src/wasm/kernels.ts" ? readFileSync(join(root, path), "utf8") : "";
    })
    .join("\n");
}

const sorted = (map: Map<string, Shape>) => Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)));

describe("kernel interface (src/wasm/kernels.ts) against the modules", () => {
  it("Kernels equals the exports of build/crawlsieve.wasm: names, kinds, parameters, i64", () => {
    const module = exported("crawlsieve.wat");
    expect(module.size).toBeGreaterThan(50);
    expect(sorted(declared("Kernels"))).toEqual(sorted(module));
  });

  it("SharedKernels equals the exports of build/crawlsieve-shared.wasm", () => {
    expect(sorted(declared("SharedKernels"))).toEqual(sorted(exported("crawlsieve-shared.wat")));
  });

  it("the debug build exports exactly what the release build does", () => {
    expect(sorted(exported("crawlsieve.debug.wat"))).toEqual(sorted(exported("crawlsieve.wat")));
    const names = (file: string) =>
      WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(join(root, "build", file))))
        .map((e) => `${e.name}:${e.kind}`)
        .sort();
    expect(names("crawlsieve.debug.wasm")).toEqual(names("crawlsieve.wasm"));
  });

  it("every kernel and every layout constant is used by src/ (no dead exports)", () => {
    const text = sourcesText();
    const unused = [...declared("Kernels").keys(), ...declared("SharedKernels").keys()].filter(
      (name) => name !== "memory" && !new RegExp(`\\.${name}\\b`).test(text),
    );
    expect(unused).toEqual([]);
  });

  it("the check sees a drift: a missing, an extra, a retyped and a re-counted export", () => {
    const module = exported("crawlsieve.wat");
    const drifted = new Map(module);
    drifted.delete("md5");
    drifted.set("orBytes", "(num num num) -> ");
    drifted.set("xxh64", "(num num num) -> i64");
    drifted.set("hamming", "(num num) -> num");
    expect(sorted(drifted)).not.toEqual(sorted(declared("Kernels")));
    const differing = [...new Set([...drifted.keys(), ...module.keys()])]
      .filter((k) => drifted.get(k) !== declared("Kernels").get(k))
      .sort();
    expect(differing).toEqual(["hamming", "md5", "orBytes", "xxh64"]);
  });
});
