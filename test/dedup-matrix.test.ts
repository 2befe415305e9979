// One dedup pipeline (issue 43): every key {whole line, --field, --csv --field, --json-key,
// --canonicalize} under every seen-set {exact, --approx, --memory past its budget, --store,
// --store --memory, --redis} prints what a reference no one here wrote prints: mawk's
// '!s[$0]++' and '!s[$2]++', first occurrences of the value csv-stringify quoted, of JSON.parse's
// value, and of w3lib's canonical form (its own test vectors, and URLs whose canonical form is
// known by construction: w3lib lower-cases the host and sorts the query). Records without the key
// are kept (--missing keep), in their place, and never recorded: a second --store run prints them
// alone.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "csv-stringify/sync";
import { afterAll, describe, expect, it } from "vitest";
import { rng } from "./helpers.js";
import { redisForFile } from "./support/redis-server.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-matrix-"));
const random = rng(43_1);

/** A line and its key (undefined: the record has none), as the generator made it. */
type Line = { readonly text: string; readonly key: string | undefined };

/** w3lib's own canonicalize_url cases without options: input and the canonical form w3lib gives. */
const w3lib = (
  JSON.parse(readFileSync(new URL("./fixtures/vectors/w3lib_canonicalize_url.json", import.meta.url), "utf8"))
    .cases as { input_kind: string; input: string; kwargs: object; expected: string; passes_w3lib_2_4_1: boolean }[]
).filter(
  (c) =>
    c.input_kind === "str" && Object.keys(c.kwargs).length === 0 && c.passes_w3lib_2_4_1 && !/[\s\n]/.test(c.input),
);

/** Keys `n` apart from a space of `distinct`, many repeated. */
const keyOf = (distinct: number) => `k${Math.floor(random() * distinct)}`;

/** The five kinds of key: the arguments that choose it, and lines with their true keys. */
function lines(kind: string, count: number, distinct: number): Line[] {
  const out: Line[] = [];
  for (let i = 0; i < count; i++) {
    const key = keyOf(distinct);
    const missing = kind !== "raw" && kind !== "canonicalize" && i % 997 === 13;
    if (kind === "raw") out.push({ text: key, key });
    else if (kind === "field")
      out.push(missing ? { text: `only-${i}`, key: undefined } : { text: `${i}\t${key}\tz${i % 5}`, key });
    else if (kind === "csv") {
      // A value the CSV writer must quote: a comma, a quote, spaces.
      const value = i % 3 === 0 ? `${key}, "q"` : key;
      out.push(
        missing
          ? { text: `only-${i}`, key: undefined }
          : { text: stringify([[String(i), value, "z"]]).trimEnd(), key: value },
      );
    } else if (kind === "json")
      out.push(
        missing
          ? { text: JSON.stringify({ id: i }), key: undefined }
          : {
              text: JSON.stringify({ id: i, page: { url: i % 2 ? key : Number(key.slice(1)) } }),
              key: JSON.stringify(i % 2 ? key : Number(key.slice(1))),
            },
      );
    else {
      const c = i % 4 === 0 && w3lib.length > 0 ? w3lib[Math.floor(random() * w3lib.length)] : undefined;
      if (c !== undefined) out.push({ text: c.input, key: c.expected });
      else {
        const n = key.slice(1);
        // Host case and query order are spelling: w3lib's form is the lower-case host, the query sorted.
        out.push({
          text: random() < 0.5 ? `http://Example.COM/p/${n}?b=2&a=${n}` : `http://example.com/p/${n}?a=${n}&b=2`,
          key: `http://example.com/p/${n}?a=${n}&b=2`,
        });
      }
    }
  }
  return out;
}

const KINDS: Record<string, string[]> = {
  raw: [],
  field: ["--field", "2", "--missing", "keep"],
  csv: ["--csv", "--field", "2", "--missing", "keep"],
  json: ["--json-key", "page.url", "--missing", "keep"],
  canonicalize: ["--canonicalize"],
};

