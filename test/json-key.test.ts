// dedup --json-key reads the key's own JSON text (issue 48, C1): integers past 2^53, 1e400 against
// null and strings that differ only in invalid UTF-8 bytes stay apart (JSON.parse merged them);
// everything JSON.parse reads as one value stays one key; the scanner accepts exactly what
// JSON.parse accepts (fast-check's JSON against node's parser); a value nested 5,000 deep is a
// typed one-line error that --missing keep or drop passes.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonKeyReader } from "../build/js/lines/keys/json-key.js";
import { rng } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cs-json-key-"));

function cli(args: string[], input: string | Buffer) {
  const run = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 1 << 28, timeout: 120_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr.toString() };
}

const encoder = new TextEncoder();

/** The key the reader gives for a line, as text, or its reason for none. */
function keyOf(line: string | Uint8Array, path = ["k"]): string {
  const bytes = typeof line === "string" ? encoder.encode(line) : line;
  const read = new JsonKeyReader(path).read(bytes, 0, bytes.length);
  return typeof read === "string" ? `! ${read}` : Buffer.from(read.key).toString("latin1");
}

describe("the key of a JSON line", () => {
  it("is JSON.stringify(JSON.parse(line).k) wherever a double holds the numbers (fast-check values, written with and without spaces)", () => {
    // Numbers as JSON.stringify writes them, so the reference's re-serialization changes nothing a double can hold.
    const value = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)));
    fc.assert(
      fc.property(value, fc.boolean(), (v, spaced) => {
        const line = JSON.stringify({ a: 1, k: v, z: [v] }, null, spaced ? 1 : undefined);
        expect(keyOf(line)).toBe(Buffer.from(JSON.stringify(v)).toString("latin1"));
      }),
      { numRuns: 2000 },
    );
  });

  it("accepts exactly the lines JSON.parse accepts (fast-check JSON with one byte changed, dropped or doubled)", () => {
    const edits = fc.tuple(
      fc.json({ maxDepth: 3 }),
      fc.nat(),
      fc.constantFrom("drop", "double", "swap"),
      fc.constantFrom(...'{}[]",:\\ 0-e.tnu\u0000'),
    );
    fc.assert(
      fc.property(edits, ([json, at, edit, byte]) => {
        const i = json.length === 0 ? 0 : at % json.length;
        const text =
          edit === "drop"
            ? json.slice(0, i) + json.slice(i + 1)
            : edit === "double"
              ? json.slice(0, i) + json[i] + json.slice(i)
              : json.slice(0, i) + byte + json.slice(i + 1);
        const line = `{"k":${text}}`;
        let parsed = true;
        try {
          JSON.parse(line);
        } catch {
          parsed = false;
        }
        expect(keyOf(line).startsWith("! not JSON"), line).toBe(!parsed);
      }),
      { numRuns: 5000 },
    );
  });

  it("keeps apart what a double or a decoder would merge, and merges what JSON says is one value", () => {
    expect(keyOf('{"k":1234567890123456789}')).not.toBe(keyOf('{"k":1234567890123456788}'));
    expect(keyOf('{"k":1e400}')).not.toBe(keyOf('{"k":null}'));
    expect(keyOf(Uint8Array.from([...encoder.encode('{"k":"a'), 0xff, ...encoder.encode('"}')]))).not.toBe(
      keyOf(Uint8Array.from([...encoder.encode('{"k":"a'), 0xfe, ...encoder.encode('"}')])),
    );
    // Numbers are their text: 1.0 and 1 are two keys (stated in docs/cli.md).
    expect(keyOf('{"k":1.0}')).not.toBe(keyOf('{"k":1}'));
    expect(keyOf('{"k":"\\u00e9\\/"}')).toBe(keyOf('{"k":"é/"}'));
    expect(keyOf('{"k":"\\ud83d\\ude00"}')).toBe(keyOf('{"k":"😀"}'));
    expect(keyOf('{"k":"\\uD800"}')).toBe(keyOf('{"k":"\\ud800"}'));
    expect(keyOf('{"k":"\\ud800"}')).not.toBe(keyOf('{"k":"\ufffd"}'));
    expect(keyOf('{ "k" : { "b" : [ 1 , 2 ] } }')).toBe(keyOf('{"k":{"b":[1,2]}}'));
    // The last member of a name, as JSON.parse takes it.
    expect(keyOf('{"k":1,"k":2}')).toBe("2");
    expect(keyOf('{"p":{"q":1},"p":2}', ["p", "q"])).toBe('! no key "p.q"');
    expect(keyOf('{"p":{"q":1}}', ["p", "q"])).toBe("1");
  });
});

