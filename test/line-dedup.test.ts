// The byte pipeline (LineDeduplicator, dedupLines) against awk: mawk's `!s[k]++` with k the line
// without a final "\r" is the reference, run on tricky bytes, on random lines with fast-check, at
// every chunk boundary, through table growth and megabyte lines; XXH3-128 against hash-wasm.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { xxhash128 } from "hash-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { DisposedError, InvalidArgumentError, LineDeduplicator, dedupLines, xxh128 } from "../build/js/index.node.js";
import { face, internalOptions } from "./support/line-internals.js";
import { ready, rng } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;

/** First occurrences by awk (mawk in the C locale): bytes through, CRLF and LF lines compare the same. */
function awk(input: Uint8Array): Buffer {
  return execFileSync("mawk", ['{ k = $0; sub(/\r$/, "", k) } !s[k]++'], {
    input,
    env: { LC_ALL: "C" },
    maxBuffer: 1 << 30,
  });
}

/** Runs a LineDeduplicator over `input` cut into pieces of `cut` bytes. */
function pushed(input: Uint8Array, cut: number, options?: ConstructorParameters<typeof LineDeduplicator>[0]): Buffer {
  const dedup = new LineDeduplicator(options);
  const out: Uint8Array[] = [];
  for (let at = 0; at < input.length; at += cut) out.push(dedup.push(input.subarray(at, at + cut)));
  out.push(dedup.end());
  dedup.dispose();
  return Buffer.concat(out);
}

const megabyte = Buffer.alloc(1 << 20, 0x62);
const TRICKY = Buffer.concat([
  Buffer.from("a\r\nb\n\n\na\n\r\n\r\r\n"),
  Buffer.from([0x00, 0x0a, 0x00, 0x0d, 0x0a, 0xff, 0xfe, 0x0a, 0xc3, 0x28, 0x0a, 0xff, 0xfe, 0x0d, 0x0a]),
  megabyte,
  Buffer.from("\n"),
  megabyte,
  Buffer.from("\r\nb\r\nlast\r"),
]);
const MODES = [{}, { hash: "md5" as const }, { scalar: true }, { approx: true, fpRate: 1e-9 }];

