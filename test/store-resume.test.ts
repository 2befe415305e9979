// Resume that loses nothing (issue 48, C3): `dedup --store` killed with SIGKILL at 20 random
// moments in a row (some once output has begun, at a random byte of it; some at a random moment
// from the start; every flush held up as on a slow disk), each run resuming the one before, reading a regular file or a slow pipe, with
// and without a store past --memory. The union of every run's output is awk's set of first
// occurrences (nothing lost); a line is printed by two runs only where a killed run had recorded
// it and not confirmed it printed, at most what two chunks (or two windows) hold, and the resumed
// run says how many it found; nothing a run prints is not in the input.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";
import { awkFirst, randomKeys, rng } from "./helpers.js";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const KILLS = 12;
const STRACE = [
  "strace",
  "-f",
  "--seccomp-bpf",
  "-o",
  "/dev/null",
  "-e",
  "trace=fdatasync",
  "-e",
  "inject=fdatasync:delay_exit=40000",
];

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

/**
 * `dedup args`, fed `input` from the file (`pipe` false) or through a pipe written 64 KiB at a
 * time with a pause between (`pipe` true); killed with SIGKILL once `killAfterBytes` of output
 * arrived, or `killAfterMs` after it started, when either is set.
 */
function run(
  args: string[],
  input: { file: string; text: string; pipe: boolean },
  kill: { bytes?: number; ms?: number },
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve) => {
    // Under strace, each fdatasync held up 40 ms: the moments between a chunk's record and its print
    // are as long as on a slow disk. The run is a process group of its own, killed whole (a tracee
    // whose strace alone dies runs on).
    const command = [...STRACE, process.execPath, CLI, "dedup", ...args, ...(input.pipe ? [] : [input.file])];
    const child = spawn(command[0], command.slice(1), {
      env: { ...process.env, ...env },
      stdio: [input.pipe ? "pipe" : "ignore", "pipe", "pipe"],
      detached: true,
    });
    const killAll = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    };
    let stdout = "";
    let stderr = "";
    const timer = kill.ms === undefined ? undefined : setTimeout(killAll, kill.ms);
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("latin1");
      if (kill.bytes !== undefined && stdout.length > kill.bytes) killAll();
    });
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    if (input.pipe) {
      const stdin = child.stdin!;
      stdin.on("error", () => undefined); // the child was killed mid-write
      let at = 0;
      const next = () => {
        if (at >= input.text.length || stdin.destroyed) return stdin.end();
        stdin.write(input.text.slice(at, (at += 1 << 16)));
        setTimeout(next, 2);
      };
      next();
    }
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
  });
}

/** `dedup args` with `input` on stdin, to its end, not traced. */
function runPlain(args: string[], input: { text: string }): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "dedup", ...args], { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(input.text);
    child.on("close", (code) => resolve({ stdout: "", stderr, code }));
  });
}

/** Lines of an output, the last one only when it ended in "\n" (a killed run may stop mid-line). */
function wholeLines(out: string): string[] {
  return out
    .slice(0, out.lastIndexOf("\n") + 1)
    .split("\n")
    .filter(Boolean);
}

// The five cases share nothing (each its own folder, store, input and random sequence) and spend
// most of their time waiting (each fdatasync held up 40 ms, the pipe paced, kill timers): run at
// once, they fill a core one at a time leaves idle.
describe.concurrent.each([
  { pipe: false, past: false, name: "reading a file" },
  { pipe: true, past: false, name: "reading a slow pipe" },
  { pipe: false, past: true, name: "reading a file, the store past --memory" },
  { pipe: true, past: true, name: "reading a slow pipe, the store past --memory" },
  // The keyed path (a record's field as its key; these lines have one field, the whole line).
  { pipe: true, past: false, keyed: true, name: "keyed by --field 1, reading a slow pipe" },
])("dedup --store killed, $name", ({ pipe, past, keyed }) => {
  it(`${KILLS} kill -9 resumes in a row lose no line: the union of the outputs is awk's`, async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "cs-resume-"));
    const store = join(dir, "seen");
    const random = rng(pipe ? 48_31 : 48_32);
    const file = join(dir, "input.txt");
    const text = randomKeys(past ? 483 : 484, 250_000, 200_000).join("\n") + "\n";
    writeFileSync(file, text);
    const env: Record<string, string> = {};
    const args = ["--store", store, ...(keyed === true ? ["--field", "1"] : [])];
    if (past) {
      // A store larger than --memory: every new line waits for the end of the run, where windows of
      // 4,096 kept lines are recorded and printed in turn.
      const old = Array.from({ length: 800_000 }, (_, i) => `https://old.example/${i}`).join("\n") + "\n";
      const filled = await runPlain(["--store", store], { text: old });
      expect(filled.code, filled.stderr).toBe(0);
      args.push("--memory", "16MiB", "--tmp", dir);
      env.CRAWLSIEVE_TEST_SPILL_WINDOW = "4096";
    }
    const expected = new Set(wholeLines(awkFirst(file)));
    const input = { file, text, pipe };
    const printed: string[] = [];
    let toldAgain = 0;
    for (let k = 0; k <= KILLS; k++) {
      const last = k === KILLS;
      const left = expected.size - new Set(printed).size;
      const kill = last
        ? {}
        : random() < 0.5
          ? { bytes: Math.floor(random() * left * 30) }
          : { ms: 150 + Math.floor(random() * 900) };
      const result = await run(args, input, kill, env);
      if (last) expect(result.code, result.stderr).toBe(0);
      const lines = wholeLines(result.stdout);
      for (const line of lines) expect(expected.has(line), line).toBe(true);
      for (const line of lines) printed.push(line);
      for (const match of result.stderr.matchAll(/recorded ([\d,]+) lines as seen/g))
        toldAgain += Number(match[1].replace(/,/g, ""));
    }
    const union = new Set(printed);
    // Nothing lost.
    expect([...expected].filter((line) => !union.has(line))).toEqual([]);
    // Printed twice only what killed runs had recorded and not confirmed, and those were told.
    const twice = printed.length - union.size;
    expect(twice).toBeLessThanOrEqual(toldAgain);
    // Every run that ended or was found dead left no file behind but the last, which ended.
    expect(readdirSync(store).filter((name) => name.includes("unprinted"))).toEqual([]);
  }, 300_000);
});
