// Starts `workerd serve` on a built Durable Object example and waits until it answers; used by
// test/edge/durable-object.test.ts and bench/durable-object.bench.js, which stop and restart it.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";

const WORKERD = resolve(new URL("../../node_modules/.bin/workerd", import.meta.url).pathname);

/** A free loopback port (asked of the OS, then released). */
export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** Runs workerd on `dir`/config.capnp; resolves once http://127.0.0.1:`port` answers. */
export async function startWorkerd(dir, port) {
  const child = spawn(WORKERD, ["serve", "config.capnp", "--experimental"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise((done) => child.once("exit", (code, signal) => done({ code, signal })));
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`workerd exited: ${output}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      break;
    } catch {
      if (tries > 300) throw new Error(`workerd did not answer in 30 s: ${output}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return {
    child,
    output: () => output,
    /** Stops it with `signal` (SIGTERM by default, SIGKILL for a crash) and waits for the exit. */
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
