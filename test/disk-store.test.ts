// The disk seen-set (`dedup --store DIR`, openSeenSet({ backend: "disk" })): one append-only file
// of checksummed batches, one flush a commit. Resume after kill -9 without a line printed twice;
// concurrent processes print each line once between them; every commit is flushed before its
// lines are printed (strace); a torn last batch is cut off and said, a damaged store is a typed
// error naming the file, never a crash or a silent re-print (32 randomly damaged copies); an LMDB
// store of the earlier version is imported. References: awk's first occurrences, JS Sets.
import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openDiskSeenSet, openLmdbStore, openSeenSet, StoreDeduplicator } from "../build/js/index.node.js";
import { awkFirst, randomKeys, ready, rng } from "./helpers.js";

beforeAll(ready);

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const temp = () => mkdtempSync(join(tmpdir(), "crawlsieve-disk-"));
/** More than the lines of one commit: a 1 MiB chunk of input (about 35,000 of these 30-byte lines). */
const GROUP = 1 << 16;

function dedup(args: string[], input?: string) {
  const run = spawnSync(process.execPath, [CLI, "dedup", ...args], { input, maxBuffer: 1 << 28, timeout: 180_000 });
  return { code: run.status, signal: run.signal, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** Lines `from` to `to`, one a line. */
const seq = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join("");

interface PastFill {
  /** The store the run made, 1.5 M keys; a test works on a copy of its own. */
  readonly store: string;
  /** Its --tmp folder. */
  readonly tmp: string;
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}
let pastFill: PastFill | undefined;
/**
 * The first run of the two "past --memory" tests below, made once (the 1.5 M-line run was the same
 * command over the same input in both): `dedup --store S --memory 16MiB --tmp T --stats` over
 * lines 1 to 1,500,000, into a fresh store.
 */
function filledPastMemory(): PastFill {
  if (pastFill === undefined) {
    const dir = temp();
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const store = join(dir, "seen");
    const run = spawnSync(
      process.execPath,
      [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", tmp, "--stats"],
      { input: seq(1, 1_500_000), maxBuffer: 1 << 26, timeout: 180_000 },
    );
    pastFill = { store, tmp, status: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
  }
  return pastFill;
}

/** What `dedup args` printed before it was killed with SIGKILL, once more than `bytes` of output had arrived. */
function printedUntilKilled(args: string[], bytes: number, env: Record<string, string> = {}): Promise<string> {
  return new Promise<string>((resolve) => {
    const child = spawn(process.execPath, [CLI, "dedup", ...args], { env: { ...process.env, ...env } });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.length > bytes) child.kill("SIGKILL");
    });
    // "close": everything the child wrote before it died is read, not only what had arrived.
    child.on("close", () => resolve(out));
  });
}

describe("dedup --store", () => {
  it("prints awk's first occurrences, and a second run over more input only the lines no run printed", () => {
    const dir = temp();
    const a = join(dir, "a.txt");
    const b = join(dir, "b.txt");
    writeFileSync(a, randomKeys(1, 200_000, 90_000).join("\n") + "\n");
    writeFileSync(b, randomKeys(2, 200_000, 120_000).join("\n") + "\n");
    const store = join(dir, "seen");
    expect(dedup(["--store", store, a])).toEqual({ code: 0, signal: null, stdout: awkFirst(a), stderr: "" });
    const both = join(dir, "ab.txt");
    writeFileSync(both, readFileSync(a, "utf8") + readFileSync(b, "utf8"));
    const printedA = new Set(awkFirst(a).split("\n"));
    const expected = awkFirst(both)
      .split("\n")
      .filter((line) => line !== "" && !printedA.has(line));
    const second = dedup(["--store", store, "--stats", b]);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(expected.map((line) => line + "\n").join(""));
    const stats = JSON.parse(second.stderr);
    expect(stats.stored).toBe(printedA.size - 1 + expected.length);
    // 16 bytes a key on disk, and a 16-byte record head and tail a commit, a 16-byte file header.
    const bytes = statSync(join(store, "fingerprints.log")).size;
    expect(bytes / stats.stored).toBeGreaterThanOrEqual(16);
    expect(bytes / stats.stored).toBeLessThan(16.2);
    // The store's folder holds its file and its lock, nothing a run left behind.
    expect(readdirSync(store).sort()).toEqual(["fingerprints.log", "lock"]);
  });

  it("resumes after kill -9 losing nothing: what the killed run recorded and did not confirm printed is printed again, the count said", async () => {
    const dir = temp();
    const input = join(dir, "input.txt");
    const lines = randomKeys(9, 400_000, 150_000);
    writeFileSync(input, lines.join("\n") + "\n");
    const store = join(dir, "seen");
    // First run: killed with SIGKILL once some output has arrived.
    const printed1 = await printedUntilKilled(["--store", store, input], 200_000);
    const first = printed1
      .slice(0, printed1.lastIndexOf("\n") + 1)
      .split("\n")
      .filter(Boolean);
    expect(first.length).toBeGreaterThan(1000);
    const second = dedup(["--store", store, input]);
    expect(second.code, second.stderr).toBe(0);
    const secondLines = second.stdout.split("\n").filter(Boolean);
    const all = new Set(lines);
    const printed = new Set([...first, ...secondLines]);
    for (const line of printed) expect(all.has(line), line).toBe(true);
    // Nothing lost: every line printed by one run or the other.
    expect(printed.size).toBe(all.size);
    // Printed twice only what the killed run recorded and had not confirmed: at most two chunks of 1 MiB of input, told on stderr.
    const twice = first.length + secondLines.length - printed.size;
    expect(twice).toBeLessThanOrEqual(2 * Math.ceil((1 << 20) / 20));
    const told = /recorded ([\d,]+) lines as seen .* count as new again/.exec(second.stderr);
    if (twice > 0) expect(Number(told![1].replace(/,/g, ""))).toBeGreaterThanOrEqual(twice);
    expect(readdirSync(store).sort()).toEqual(["fingerprints.log", "lock"]);
  });

  it("a store larger than --memory: kill -9 while the kept lines are printed, and a rerun prints each line no run printed, none twice", async () => {
    const dir = temp();
    const store = join(dir, "seen");
    const old = Array.from({ length: 800_000 }, (_, i) => `https://old.example/${i}`);
    expect(dedup(["--store", store], old.join("\n") + "\n").code).toBe(0);
    // New lines (each twice) among old ones: every new line waits for the end of the run.
    const fresh = Array.from({ length: 200_000 }, (_, i) => `https://new.example/${i}`);
    const input = join(dir, "input.txt");
    writeFileSync(input, [...fresh, ...old.slice(0, 50_000), ...fresh].join("\n") + "\n");
    // Windows of 8,192 spill indexes (2^20 by default): each is made durable just before it is printed.
    const window = 8192;
    const printed1 = await printedUntilKilled(["--store", store, "--memory", "16MiB", "--tmp", dir, input], 100_000, {
      CRAWLSIEVE_TEST_SPILL_WINDOW: String(window),
    });
    const first = printed1
      .slice(0, printed1.lastIndexOf("\n") + 1)
      .split("\n")
      .filter(Boolean);
    expect(first.length).toBeGreaterThan(1000);
    // What the killed run left under --tmp (kill -9 gives it no chance to remove it).
    const spillFolders = () => readdirSync(dir).filter((name) => name.startsWith("crawlsieve-spill-"));
    const leftByKill = spillFolders();
    const second = dedup(["--store", store, "--memory", "16MiB", "--tmp", dir, "--stats", input]);
    expect(second.code, second.stderr).toBe(0);
    const stats = JSON.parse(second.stderr.trimEnd().split("\n").at(-1)!);
    expect(stats.deferred).toBe(true);
    const secondLines = second.stdout.split("\n").filter(Boolean);
    // Nothing old printed, and what the killed run printed is a prefix of the new lines, in input order.
    expect(first).toEqual(fresh.slice(0, first.length));
    const freshSet = new Set(fresh);
    for (const line of secondLines) expect(freshSet.has(line), line).toBe(true);
    // Nothing lost: the killed run recorded its kept lines a window at a time, just before printing
    // it; those it recorded and had not confirmed printed (at most the window being printed and the
    // next) are printed again by the rerun, and said.
    expect(new Set([...first, ...secondLines]).size).toBe(fresh.length);
    expect(first.length + secondLines.length).toBeLessThanOrEqual(fresh.length + 2 * window);
    expect(stats.unprintedByKilledRuns).toBeGreaterThanOrEqual(first.length + secondLines.length - fresh.length);
    expect(secondLines.length).toBeGreaterThan(0);
    // Every new line is in the store now.
    expect(dedup(["--store", store, "--memory", "16MiB", "--tmp", dir, input]).stdout).toBe("");
    // The runs that ended removed theirs, and the first of them removed the killed run's.
    expect(leftByKill.length).toBeGreaterThan(0);
    expect(spillFolders()).toEqual([]);
  }, 180_000);

  it.each([
    ["one memory", {}, [], 0],
    // Tables over several WebAssembly memories: other writers' keys go through the split path.
    ["tables spread over several memories", { CRAWLSIEVE_TEST_PER_MEMORY: String(8 << 20) }, [], 0],
    // Past the budget: each run spills, and resolves its spilled lines against the whole store at its end.
    ["past --memory", {}, ["--memory", "16MiB"], 0],
    // A store too large for the budget: neither run reads it in; each decides all its new lines at its end, under the lock, against what the other appended.
    ["a store larger than --memory", {}, ["--memory", "16MiB"], 800_000],
  ] as [string, Record<string, string>, string[], number][])(
    "shares one store between concurrent processes (%s): no line printed twice, none lost",
    async (_, env, flags, prefill) => {
      const dir = temp();
      const store = join(dir, "seen");
      if (prefill > 0) {
        const old = Array.from({ length: prefill }, (_, i) => `https://old.example/${i}`).join("\n") + "\n";
        expect(dedup(["--store", store], old).code).toBe(0);
      }
      // Two inputs over one key space, each in its own order: about half of each one's lines are the other's too.
      const a = randomKeys(21, 300_000, 200_000);
      const b = randomKeys(22, 300_000, 200_000);
      writeFileSync(join(dir, "a.txt"), a.join("\n") + "\n");
      writeFileSync(join(dir, "b.txt"), b.join("\n") + "\n");
      // Through pipes fed in pieces, so each run commits many small groups and the two interleave.
      const run = (lines: string[]) =>
        new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
          const child = spawn(process.execPath, [CLI, "dedup", "--store", store, "--stats", ...flags], {
            env: { ...process.env, ...env },
          });
          let out = "";
          let err = "";
          child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
          child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
          child.on("close", (code) => resolve({ code, out, err }));
          let at = 0;
          const feed = () => {
            if (at >= lines.length) return void child.stdin.end();
            child.stdin.write(lines.slice(at, at + 5000).join("\n") + "\n");
            at += 5000;
            setTimeout(feed, 2);
          };
          feed();
        });
      const [first, second] = await Promise.all([run(a), run(b)]);
      expect(first.code, first.err).toBe(0);
      expect(second.code, second.err).toBe(0);
      const printedA = first.out.split("\n").filter(Boolean);
      const printedB = second.out.split("\n").filter(Boolean);
      const union = new Set([...a, ...b]);
      const inA = new Set(printedA);
      expect(printedB.filter((line) => inA.has(line))).toEqual([]);
      expect(inA.size + new Set(printedB).size).toBe(union.size);
      expect(printedA.length + printedB.length).toBe(union.size);
      // The runs did interleave: each took keys the other wrote meanwhile (deferred runs read them with the whole store at their end).
      const fromOthers = [JSON.parse(first.err).fromOtherWriters, JSON.parse(second.err).fromOtherWriters];
      if (prefill === 0) expect(Math.min(...fromOthers)).toBeGreaterThan(0);
      else expect([JSON.parse(first.err).deferred, JSON.parse(second.err).deferred]).toEqual([true, true]);
      if (env.CRAWLSIEVE_TEST_PER_MEMORY !== undefined) expect(JSON.parse(first.err).memories).toBeGreaterThan(1);
      if (flags.length > 0)
        expect(Math.min(JSON.parse(first.err).spilledLines, JSON.parse(second.err).spilledLines)).toBeGreaterThan(
          10_000,
        );
      // A third run alone over both inputs prints nothing: every line was printed before.
      const third = dedup(["--store", store, "--stats", join(dir, "a.txt"), join(dir, "b.txt")]);
      expect(third.code, third.stderr).toBe(0);
      expect(third.stdout).toBe("");
      expect(JSON.parse(third.stderr).stored).toBe(union.size + prefill);
    },
  );

  it("flushes each commit to disk before printing its lines; durable: false flushes nothing (strace)", () => {
    const dir = temp();
    const input = join(dir, "input.txt");
    writeFileSync(input, randomKeys(5, 300_000, 300_000).join("\n") + "\n");
    /** At each write to stdout (its start), the flushes finished before it, counted from the start. */
    const flushedBeforeEachPrint = (args: string[]) => {
      const trace = join(dir, `trace-${args.length}.txt`);
      // Output to a file: a pipe would split one printed chunk into several writes.
      const out = openSync(join(dir, "out.txt"), "w");
      // Each flush is made to take 20 ms more: a print that did not wait for its flush would start before it ends.
      const result = spawnSync(
        "strace",
        [
          "-f",
          "-e",
          "trace=fdatasync,fsync,msync,write,writev",
          "-e",
          "inject=fdatasync:delay_exit=20000",
          "-o",
          trace,
          process.execPath,
          ...args,
        ],
        { stdio: ["ignore", out, "pipe"] },
      );
      closeSync(out);
      expect(result.status, result.stderr.toString()).toBe(0);
      const counts: number[] = [];
      let flushed = 0;
      // With -f a call on one thread may be cut by another's: "fdatasync(5 <unfinished ...>", later "<... fdatasync resumed>) = 0".
      for (const line of readFileSync(trace, "utf8").split("\n")) {
        if (
          /(fdatasync|fsync|msync)\(\d+.*\) += 0( \(DELAYED\))?$|<\.\.\. (fdatasync|fsync|msync) resumed>\) += 0( \(DELAYED\))?$/.test(
            line,
          )
        )
          flushed++;
        else if (/ writev?\(1, /.test(line)) counts.push(flushed);
      }
      return counts;
    };
    const printed = flushedBeforeEachPrint([CLI, "dedup", "--store", join(dir, "durable"), input]);
    // A chunk of input (1 MiB) a commit and one write to stdout: after the two flushes that create
    // the store (its file and directory), the ith write waits for i flushes at least.
    expect(printed.length).toBeGreaterThanOrEqual(8);
    expect(printed.filter((flushes, i) => flushes - 2 < i + 1)).toEqual([]);
    const script = `import { openSeenSet, initSync } from ${JSON.stringify(new URL("../build/js/index.node.js", import.meta.url).href)};
      initSync();
      const seen = await openSeenSet({ backend: "disk", path: ${JSON.stringify(join(dir, "fast"))}, durable: false });
      process.stdout.write("opened\\n");
      for (let i = 0; i < 5; i++) { await seen.addMany(["k" + i]); process.stdout.write("k" + i + "\\n"); }
      await seen.close();`;
    // Creating the file is flushed (its header and directory entry); the batches after are not.
    const fast = flushedBeforeEachPrint(["--input-type=module", "-e", script]);
    expect(fast).toHaveLength(6);
    expect(fast[0]).toBeGreaterThan(0);
    expect(new Set(fast).size).toBe(1);
  });

  it("a store write that fails while an earlier chunk waits for its flush: that chunk is still printed whole, nothing else, and a rerun prints the rest", () => {
    const dir = temp();
    const store = join(dir, "seen");
    const input = join(dir, "input.txt");
    // 10,000 new lines of 100 bytes fill the first 1 MiB chunk (its record is the store's second
    // write, after the header); the second chunk holds repeats only; the third, with 5 new lines,
    // is the third write, which fails with ENOSPC while the first chunk's flush is held up for
    // 1.5 s and its lines wait to be printed (a small store: its memory would be zeroed when let go).
    const first = Array.from({ length: 10_000 }, (_, i) => `L${String(i).padStart(98, "0")}`);
    const late = Array.from({ length: 5 }, (_, i) => `N${String(i).padStart(98, "0")}`);
    writeFileSync(input, [...first, ...first, ...late, ...first].join("\n") + "\n");
    const outPath = join(dir, "out.txt");
    const out = openSync(outPath, "w");
    const run = spawnSync(
      "strace",
      [
        "-f",
        "-o",
        "/dev/null",
        "-P",
        join(store, "fingerprints.log"),
        "-e",
        "inject=fdatasync:delay_exit=1500000",
        "-e",
        "inject=pwrite64:error=ENOSPC:when=2",
        process.execPath,
        CLI,
        "dedup",
        "--store",
        store,
        input,
      ],
      { stdio: ["ignore", out, "pipe"], timeout: 180_000 },
    );
    closeSync(out);
    expect(run.status).toBe(2);
    expect(run.stderr.toString()).toMatch(
      new RegExp(`^crawlsieve: the disk of the store ${join(store, "fingerprints.log")} is full`),
    );
    expect(readFileSync(outPath, "latin1")).toBe(first.map((line) => line + "\n").join(""));
    // What was printed stays seen, what was not is new: together, every line once.
    expect(dedup(["--store", store, input])).toEqual({
      code: 0,
      signal: null,
      stdout: late.map((line) => line + "\n").join(""),
      stderr: "",
    });
  }, 180_000);

  it("a torn last batch is cut off and said on stderr; its keys are new again, the earlier ones stay seen", () => {
    const dir = temp();
    const store = join(dir, "seen");
    expect(dedup(["--store", store], "a\nb\n").stdout).toBe("a\nb\n");
    expect(dedup(["--store", store], "c\nd\ne\n").stdout).toBe("c\nd\ne\n");
    const log = join(store, "fingerprints.log");
    // The second batch's record (8 + 3 x 16 + 8 bytes) loses its last 5 bytes, as a write cut short.
    truncateSync(log, statSync(log).size - 5);
    const after = dedup(["--store", store], "a\nb\nc\nd\ne\nf\n");
    expect(after.code).toBe(0);
    expect(after.stdout).toBe("c\nd\ne\nf\n");
    expect(after.stderr).toMatch(
      new RegExp(`^crawlsieve: the disk seen-set ${log} ended in a partly written batch \\(59 bytes .*it was cut off`),
    );
    // Cut once: the next run finds a whole file.
    expect(dedup(["--store", store], "a\nf\ng\n")).toEqual({ code: 0, signal: null, stdout: "g\n", stderr: "" });
  });

  it("a damaged store is a typed error naming the file, or a cut-off tail said on stderr: never a crash or a silent re-print (32 damaged copies)", () => {
    const dir = temp();
    const input = join(dir, "input.txt");
    const keys = Array.from({ length: 100_000 }, (_, i) => `https://damage.example/${i}`);
    writeFileSync(input, keys.join("\n") + "\n");
    const store = join(dir, "seen");
    // Fed in groups, so the file holds many records.
    for (let at = 0; at < keys.length; at += 20_000)
      expect(dedup(["--store", store], keys.slice(at, at + 20_000).join("\n") + "\n").code).toBe(0);
    const log = join(store, "fingerprints.log");
    const size = statSync(log).size;
    const next = rng(30_11);
    const outcomes = { error: 0, recovered: 0 };
    for (let copy = 0; copy < 32; copy++) {
      const damaged = join(dir, `copy-${copy}`);
      cpSync(store, damaged, { recursive: true });
      const bytes = readFileSync(join(damaged, "fingerprints.log"));
      // A few random bytes changed at random places (the header's first 16 bytes included).
      const changes = 1 + Math.floor(next() * 4);
      for (let c = 0; c < changes; c++) bytes[Math.floor(next() * size)] ^= 1 + Math.floor(next() * 255);
      // Every fourth copy is also cut short at a random length.
      writeFileSync(
        join(damaged, "fingerprints.log"),
        copy % 4 === 3 ? bytes.subarray(0, Math.floor(next() * size)) : bytes,
      );
      const run = dedup(["--store", damaged, input]);
      expect(run.signal, `copy ${copy}`).toBeNull();
      if (run.code === 2) {
        expect(run.stderr, `copy ${copy}`).toMatch(
          new RegExp(`^crawlsieve: .*${join(damaged, "fingerprints.log")}.*\\n$`),
        );
        expect(run.stdout).toBe("");
        outcomes.error++;
      } else {
        expect(run.code, `copy ${copy}: ${run.stderr}`).toBe(0);
        if (run.stdout !== "") {
          // Lines printed again only with the cut said.
          expect(run.stderr, `copy ${copy}`).toMatch(/ended in a partly written batch .* it was cut off/);
          outcomes.recovered++;
        } else {
          expect(run.stderr).toBe("");
        }
      }
    }
    expect(outcomes.error).toBeGreaterThan(0);
    expect(outcomes.recovered).toBeGreaterThan(0);
  });

  it("imports an LMDB store of the earlier version once: what it held stays seen", () => {
    const dir = temp();
    const store = join(dir, "old");
    mkdirSync(store);
    // The earlier --store: MD5 fingerprints of the lines in LMDB, through StoreDeduplicator.
    const old = new StoreDeduplicator(openLmdbStore(store), { items: 1000 });
    old.checkMany(["a", "b", "c"]);
    old.close();
    expect(dedup(["--store", store], "a\nd\nb\ne\nc\n")).toEqual({
      code: 0,
      signal: null,
      stdout: "d\ne\n",
      stderr: "",
    });
    expect(dedup(["--store", store], "d\nf\na\n").stdout).toBe("f\n");
    const header = readFileSync(join(store, "fingerprints.log")).subarray(0, 8);
    expect(header.readUInt16LE(6)).toBe(2); // the MD5 scheme, kept
  });

  it("creates missing parent directories; names a store path that cannot be used, and a store file that is a directory", async () => {
    const base = temp();
    const nested = join(base, "new", "sub");
    expect(dedup(["--store", nested], "a\nb\na\n")).toEqual({ code: 0, signal: null, stdout: "a\nb\n", stderr: "" });
    for (const backend of ["disk", "lmdb"] as const) {
      const seen = await openSeenSet({ backend, path: join(base, backend, "b", "c") });
      expect(seen.backend).toBe("disk");
      expect(Array.from(await seen.addMany(["x", "x"]))).toEqual([1, 0]);
      await seen.close();
    }
    const result = dedup(["--store", "/proc/crawlsieve-nope"], "a\n");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/store directory "\/proc\/crawlsieve-nope" cannot be used/);
    const odd = temp();
    mkdirSync(join(odd, "fingerprints.log"));
    const named = dedup(["--store", odd], "a\n");
    expect(named.code).toBe(2);
    expect(named.stderr).toBe(
      `crawlsieve: ${join(odd, "fingerprints.log")} is not a file (a directory or a device where the store keeps its fingerprints); move it away or use another --store directory\n`,
    );
    const notOurs = temp();
    writeFileSync(join(notOurs, "fingerprints.log"), "hello, world: not a store\n");
    expect(dedup(["--store", notOurs], "a\n").stderr).toBe(
      `crawlsieve: ${join(notOurs, "fingerprints.log")} is not a crawlsieve seen-set file (bad magic); move it away or use another --store directory\n`,
    );
  });

  it("shares its keys with openSeenSet({ backend: 'disk' }) both ways: CRLF, empty and long lines (64 KiB carried, 17 MiB streamed) fingerprint alike", async () => {
    const dir = temp();
    const store = join(dir, "seen");
    const carried = "c".repeat(100_000);
    const streamed = "s".repeat(17 << 20);
    const api = await openSeenSet({ backend: "disk", path: store });
    expect(Array.from(await api.addMany(["from-api", "", carried, streamed]))).toEqual([1, 1, 1, 1]);
    await api.close();
    const input = join(dir, "input.txt");
    writeFileSync(
      input,
      ["from-api\r", "", carried, streamed + "\r", "cli-1", "cli-2\r", "s".repeat(17 << 20) + "x", "from-api"].join(
        "\n",
      ) + "\n",
    );
    // Output to a file: 17 MiB through a pipe into this process would cost more than the run.
    const outPath = join(dir, "out.txt");
    const out = openSync(outPath, "w");
    const run = spawnSync(process.execPath, [CLI, "dedup", "--store", store, input], {
      stdio: ["ignore", out, "pipe"],
      timeout: 180_000,
    });
    closeSync(out);
    expect(run.status, run.stderr.toString()).toBe(0);
    expect(readFileSync(outPath, "latin1")).toBe(`cli-1\ncli-2\r\n${"s".repeat(17 << 20)}x\n`);
    const again = await openSeenSet({ backend: "disk", path: store });
    expect(Array.from(await again.hasMany(["cli-1", "cli-2", "s".repeat(17 << 20) + "x", "cli-3"]))).toEqual([
      1, 1, 1, 0,
    ]);
    await again.close();
  }, 180_000);

  it("takes other processes' removals and clear() while it runs: a forgotten line is new again", async () => {
    const store = join(temp(), "seen");
    const child = spawn(process.execPath, [CLI, "dedup", "--store", store]);
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const printed = async (text: string) => {
      // Up to 10 s: a loaded machine may take a while to start the process and answer.
      for (let i = 0; i < 400 && !out.endsWith(text); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(out).toBe(text);
    };
    child.stdin.write("a\nb\nc\n");
    await printed("a\nb\nc\n");
    const api = await openSeenSet({ backend: "disk", path: store });
    expect(Array.from(await api.removeMany(["b"]))).toEqual([1]);
    child.stdin.write("a\nb\nc\n");
    await printed("a\nb\nc\nb\n");
    await api.clear();
    child.stdin.write("c\nd\nc\n");
    await printed("a\nb\nc\nb\nc\nd\n");
    child.stdin.end();
    expect(await new Promise((resolve) => child.on("close", resolve))).toBe(0);
    expect(await api.size()).toBe(2);
    await api.close();
  }, 180_000);

  it("past --memory: lines wait under --tmp and are decided against the store read once at the end; output is still exactly the new lines, in order", async () => {
    const dir = temp();
    const store = join(dir, "seen");
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    // 1.5 M keys are some 34 MB in a table: a 16 MiB budget holds a tenth of them.
    const first = filledPastMemory();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout === seq(1, 1_500_000)).toBe(true);
    expect(JSON.parse(first.stderr)).toMatchObject({ frozen: true, stored: 1_500_000 });
    expect(JSON.parse(first.stderr).spilledLines).toBeGreaterThan(1_000_000);
    // The first run's store was small until its end: it was read into the table, and its few keys set aside whole at the end.
    expect(JSON.parse(first.stderr).deferred).toBeUndefined();
    expect(readdirSync(first.tmp)).toEqual([]);
    cpSync(first.store, store, { recursive: true });
    // The target of the issue, scaled down: a window over the end of the store prints exactly what
    // is past it; lines repeated within the run, and old lines, are dropped.
    const window = seq(1_450_001, 1_600_000) + seq(1, 100) + seq(1_450_001, 1_460_000) + seq(1_550_001, 1_560_000);
    const second = spawnSync(
      process.execPath,
      [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", tmp, "--stats"],
      { input: window, maxBuffer: 1 << 26, timeout: 180_000 },
    );
    expect(second.status, second.stderr.toString()).toBe(0);
    expect(second.stdout.toString() === seq(1_500_001, 1_600_000)).toBe(true);
    const stats = JSON.parse(second.stderr.toString());
    // 1.5 M keys (some 34 MB in a table) do not fit 16 MiB: the store is not read in, every new line waits.
    expect(stats).toMatchObject({
      deferred: true,
      storeKeysRead: 1_500_000,
      spilledLines: 150_100,
      spilledKept: 100_000,
      stored: 1_600_000,
    });
    // The store's file (24 MB) is read once, at the end (besides it, the input and the spill's 7 MB of records, read twice).
    expect(stats.ioReadBytes).toBeGreaterThan(16 * 1_500_000);
    expect(stats.ioReadBytes).toBeLessThan(2 * 16 * 1_500_000);
    // Only keys that may equal a waiting line are set aside: the 50,100 that do, and under 1% of the rest.
    expect(stats.storeKeysSetAside).toBeGreaterThanOrEqual(50_100);
    expect(stats.storeKeysSetAside).toBeLessThan(50_100 + 0.01 * 1_450_000);
    expect(readdirSync(tmp)).toEqual([]);
    // Keys the store forgot are new again past the budget too.
    const api = await openSeenSet({ backend: "disk", path: store });
    expect(Array.from(await api.removeMany(["42", "1500001"]))).toEqual([1, 1]);
    await api.close();
    const third = spawnSync(
      process.execPath,
      [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", tmp, "--stats"],
      { input: "7\n42\n1500001\n1500001\n", timeout: 180_000 },
    );
    expect(third.status, third.stderr.toString()).toBe(0);
    expect(third.stdout.toString()).toBe("42\n1500001\n");
    expect(JSON.parse(third.stderr.toString()).spilledLines).toBeGreaterThan(0);
    // Three lines waited: their filter has a memory of its own (the run's tables are too small to hold it), and few of the 1.6 M keys pass it.
    expect(JSON.parse(third.stderr.toString()).storeKeysSetAside).toBeLessThan(1000);
    // With room in memory again, every key is there.
    expect(dedup(["--store", store], seq(1, 1_600_001))).toEqual({
      code: 0,
      signal: null,
      stdout: "1600001\n",
      stderr: "",
    });
  }, 180_000);

  it("past --memory with a store that fits it: the store is read in, the lines past the table wait, and only store keys that may equal one are set aside", () => {
    const dir = temp();
    const store = join(dir, "seen");
    // 400,000 keys (9.6 MB at 24 bytes a key) fit 16 MiB: read into the table, which then has little room left.
    expect(dedup(["--store", store], seq(1, 400_000)).code).toBe(0);
    // New lines interleaved with old ones, and the new ones again.
    const input =
      Array.from({ length: 300_000 }, (_, i) => `${400_001 + i}\n${1 + i}\n`).join("") + seq(400_001, 700_000);
    const run = spawnSync(
      process.execPath,
      [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", dir, "--stats"],
      { input, maxBuffer: 1 << 26, timeout: 180_000 },
    );
    expect(run.status, run.stderr.toString()).toBe(0);
    expect(run.stdout.toString() === seq(400_001, 700_000)).toBe(true);
    const stats = JSON.parse(run.stderr.toString());
    expect(stats.deferred).toBeUndefined();
    expect(stats.frozen).toBe(true);
    expect(stats.spilledLines).toBeGreaterThan(100_000);
    // The whole store is read at the end; no waiting line is an old one (those were in the table), so under 1% of its keys are set aside.
    expect(stats.storeKeysRead).toBeGreaterThanOrEqual(400_000);
    expect(stats.storeKeysSetAside).toBeLessThan(0.01 * stats.storeKeysRead);
    expect(dedup(["--store", store], seq(1, 700_001))).toEqual({
      code: 0,
      signal: null,
      stdout: "700001\n",
      stderr: "",
    });
  }, 180_000);

  it("past --memory with a compacted store: a few lines read only the records of its sorted part they may lie in, a window reads them all, and both print exactly the new lines", async () => {
    const dir = temp();
    const store = join(dir, "seen");
    const run = (input: string, env: Record<string, string> = {}) => {
      const done = spawnSync(
        process.execPath,
        [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", dir, "--stats"],
        { input, env: { ...process.env, ...env }, maxBuffer: 1 << 26, timeout: 180_000 },
      );
      expect(done.status, done.stderr.toString()).toBe(0);
      return { out: done.stdout.toString(), stats: JSON.parse(done.stderr.toString()) };
    };
    // The store a first run over lines 1 to 1,500,000 made (filledPastMemory, shared with the test above), copied.
    const first = filledPastMemory();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout === seq(1, 1_500_000)).toBe(true);
    cpSync(first.store, store, { recursive: true });
    // The next run compacts what it found (1.5 M keys, 24 MB) at its end, here through partition files, as a store past its budget is.
    const second = run(seq(1, 10), { CRAWLSIEVE_TEST_COMPACT_FROM: "1", CRAWLSIEVE_TEST_COMPACT_PASSES: "0" });
    expect(second.out).toBe("");
    expect(second.stats.sortedRecords).toBeUndefined();
    const log = join(store, "fingerprints.log");
    expect(readFileSync(log).readUInt32LE(12)).toBe(1_500_000);
    expect(readdirSync(store).sort()).toEqual(["fingerprints.log", "lock"]);
    // A key forgotten after the compaction is a record after the sorted part: new again.
    const api = await openSeenSet({ backend: "disk", path: store });
    expect(Array.from(await api.removeMany(["42"]))).toEqual([1]);
    await api.close();
    const third = run("7\n42\n1500001\n1500001\n");
    expect(third.out).toBe("42\n1500001\n");
    // 1.5 M keys in 23 records of 65,536: three distinct lines read at most two records each, not the 24 MB file.
    expect(third.stats).toMatchObject({ deferred: true, sortedRecords: 23, stored: 1_500_001 });
    expect(third.stats.sortedRecordsRead).toBeGreaterThan(0);
    expect(third.stats.sortedRecordsRead).toBeLessThanOrEqual(6);
    expect(third.stats.storeKeysRead).toBeLessThanOrEqual(6 * 65_536 + 2);
    // A window over the store's end needs every record: read once each, in order.
    const window = run(seq(1_450_001, 1_600_000) + seq(1, 100) + seq(1_550_001, 1_560_000));
    expect(window.out === seq(1_500_002, 1_600_000)).toBe(true);
    expect(window.stats).toMatchObject({ sortedRecordsRead: 23, sortedRecords: 23 });
    // A damaged record of the sorted part is an error naming the file, never a line printed again.
    const bytes = readFileSync(log);
    bytes[16 + 8 + 16 * 1000] ^= 1;
    writeFileSync(log, bytes);
    const damaged = spawnSync(process.execPath, [CLI, "dedup", "--store", store, "--memory", "16MiB", "--tmp", dir], {
      input: seq(1, 2000),
      timeout: 180_000,
    });
    expect(damaged.status).toBe(2);
    expect(damaged.stdout.toString()).toBe("");
    expect(damaged.stderr.toString()).toContain(log);
    expect(damaged.stderr.toString()).not.toMatch(/\n\s+at /);
  }, 240_000);

  it("refuses options that do nothing with --store", () => {
    for (const flags of [["--approx"], ["--fp-rate", "0.01"], ["--hash", "md5"]]) {
      const result = dedup([...flags, "--store", temp()], "a\n");
      expect(result.code, flags.join(" ")).toBe(2);
      expect(result.stderr, flags.join(" ")).toMatch(new RegExp(`^crawlsieve: .*${flags[0]}.*\\n$`));
    }
  });
});

describe("openSeenSet({ backend: 'disk' })", () => {
  it("reads a log larger than one read piece (16 MiB) whole: records cut at a piece's end, a torn tail in the last piece", async () => {
    const path = join(temp(), "set");
    const seen = await openSeenSet({ backend: "disk", path });
    const key = (i: number) => `https://pieces.example/${i}`;
    // 1.2 M keys in batches of 100,003: about 19 MB of records, each batch several records of odd sizes.
    for (let at = 0; at < 1_200_000; at += 100_003)
      await seen.addMany(Array.from({ length: Math.min(100_003, 1_200_000 - at) }, (_, i) => key(at + i)));
    await seen.close();
    const log = join(path, "fingerprints.log");
    expect(statSync(log).size).toBeGreaterThan(16 << 20);
    const again = await openSeenSet({ backend: "disk", path });
    expect(await again.size()).toBe(1_200_000);
    const probe = Array.from({ length: 1000 }, (_, i) => key(i * 1199));
    expect(Array.from(await again.hasMany([...probe, "absent"])).reduce((a, b) => a + b, 0)).toBe(1000);
    await again.close();
    truncateSync(log, statSync(log).size - 3);
    const told: string[] = [];
    const cut = await openDiskSeenSet(path, { onRecover: (message) => told.push(message) });
    // The cut is said, and where its bytes were kept.
    expect(told).toHaveLength(2);
    expect(told[0]).toMatch(/ended in a partly written batch/);
    expect(told[1]).toMatch(/were kept in .*fingerprints\.log\.cut-1$/);
    // The last batch's last record lost: its keys are new again, the others stay seen.
    const size = await cut.size();
    expect(size).toBeLessThan(1_200_000);
    expect(size).toBeGreaterThan(1_200_000 - 65_537);
    expect(Array.from(await cut.addMany([key(0), key(1_199_999)]))).toEqual([0, 1]);
    await cut.close();
  }, 180_000);

  it("forgets removed keys across processes and reopenings, and clear() empties it for every process", async () => {
    const path = join(temp(), "set");
    const one = await openSeenSet({ backend: "disk", path });
    const two = await openSeenSet({ backend: "disk", path });
    expect(Array.from(await one.addMany(["a", "b", "c"]))).toEqual([1, 1, 1]);
    expect(Array.from(await two.addMany(["b", "d"]))).toEqual([0, 1]);
    expect(Array.from(await two.removeMany(["a", "z"]))).toEqual([1, 0]);
    expect(Array.from(await one.hasMany(["a", "b", "c", "d"]))).toEqual([0, 1, 1, 1]);
    await one.close();
    const three = await openSeenSet({ backend: "disk", path });
    expect(await three.size()).toBe(3);
    expect(Array.from(await three.addMany(["a"]))).toEqual([1]);
    await three.clear();
    expect(await two.size()).toBe(0);
    expect(Array.from(await two.addMany(["b"]))).toEqual([1]);
    await Promise.all([two.close(), three.close()]);
    await expect(two.addMany(["x"])).rejects.toMatchObject({ code: "ERR_DISPOSED" });
  });
});
