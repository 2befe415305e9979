// The README's Architecture table, held against the code: every import of src/ and assembly/
// (parsed by the TypeScript compiler's own pre-processor, so multi-line, type-only, re-export
// and dynamic imports all count) must go to a floor its row allows; every file must be placed;
// no circle of files, and none of folders. The checker is also run on forged import lists, so it
// is shown to fail where it should.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;

interface Row {
  readonly floor: number;
  readonly paths: readonly string[];
  readonly allowed: ReadonlySet<number>;
}

/** The rows of the table under "## Architecture" in docs/architecture.md. */
function layerTable(readme: string): Row[] {
  const section = readme.split(/^## Architecture$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error("docs/architecture.md has no ## Architecture section");
  const rows: Row[] = [];
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    if (cells.length < 5 || !/^\d+$/.test(cells[1])) continue;
    const paths = [...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const range = /^(\d+)(?:-(\d+))?$/.exec(cells[3]);
    if (range === null) throw new Error(`docs/architecture.md Architecture: "${cells[3]}" is not a floor range`);
    const allowed = new Set<number>();
    for (let f = Number(range[1]); f <= Number(range[2] ?? range[1]); f++) allowed.add(f);
    rows.push({ floor: Number(cells[1]), paths, allowed });
  }
  return rows;
}

/** Every .ts file under `dir` (relative to the repository root). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** The files of this tree that `file` imports (repository-relative); bare package names are left out. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const found: string[] = [];
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const target = normalize(join(dirname(file), fileName));
    if (target.endsWith(".wasm")) {
      found.push(target);
      continue;
    }
    const candidates = [target.replace(/\.js$/, ".ts"), target, `${target}.ts`, join(target, "index.ts")];
    const hit = candidates.find((c) => existsSync(join(root, c)) && statSync(join(root, c)).isFile());
    if (hit === undefined) throw new Error(`${file}: import "${fileName}" names no file of this tree`);
    found.push(hit);
  }
  return found;
}

/** The unit a file belongs to for the folder rules: its top folder under src/, or itself. */
function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "assembly" || file.endsWith(".wasm")) return "assembly";
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

interface Placed {
  readonly row: Row;
  readonly unit: string;
}

/** The row that places `file`: the longest path of the table that covers it. */
function place(rows: readonly Row[], file: string): Placed | undefined {
  let best: { row: Row; length: number } | undefined;
  const target = file.endsWith(".wasm") ? "assembly/" : file;
  for (const row of rows) {
    for (const path of row.paths) {
      const covers = path.endsWith("/") ? target.startsWith(path) : target === path;
      if (covers && (best === undefined || path.length > best.length)) best = { row, length: path.length };
    }
  }
  return best === undefined ? undefined : { row: best.row, unit: unitOf(file) };
}

/** What is wrong with an import graph against the table, one line per fault (empty when all is well). */
function faults(rows: readonly Row[], graph: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    const from = place(rows, file);
    if (from === undefined) {
      out.push(`${file} is on no floor of the README's Architecture table`);
      continue;
    }
    for (const target of targets) {
      const to = place(rows, target);
      if (to === undefined) {
        out.push(`${file} imports ${target}, which is on no floor`);
        continue;
      }
      if (to.unit === from.unit) continue;
      if (!from.row.allowed.has(to.row.floor)) {
        out.push(
          `${file} (floor ${from.row.floor}) imports ${target} (floor ${to.row.floor}); its row allows floors ${[...from.row.allowed].join(",")}`,
        );
      }
    }
  }
  for (const cycle of circles(graph)) out.push(`circle of files: ${cycle.join(" -> ")}`);
  const folders = new Map<string, string[]>();
  for (const [file, targets] of graph) {
    const unit = unitOf(file);
    const list = folders.get(unit) ?? [];
    for (const target of targets)
      if (unitOf(target) !== unit && !list.includes(unitOf(target))) list.push(unitOf(target));
    folders.set(unit, list);
  }
  for (const cycle of circles(folders)) out.push(`circle of folders: ${cycle.join(" -> ")}`);
  return out;
}

/** The strongly connected groups of more than one node (Tarjan), each as a loop of names. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.reverse());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const rows = layerTable(readFileSync(join(root, "docs/architecture.md"), "utf8"));
const graph = new Map([...sources("src"), ...sources("assembly")].map((file) => [file, importsOf(file)] as const));

describe("layers (docs/architecture.md)", () => {
  it("the table places floors 1 to 8 and names only paths that exist or are reserved for integrations", () => {
    expect(new Set(rows.map((r) => r.floor))).toEqual(new Set([1, 2, 3, 4, 5, 6, 7, 8]));
    const missing = rows.flatMap((r) => r.paths).filter((p) => !existsSync(join(root, p)));
    // Integrations being written may not exist yet; every other path must.
    expect(missing.filter((p) => !/^src\/(crawlee|crawler)\/$/.test(p))).toEqual([]);
  });

  it("every import of src/ and assembly/ stays on its floor or goes down, with no circle", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(faults(rows, graph)).toEqual([]);
  });

  it("the checker catches a climbing import, an integration importing another, an unplaced file and a circle", () => {
    const forged = new Map<string, readonly string[]>([
      ["src/wasm/arena.ts", ["src/bloom/bloom-filter.ts"]],
      ["src/bloom/bloom-filter.ts", ["src/wasm/arena.ts"]],
      ["src/crawlee/manager.ts", ["src/crawler/sieve.ts", "src/index.common.ts"]],
      ["src/crawler/sieve.ts", []],
      ["src/cli/main.ts", ["src/index.node.ts"]],
      ["src/threads/worker.ts", ["src/index.node.ts"]],
      ["src/near-dup/idf.ts", ["src/near-dup/simhash.ts"]],
      ["src/near-dup/simhash.ts", ["src/near-dup/idf.ts"]],
      ["src/elsewhere/thing.ts", []],
      ["assembly/bloom.ts", ["src/errors.ts"]],
    ]);
    expect(faults(rows, forged)).toEqual([
      "src/wasm/arena.ts (floor 3) imports src/bloom/bloom-filter.ts (floor 5); its row allows floors 1,2,3",
      "src/crawlee/manager.ts (floor 8) imports src/crawler/sieve.ts (floor 8); its row allows floors 1,2,3,4,5,6,7",
      "src/cli/main.ts (floor 8) imports src/index.node.ts (floor 7); its row allows floors 1,2,3,4,5,6",
      "src/threads/worker.ts (floor 5) imports src/index.node.ts (floor 7); its row allows floors 1,2,3,4,5",
      "src/elsewhere/thing.ts is on no floor of the README's Architecture table",
      "assembly/bloom.ts (floor 1) imports src/errors.ts (floor 2); its row allows floors 1",
      "circle of files: src/wasm/arena.ts -> src/bloom/bloom-filter.ts",
      "circle of files: src/near-dup/idf.ts -> src/near-dup/simhash.ts",
      "circle of folders: src/wasm -> src/bloom",
    ]);
  });

  it("reads multi-line, type-only, re-export and dynamic imports", () => {
    expect(graph.get("src/cli/commands/near-dups.ts")).toContain("src/html/html-to-text.ts");
    expect(graph.get("src/index.workerd.ts")).toContain("crawlsieve.wasm");
    expect(graph.get("src/index.node.ts")).toContain("src/index.common.ts");
    expect(graph.get("src/index.common.ts")).toContain("src/errors.ts");
    expect(graph.get("src/wasm/arena.ts")).toContain("src/wasm/kernels.ts");
  });
});