describe("dedupLines equals awk's first occurrences", () => {
  it("on CRLF, empty lines, NUL, invalid UTF-8, megabyte lines and a last line without newline", () => {
    const reference = awk(TRICKY);
    for (const options of MODES)
      expect(Buffer.from(dedupLines(TRICKY, options)).equals(reference), JSON.stringify(options)).toBe(true);
    // Small chunks and head room: the megabyte lines take the long-line path.
    expect(pushed(TRICKY, 7919, { chunkBytes: 4096, carryBytes: 64 }).equals(reference)).toBe(true);
  });

  it("at every chunk boundary of a small tricky input, for SIMD and scalar scans", () => {
    const input = Buffer.from("ab\r\n\nab\nabc\r\r\n\0\nx\xff\n\nab\r\nabc\r\nlast", "latin1");
    const reference = awk(input);
    for (let cut = 1; cut <= input.length; cut++) {
      for (const scalar of [false, true]) {
        for (const carryBytes of [1, 3, 64]) {
          expect(
            pushed(input, cut, { chunkBytes: 16, carryBytes, scalar }).equals(reference),
            `cut ${cut} carry ${carryBytes} scalar ${scalar}`,
          ).toBe(true);
        }
      }
    }
  });

  it("on random lines of a hostile alphabet, randomly cut (fast-check)", () => {
    const line = fc
      .uint8Array({ maxLength: 40 })
      .map((bytes) => bytes.map((b) => [0x61, 0x62, 0x0d, 0x00, 0xff, 0x0a][b % 6]));
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 60 }),
        fc.integer({ min: 1, max: 97 }),
        fc.integer({ min: 16, max: 200 }),
        fc.integer({ min: 1, max: 50 }),
        (lines, cut, chunkBytes, carryBytes) => {
          const input = Buffer.concat(lines.map((l) => Buffer.from(l)));
          const reference = awk(input);
          return (
            pushed(input, cut, { chunkBytes, carryBytes }).equals(reference) &&
            pushed(input, cut, { chunkBytes, carryBytes, approx: true, fpRate: 1e-9 }).equals(reference)
          );
        },
      ),
      { numRuns: 120 },
    );
  });

  it("through many table growths and filter stages (400,000 lines, about 140,000 distinct)", () => {
    const next = rng(13);
    const lines: string[] = [];
    for (let i = 0; i < 400_000; i++) {
      const n = Math.floor(next() * 150_000);
      lines.push(`https://host${n % 40}.example/p/${n}`);
    }
    const input = Buffer.from(lines.join("\n") + "\n");
    const reference = awk(input);
    for (const options of [{}, { hash: "md5" as const }]) {
      const dedup = new LineDeduplicator(options);
      const out = Buffer.concat([dedup.push(input), dedup.end()]);
      expect(out.equals(reference), JSON.stringify(options)).toBe(true);
      const { unique, lines: seen } = dedup.stats;
      expect(seen).toBe(400_000);
      expect(unique).toBe(reference.toString().split("\n").length - 1);
      // The table's own bytes stay under 32 per distinct line.
      expect(dedup.describe().tableBytes as number).toBeLessThanOrEqual(32 * unique);
    }
    // An exact phase of 1,000 lines, then filter stages of 8x more keys each (8,000, 64,000,
    // 512,000), stays near-exact at 1e-9.
    const staged = new LineDeduplicator(internalOptions({ approx: true, fpRate: 1e-9, stageItems: 1000 }));
    expect(Buffer.concat([staged.push(input), staged.end()]).equals(reference)).toBe(true);
    expect(staged.describe().stages).toBe(3);
    // Told the input's size, the first stage is planned for every line still to come: one stage.
    const sized = new LineDeduplicator(
      internalOptions({ approx: true, fpRate: 1e-9, stageItems: 1000, inputBytes: input.length, chunkBytes: 65_536 }),
    );
    expect(Buffer.concat([sized.push(input), sized.end()]).equals(reference)).toBe(true);
    expect(sized.describe().stages).toBe(1);
  });
});

describe("the fingerprints of new lines kept for a store (dedup --store)", () => {
  /** XXH3-128 of a key as the table stores it: the low word then the high word, little-endian (hash-wasm gives the big-endian hex of the whole). */
  async function reference(key: Uint8Array): Promise<string> {
    const hex = await xxhash128(key);
    return (
      Buffer.from(hex, "hex").subarray(8).reverse().toString("hex") +
      Buffer.from(hex, "hex").subarray(0, 8).reverse().toString("hex")
    );
  }

  it("are hash-wasm's XXH3-128 of the first occurrences' keys, in order: one memory, several, and long lines", async () => {
    const next = rng(17);
    const lines: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      const n = Math.floor(next() * 30_000);
      lines.push(n % 997 === 5 ? `long-${n}-${"y".repeat(9000)}` : n % 7 === 1 ? `u${n}\r` : `u${n}`);
    }
    const input = Buffer.from(lines.join("\n") + "\n");
    const firsts: Uint8Array[] = [];
    const seen = new Set<string>();
    for (const line of lines) {
      const key = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (seen.has(key)) continue;
      seen.add(key);
      firsts.push(Buffer.from(key));
    }
    const expected = await Promise.all(firsts.map(reference));
    // Small chunks and head room: lines past 4 KiB take the long-line path; 1.5 MiB memories spread
    // the table; taken once after the whole input, the fingerprints (some 30,000) outgrow the
    // engine's region of 16,384 and are moved aside on the way.
    for (const [options, piece] of [
      [{}, 50_000],
      [{ perMemory: 3 << 19, memory: 256 << 20 }, 50_000],
      [{}, input.length],
      [{ perMemory: 3 << 19, memory: 256 << 20 }, input.length],
    ] as const) {
      const dedup = new LineDeduplicator(
        internalOptions({ ...options, fresh: true, chunkBytes: 1 << 16, carryBytes: 4096 }),
      );
      const got: string[] = [];
      const take = () => {
        const fresh = Buffer.from(face(dedup).freshDigests());
        for (let at = 0; at < fresh.length; at += 16) got.push(fresh.subarray(at, at + 16).toString("hex"));
        face(dedup).clearFresh();
      };
      for (let at = 0; at < input.length; at += piece) {
        dedup.push(input.subarray(at, at + piece));
        take();
      }
      dedup.end();
      take();
      expect(got.length, JSON.stringify(options)).toBe(expected.length);
      expect(got).toEqual(expected);
      if ("perMemory" in options) expect(dedup.describe().memories as number).toBeGreaterThan(1);
      dedup.dispose();
    }
  });
});