/** First occurrences by the true key; a line without one is kept where it is. */
function reference(input: readonly Line[]): string {
  const seen = new Set<string>();
  return input
    .filter((l) => l.key === undefined || (!seen.has(l.key) && (seen.add(l.key), true)))
    .map((l) => `${l.text}\n`)
    .join("");
}

const server = redisForFile();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function dedup(args: string[], file: string, env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [CLI, "dedup", "--stats", ...args, file], {
    env: { ...process.env, ...env },
    maxBuffer: 1 << 28,
    timeout: 170_000,
  });
  const stderr = run.stderr.toString();
  return {
    code: run.status,
    stdout: run.stdout.toString(),
    stderr,
    stats: run.status === 0 ? JSON.parse(stderr.trim().split("\n").at(-1)!) : undefined,
  };
}

describe("dedup: every key under every seen-set", () => {
  // Small inputs, and large ones for the runs past a 16 MiB budget (about 150,000 distinct keys fill it).
  const small = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, lines(kind, 6_000, 2_000)]));
  // Raw lines take less of the budget a key (no key regions in the engine's memory): more of them.
  const large = Object.fromEntries(
    Object.keys(KINDS).map((kind) => [
      kind,
      kind === "raw" ? lines(kind, 800_000, 600_000) : lines(kind, 420_000, 300_000),
    ]),
  );
  const file = (kind: string, which: "small" | "large") => {
    const path = join(dir, `${kind}-${which}.txt`);
    writeFileSync(path, (which === "small" ? small : large)[kind].map((l) => `${l.text}\n`).join(""));
    return path;
  };

  it.each(Object.keys(KINDS))(
    "%s: exact, --approx, --redis and --store (a second run prints only the records without a key) equal the reference",
    (kind) => {
      const path = file(kind, "small");
      const want = reference(small[kind]);
      // The references are no echo of the input: most lines were repeats.
      expect(want.split("\n").length).toBeLessThan(0.6 * small[kind].length);
      for (const mode of [
        [],
        ["--approx", "--fp-rate", "1e-9"],
        ["--redis", server().url, "--namespace", `m-${kind}`],
      ]) {
        const run = dedup([...KINDS[kind], ...mode], path);
        expect({ mode, code: run.code, stderr: run.code === 0 ? "" : run.stderr, same: run.stdout === want }).toEqual({
          mode,
          code: 0,
          stderr: "",
          same: true,
        });
      }
      const store = join(dir, `store-${kind}`);
      const first = dedup([...KINDS[kind], "--store", store], path);
      expect({ code: first.code, same: first.stdout === want }).toEqual({ code: 0, same: true });
      expect(dedup([...KINDS[kind], "--store", store], path).stdout).toBe(
        small[kind]
          .filter((l) => l.key === undefined)
          .map((l) => `${l.text}\n`)
          .join(""),
      );
    },
    170_000,
  );

  it.each(Object.keys(KINDS))(
    "%s: --memory 16MiB and --store --memory 16MiB, past the budget (lines spilled), equal the reference in its order",
    (kind) => {
      const path = file(kind, "large");
      const want = reference(large[kind]);
      for (const mode of [
        ["--memory", "16MiB"],
        ["--store", join(dir, `big-store-${kind}`), "--memory", "16MiB"],
      ]) {
        const run = dedup([...KINDS[kind], ...mode], path);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stats.spilledLines, "the budget was passed").toBeGreaterThan(10_000);
        expect(run.stdout === want, `${kind} ${mode.join(" ")} equals the reference`).toBe(true);
      }
    },
    170_000,
  );

  it("the whole-line reference is mawk's '!s[$0]++', the field's '!s[$2]++' (where every record has the field)", () => {
    const raw = file("raw", "small");
    expect(execFileSync("mawk", ["!s[$0]++", raw], { env: { LC_ALL: "C" } }).toString()).toBe(reference(small.raw));
    const tsv = join(dir, "all-fields.txt");
    const withField = small.field.filter((l) => l.key !== undefined);
    writeFileSync(tsv, withField.map((l) => `${l.text}\n`).join(""));
    expect(execFileSync("mawk", ["-F\t", "!s[$2]++", tsv], { env: { LC_ALL: "C" } }).toString()).toBe(
      reference(withField),
    );
  });
});
