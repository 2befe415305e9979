// `dedup` reads a pipe and writes a pipe straight to and from WebAssembly memory on the thread pool
// (line-pipeline.ts), not through Node's streams: lines still come out as soon as they are in, a
// pipe another process made non-blocking (the mode is the pipe's, shared with whoever holds it)
// still gives every line once, and a terminal still gets the output through the stream.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";

const CLI = new URL("../build/js/cli/main.js", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lines from..to-1, one a line. */
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${from + i}\n`).join("");

describe("dedup on pipes", () => {
  it("prints a line as soon as it is in, before the input ends", async () => {
    const child = spawn(process.execPath, [CLI, "dedup"], { stdio: ["pipe", "pipe", "pipe"] });
    const exited = once(child, "exit");
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stdin.write("a\nb\na\n");
    for (let waited = 0; out !== "a\nb\n" && waited < 10_000; waited += 20) await sleep(20);
    expect(out).toBe("a\nb\n");
    child.stdin.end("c\nb\n");
    const [code] = await exited;
    expect(code).toBe(0);
    expect(out).toBe("a\nb\nc\n");
  });

  it("gives every line once through pipes made non-blocking, fed slowly and read late", async () => {
    // perl (Debian's perl-base, always there) sets O_NONBLOCK on both pipes and runs the command on them.
    const setNonBlocking =
      "use Fcntl; for my $fh (*STDIN, *STDOUT) { my $f = fcntl($fh, F_GETFL, 0) or die; fcntl($fh, F_SETFL, $f | O_NONBLOCK) or die } exec @ARGV or die";
    const child = spawn("perl", ["-e", setNonBlocking, process.execPath, CLI, "dedup"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = once(child, "exit");
    // A command that stopped early makes the writes below fail: the assertions say why.
    child.stdin.on("error", () => undefined);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const parts: Buffer[] = [];
    child.stdout.pause();
    child.stdout.on("data", (chunk: Buffer) => parts.push(chunk));
    // Overlapping ranges, each a little past the next one's start: their first occurrences are 0..N-1 in order.
    const N = 400_000;
    for (let from = 0; from < N; from += 20_000) {
      child.stdin.write(range(from, Math.min(N, from + 21_000)));
      await sleep(15);
    }
    child.stdin.end();
    // Nobody reads for a while: the output pipe fills and the command's writes find it full.
    await sleep(500);
    child.stdout.resume();
    const [code] = await exited;
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(Buffer.concat(parts).toString()).toBe(range(0, N));
  });

  it("writes to a terminal through the stream", () => {
    // script(1) gives the command a terminal for stdout.
    const result = spawnSync("script", ["-qec", `printf 'x\\ny\\nx\\n' | node ${CLI} dedup 2>/dev/null`, "/dev/null"]);
    expect(result.status).toBe(0);
    expect(result.stdout.toString().replace(/\r/g, "")).toBe("x\ny\n");
  });
});