describe("reading straight into the two WebAssembly slots (the CLI's path)", () => {
  it("equals awk when the next chunk lands in the other slot before the current one is worked", () => {
    const next = rng(21);
    const parts: string[] = [];
    for (let i = 0; i < 60_000; i++)
      parts.push(
        `${"x".repeat(Math.floor(next() * 3) * 40)}/k/${Math.floor(next() * 30_000)}${next() < 0.2 ? "\r" : ""}`,
      );
    const input = Buffer.from(parts.join("\n") + "\nend");
    const reference = awk(input);
    for (const chunkBytes of [4096, 65_536]) {
      const dedup = new LineDeduplicator({ chunkBytes, carryBytes: 100 });
      const out: Buffer[] = [];
      const sink = (bytes: Uint8Array) => out.push(Buffer.from(bytes));
      // A "read": copy the next piece of input into a slot's view, as fs.read would.
      let at = 0;
      const read = (slot: 0 | 1) => {
        const view = face(dedup).slotView(slot);
        const n = Math.min(view.length, input.length - at);
        view.set(input.subarray(at, at + n));
        at += n;
        return n;
      };
      let slot: 0 | 1 = 0;
      let n = read(slot);
      let grown = 0;
      while (n > 0) {
        face(dedup).begin(slot, n);
        const other: 0 | 1 = slot === 0 ? 1 : 0;
        const nextN = read(other);
        while (!face(dedup).step(sink)) {
          face(dedup).grow();
          grown++;
        }
        slot = other;
        n = nextN;
      }
      face(dedup).finish(sink);
      expect(Buffer.concat(out).equals(reference), `chunk ${chunkBytes}`).toBe(true);
      expect(grown).toBeGreaterThan(3);
    }
  });

  it("a step's kept lines stay intact until the next step that hands bytes over has run (a write may hold them uncopied)", () => {
    const next = rng(23);
    const parts: string[] = [];
    for (let i = 0; i < 40_000; i++)
      parts.push(`https://h${Math.floor(next() * 5)}.example/${Math.floor(next() * 20_000)}`);
    const input = Buffer.from(parts.join("\n") + "\n");
    const reference = awk(input);
    const dedup = new LineDeduplicator({ chunkBytes: 8192, carryBytes: 200 });
    const out: Buffer[] = [];
    // The "write" under way: a view held as given, read only when the next view comes (as the
    // CLI's sink awaits the write before it starts the next) or before memory grows.
    let held: Uint8Array | undefined;
    const settle = () => {
      if (held !== undefined) out.push(Buffer.from(held));
      held = undefined;
    };
    const lend = (bytes: Uint8Array) => {
      settle();
      held = bytes;
    };
    let grown = 0;
    for (let at = 0; at < input.length; at += 8192) {
      const n = Math.min(8192, input.length - at);
      face(dedup)
        .slotView(0)
        .set(input.subarray(at, at + n));
      face(dedup).begin(0, n, false);
      while (!face(dedup).step(lend)) {
        settle();
        face(dedup).grow();
        grown++;
      }
    }
    face(dedup).finish(lend);
    settle();
    expect(Buffer.concat(out).equals(reference)).toBe(true);
    expect(grown).toBeGreaterThan(3);
  });

  it("the CLI equals awk on a file given by name, on stdin redirected from it and on a pipe, with nothing on stderr", () => {
    const next = rng(8);
    const lines: string[] = [];
    for (let i = 0; i < 300_000; i++)
      lines.push(
        `https://h${Math.floor(next() * 9)}.example/${Math.floor(next() * 120_000)}${next() < 0.1 ? "\r" : ""}`,
      );
    const dir = mkdtempSync(join(tmpdir(), "crawlsieve-slots-"));
    const file = join(dir, "in.txt");
    writeFileSync(file, lines.join("\n") + "\nlast");
    const reference = awk(readFileSync(file));
    for (const args of [["dedup", file], ["dedup", "--hash", "md5", file], ["dedup"]]) {
      const stdin = args.length === 1 ? openSync(file, "r") : "ignore";
      const out = join(dir, "out.txt");
      const stdout = openSync(out, "w");
      const result = spawnSync(process.execPath, [CLI, ...args], { stdio: [stdin, stdout, "pipe"] });
      expect(result.status, result.stderr.toString()).toBe(0);
      expect(readFileSync(out).equals(reference), args.join(" ")).toBe(true);
      expect(result.stderr.toString(), args.join(" ")).toBe("");
    }
    // A pipe on stdin comes in the stream's chunks, copied in: the same output, and nothing on stderr.
    const piped = spawnSync("sh", ["-c", `cat "${file}" | "${process.execPath}" "${CLI}" dedup`], {
      maxBuffer: 1 << 26,
    });
    expect(piped.status, piped.stderr.toString()).toBe(0);
    expect(piped.stdout.equals(reference)).toBe(true);
    expect(piped.stderr.toString()).toBe("");
  });
});

