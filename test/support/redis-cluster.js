// A real Redis Cluster for the tests: six redis-server processes in cluster mode on free
// loopback ports (three masters, three replicas), joined by `redis-cli --cluster create`, with a
// short node timeout so a killed master's replica is promoted within seconds. Nodes can be
// killed (SIGKILL) one by one; stop() ends them all and removes their folders.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePorts, untilReady } from "./local-servers.js";
import { tmpdir } from "node:os";
import { join } from "node:path";

function launch(port, dir) {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`,
    "--cluster-node-timeout", "1500", "--save", "", "--appendonly", "no", "--protected-mode", "no"];
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  return untilReady(child, `redis-server ${port}`);
}

/** Starts three masters and three replicas on loopback and joins them into one cluster. */
export async function startCluster() {
  const ports = await freePorts(6);
  const dir = mkdtempSync(join(tmpdir(), "cs-cluster-"));
  const children = new Map();
  for (const port of ports) children.set(port, await launch(port, dir));
  const dead = new Set();
  const cli = (args, port = ports.find((p) => !dead.has(p))) => {
    const result = spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { encoding: "utf8", timeout: 120_000 });
    if (result.status !== 0) throw new Error(`redis-cli ${args.join(" ")}: ${result.stderr}${result.stdout}`);
    return result.stdout;
  };
  cli(["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "1", "--cluster-yes"]);
  const exited = (c) => new Promise((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once("exit", () => resolve())));
  const cluster = {
    nodes: ports.map((port) => ({
      port,
      address: `127.0.0.1:${port}`,
      async kill() {
        dead.add(port);
        children.get(port).kill("SIGKILL");
        await exited(children.get(port));
      },
      async restart() {
        children.set(port, await launch(port, dir));
        dead.delete(port);
      },
      pause() {
        children.get(port).kill("SIGSTOP");
      },
      resume() {
        children.get(port).kill("SIGCONT");
      },
    })),
    urls: ports.map((p) => `redis://127.0.0.1:${p}`),
    cli,
    masters() {
      return cli(["CLUSTER", "NODES"])
        .split("\n")
        .filter((line) => /\bmaster\b/.test(line) && !/\bfail\b/.test(line) && / connected/.test(line))
        .map((line) => Number(line.split(" ")[1].split("@")[0].split(":")[1]))
        .filter((port) => !dead.has(port));
    },
    replicaOf(masterPort) {
      const lines = cli(["CLUSTER", "NODES"], masterPort).split("\n");
      const master = lines.find((line) => line.includes("myself")).split(" ")[0];
      const replica = lines.find((line) => line.split(" ")[3] === master);
      return Number(replica.split(" ")[1].split("@")[0].split(":")[1]);
    },
    async settle(check = () => true, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ok = ports.filter((p) => !dead.has(p)).every((p) => {
          try {
            return cli(["CLUSTER", "INFO"], p).includes("cluster_state:ok");
          } catch {
            return false;
          }
        });
        if (ok && check()) return;
        if (Date.now() > deadline) throw new Error(`the cluster did not settle in ${timeoutMs} ms:\n${cli(["CLUSTER", "NODES"])}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async stop() {
      for (const [port, child] of children) {
        if (dead.has(port)) continue;
        child.kill("SIGCONT");
        child.kill("SIGKILL");
        await exited(child);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await cluster.settle(() => cluster.masters().length === 3);
  return cluster;
}

/** A node-redis cluster client on `cluster` that fails fast instead of queueing (the tests kill nodes). */
export async function connectCluster(cluster) {
  const { createCluster } = await import("redis");
  const client = createCluster({ rootNodes: cluster.urls.map((url) => ({ url })), defaults: { disableOfflineQueue: true, socket: { reconnectStrategy: false, connectTimeout: 2_000 } } });
  client.on("error", () => undefined);
  await client.connect();
  return client;
}
