// A real redis-server for the tests: started on a free loopback port in a temporary folder,
// with the append-only file fsynced on every write (so a restart keeps every acknowledged
// write), and stopped (or killed) on request.
import { afterAll, beforeAll } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePorts, untilReady } from "./local-servers.js";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running server. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL: no shutdown save, in-flight replies lost. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data folder. */
  restart(): Promise<void>;
  /** SIGSTOP: a stall; connections stay open, commands wait unanswered. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Stops it and removes its folder. */
  stop(): Promise<void>;
}

function launch(port: number, dir: string, extra: string[]): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--protected-mode",
      "no",
      ...extra,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  return untilReady(child, "redis-server");
}

/** Starts redis-server (extra arguments appended, e.g. ["--cluster-enabled", "yes"]). */
export async function startRedis(extra: string[] = []): Promise<RedisServer> {
  const port = (await freePorts(1))[0];
  const dir = mkdtempSync(join(tmpdir(), "cs-redis-"));
  let child = await launch(port, dir, extra);
  const exited = (c: ChildProcess) =>
    new Promise<void>((resolve) =>
      c.exitCode !== null || c.signalCode !== null ? resolve() : c.once("exit", () => resolve()),
    );
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      child.kill("SIGKILL");
      await exited(child);
    },
    async restart() {
      child = await launch(port, dir, extra);
    },
    pause() {
      child.kill("SIGSTOP");
    },
    resume() {
      child.kill("SIGCONT");
    },
    async stop() {
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server started before the calling file's tests and stopped after them; call the result for it. */
export function redisForFile(): () => RedisServer {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedis();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  return () => server!;
}