describe("LineDeduplicator API", () => {
  it("refuses options it does not know and flags that are not booleans, naming them", () => {
    expect(() => new LineDeduplicator({ approx: "yes" } as never)).toThrow(/approx must be true or false, got "yes"/);
    expect(() => new LineDeduplicator({ scalar: 1 } as never)).toThrow(/scalar must be true or false/);
    expect(() => new LineDeduplicator({ aprox: true } as never)).toThrow(
      /aprox .*no such option: LineDeduplicator takes hash, approx/,
    );
    expect(() => new LineDeduplicator({ fprate: 0.01 } as never)).toThrow(InvalidArgumentError);
  });

  it("throws on push() or end() after end(), instead of continuing a finished stream", () => {
    const dedup = new LineDeduplicator();
    expect(new TextDecoder().decode(dedup.push(new TextEncoder().encode("a\nb\n")))).toBe("a\nb\n");
    expect(dedup.end().length).toBe(0);
    expect(() => dedup.push(new TextEncoder().encode("a\n"))).toThrow(/push\(\) after end\(\)/);
    expect(() => dedup.end()).toThrow(/end\(\) after end\(\)/);
    dedup.dispose();
  });

  it("dedupLines names its own parameter, and a thousand small calls stay equal to awk's answer", () => {
    expect(() => dedupLines(undefined as never)).toThrow(/bytes must be a Uint8Array/);
    const input = new TextEncoder().encode("a\nb\na\nc");
    for (let i = 0; i < 1000; i++) expect(new TextDecoder().decode(dedupLines(input))).toBe("a\nb\nc\n");
  });

  it("reused instances carry nothing over: 600 calls on varied inputs, modes and sizes equal awk's answer for each, with instances alive side by side", () => {
    // dedupLines and LineDeduplicator reuse idle WebAssembly instances; a seen line left behind by
    // the call before would drop a line here. One big input among the small ones (a memory too
    // big to pool), and a LineDeduplicator held open across calls.
    const random = rng(20261126);
    const held = new LineDeduplicator();
    const heldInput: Uint8Array[] = [];
    const inputs = Array.from({ length: 600 }, (_, i) => {
      const lines = Array.from(
        { length: 1 + Math.floor(random() * 40) },
        () =>
          `l${Math.floor(random() * 30)}${"x".repeat(Math.floor(random() * 3) * 70_000 * (random() < 0.01 ? 1 : 0))}`,
      );
      if (i === 300) for (let j = 0; j < 300_000; j++) lines.push(`big${j}`);
      return new TextEncoder().encode(lines.join(random() < 0.5 ? "\n" : "\r\n") + (random() < 0.5 ? "\n" : ""));
    });
    const kept: string[] = [];
    inputs.forEach((input, i) => {
      const options = MODES[i % MODES.length];
      const got = Buffer.from(dedupLines(input, options));
      if (!got.equals(awk(input).subarray(0))) kept.push(`call ${i} ${JSON.stringify(options)}`);
      if (i % 100 === 0) {
        const chunk = new TextEncoder().encode(`held${i}\nheld0\n`);
        heldInput.push(chunk);
        held.push(chunk);
      }
    });
    expect(kept).toEqual([]);
    const all = Buffer.concat(heldInput);
    const again = new LineDeduplicator();
    expect(Buffer.from(again.push(all)).equals(awk(all))).toBe(true);
    // The held one saw every line before: nothing new, and its counts are its own.
    expect(held.push(all).length).toBe(0);
    expect(held.stats.lines).toBe(2 * heldInput.length * 2);
    held.dispose();
    again.dispose();
  }, 120_000);

  it("returns copies, keeps state across pushes, and checks its arguments", () => {
    const dedup = new LineDeduplicator();
    const first = dedup.push(new TextEncoder().encode("x\ny\nx"));
    expect(new TextDecoder().decode(first)).toBe("x\ny\n");
    expect(new TextDecoder().decode(dedup.push(new TextEncoder().encode("\ny\nz")))).toBe("");
    expect(new TextDecoder().decode(dedup.end())).toBe("z\n");
    expect(new TextDecoder().decode(first)).toBe("x\ny\n");
    expect(dedup.stats).toEqual({ lines: 5, unique: 3, duplicates: 2 });
    expect(() => dedup.push("x\n" as unknown as Uint8Array)).toThrow(InvalidArgumentError);
    dedup.dispose();
    expect(() => dedup.push(new Uint8Array(1))).toThrow(DisposedError);
    expect(() => new LineDeduplicator({ hash: "sha1" as "md5" })).toThrow(/hash must be/);
    expect(() => new LineDeduplicator({ approx: true, fpRate: 2 })).toThrow(InvalidArgumentError);
  });

  it("takes Node Buffers (as a stream gives them) without the deprecated Buffer() constructor's warning", () => {
    // Viewing WebAssembly memory through a Buffer's own constructor printed DEP0005 on stderr. A
    // process of its own: Node prints that warning once a process, and not under node_modules.
    const script = `
      import { initSync, LineDeduplicator } from ${JSON.stringify(new URL("../build/js/index.node.js", import.meta.url).href)};
      initSync();
      const dedup = new LineDeduplicator({ chunkBytes: 64 });
      const kept = Buffer.concat([dedup.push(Buffer.from("a\\nb\\na\\n".repeat(40))), dedup.end()]);
      process.stdout.write(kept);`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe("a\nb\n");
    expect(run.stderr).toBe("");
  });
});

describe("xxh128 (XXH3-128, seed 0)", () => {
  it("equals hash-wasm's xxhash128 at every length to 1,100 and on long inputs", async () => {
    const next = rng(5);
    for (const len of [...Array.from({ length: 1101 }, (_, i) => i), 4096, 65_537, 1_000_003]) {
      const data = new Uint8Array(len);
      for (let i = 0; i < len; i++) data[i] = Math.floor(next() * 256);
      expect(xxh128(data), `length ${len}`).toBe(await xxhash128(data));
    }
  });
});