describe("dedup --json-key", () => {
  it("the issue's repro: two ids past 2^53 that one double holds are two lines", () => {
    const input = '{"id":1234567890123456789}\n{"id":1234567890123456788}\n';
    expect(cli(["dedup", "--json-key", "id"], input)).toMatchObject({
      code: 0,
      stdout: Buffer.from(input),
      stderr: "",
    });
  });

  it("merges 0 of 10,000 distinct ids (large integers, exponents, invalid UTF-8, nested values), in memory and with --store", () => {
    const random = rng(48_1);
    const ids = new Map<string, Buffer>();
    const big = () => BigInt(Math.floor(random() * 2 ** 53)) * 4096n + BigInt(Math.floor(random() * 4096));
    const kinds: (() => Buffer)[] = [
      () => Buffer.from(String(big())),
      () => Buffer.from(`-${big()}`),
      () => Buffer.from(`${Math.floor(random() * 9) + 1}e${Math.floor(random() * 700)}`),
      () => Buffer.from(`${Math.floor(random() * 1000)}.${Math.floor(random() * 1000)}E-${Math.floor(random() * 400)}`),
      () =>
        Buffer.concat([
          Buffer.from('"x'),
          Buffer.from([0x80 + Math.floor(random() * 0x7f), 0xff]),
          Buffer.from(String(Math.floor(random() * 200))),
          Buffer.from('"'),
        ]),
      () => Buffer.from(`{"a":[${big()},{"b":"${big()}"}]}`),
    ];
    while (ids.size < 10_000) {
      const id = kinds[Math.floor(random() * kinds.length)]();
      ids.set(id.toString("latin1"), id);
    }
    const order = [...ids.values(), ...ids.values()].sort(() => random() - 0.5);
    const lines = order.map((id, n) => Buffer.concat([Buffer.from('{"id":'), id, Buffer.from(`,"n":${n}}\n`)]));
    const seen = new Set<string>();
    const expected = Buffer.concat(
      lines.filter((_, n) => !seen.has(order[n].toString("latin1")) && (seen.add(order[n].toString("latin1")), true)),
    );
    const input = Buffer.concat(lines);
    const memory = cli(["dedup", "--json-key", "id"], input);
    expect(memory.stderr).toBe("");
    expect(memory.stdout.toString("latin1").split("\n").length - 1).toBe(10_000);
    expect(memory.stdout.equals(expected)).toBe(true);
    const store = cli(["dedup", "--json-key", "id", "--store", join(dir, "store")], input);
    expect(store.stdout.equals(expected)).toBe(true);
  });

  it("a value nested 5,000 deep: one typed line naming the line, exit 2; kept with --missing keep, left out with drop", () => {
    const deep = `{"id":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const input = `{"id":1}\n${deep}\n{"id":2}\n`;
    const failed = cli(["dedup", "--json-key", "id"], input);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toBe(
      "crawlsieve: stdin:2: a value nested deeper than 1,000 levels; --missing keep or --missing drop passes such lines\n",
    );
    expect(cli(["dedup", "--json-key", "id", "--missing", "keep"], input).stdout.toString()).toBe(input);
    expect(cli(["dedup", "--json-key", "id", "--missing", "drop"], input).stdout.toString()).toBe(
      '{"id":1}\n{"id":2}\n',
    );
  });
});
