// What starting local servers for the tests takes: free loopback ports (for redis-server, and for
// sites that must keep one port over two runs) and waiting until a redis-server says it is ready
// (redis-server.ts starts one node, redis-cluster.js six).
import { createServer } from "node:net";

/** `count` distinct ports free on 127.0.0.1 right now. */
export async function freePorts(count) {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve(server));
    })),
  );
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Resolves with `child` once it logs "Ready to accept connections"; rejects with its log if it exits or takes over 10 s. */
export function untilReady(child, name) {
  return new Promise((resolve, reject) => {
    let log = "";
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 10 s:\n${log}`)), 10_000);
    child.stdout.on("data", (chunk) => {
      log += chunk.toString();
      if (log.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${log}`));
    });
  });
}
