// Zstandard through the zstd tool, where it is on PATH, for Node before 22.15 (no zstd in
// node:zlib): `zstd -dcq` in a child process decodes on another core while this one deduplicates,
// as a user's `zstd -dc FILE | crawlsieve dedup` does, and checks every frame as zstd does
// (checksums, sizes, its 128 MiB window limit). In-process fzstd is 3x slower by wall on 4e6
// lines (bench/compressed-input.bench.js). CRAWLSIEVE_ZSTD=js keeps the in-process decoder.
import { spawn, spawnSync } from "node:child_process";
import { Duplex, PassThrough, Writable } from "node:stream";

let found: boolean | undefined;

/** Whether the zstd tool runs here (asked once), unless CRAWLSIEVE_ZSTD=js asks for the in-process decoder. */
export function hasZstdTool(): boolean {
  if (process.env.CRAWLSIEVE_ZSTD === "js") return false;
  found ??= spawnSync("zstd", ["--version"], { stdio: "ignore" }).status === 0;
  return found;
}

/** A decoding stream over a `zstd -dcq` child: compressed bytes in, decoded out; zstd's complaint as its error. */
export function zstdToolStream(): Duplex {
  const child = spawn("zstd", ["-dcq"], { stdio: ["pipe", "pipe", "pipe"] });
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  let complaint = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => {
    if (complaint.length < 4096) complaint += text;
  });
  child.stdout.pipe(out, { end: false });
  let spawnError: Error | undefined;
  child.on("error", (error) => {
    spawnError = error;
  });
  child.on("close", (code, signal) => {
    if (code === 0) out.end();
    else out.destroy(new Error(spawnError?.message ?? (reason(complaint) || `zstd ended with ${code ?? signal}`)));
  });
  // zstd stops reading at damage: a write it no longer takes is heard as its exit, not as EPIPE.
  child.stdin.on("error", () => undefined);
  const input = new Writable({
    highWaterMark: 1 << 20,
    write(chunk: Buffer, _encoding, callback) {
      if (child.stdin.destroyed || !child.stdin.write(chunk)) {
        if (child.stdin.destroyed) return callback();
        child.stdin.once("drain", () => callback());
        child.stdin.once("close", () => callback());
        return;
      }
      callback();
    },
    final(callback) {
      child.stdin.end();
      callback();
    },
  });
  const duplex = Duplex.from({ writable: input, readable: out });
  duplex.on("close", () => {
    if (child.exitCode === null) child.kill();
  });
  return duplex;
}

/** zstd's message without its file name ("*stdin*\\ : "), one line. */
function reason(stderr: string): string {
  const line = stderr.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.replace(/^\s*(zstd:\s*)?\/?\*stdin\*\\?\s*:\s*/, "").trim();
}
