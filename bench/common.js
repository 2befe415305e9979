// Shared benchmark helpers: realistic keys, a tinybench runner that reports keys per second, and
// markdown output. Benchmarks import what ships (build/js), never the sources.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { Bench } from "tinybench";

/**
 * `count` distinct URL keys of 60-100 bytes. They are produced the way a crawler meets them, as
 * lines split from one text (flat strings), not as template-literal ropes that V8 would flatten
 * on first use and so charge to whichever library touches them first.
 */
export function urlKeys(count, tag = "page") {
  const out = [];
  // One text per million keys: a single string may not exceed 2^29 characters.
  for (let start = 0; start < count; start += 1_000_000) {
    const parts = [];
    for (let i = start; i < Math.min(count, start + 1_000_000); i++) {
      parts.push(`https://www.site-${i % 997}.example.com/${tag}/${(i * 2654435761) % 100000}/${i}.html?ref=${i % 13}`);
    }
    for (const line of Buffer.from(parts.join("\n"), "latin1").toString("latin1").split("\n")) out.push(line);
  }
  return out;
}

/**
 * Times each task over `iterations` full passes (plus one warm-up pass) and returns
 * { name -> keys per second }, from tinybench's mean latency.
 */
export async function keysPerSecond(name, keysPerPass, tasks, { iterations = 3 } = {}) {
  const bench = new Bench({ name, iterations, time: 0, warmup: true, warmupIterations: 1, warmupTime: 0 });
  for (const task of tasks) bench.add(task.name, task.fn, task.options ?? {});
  await bench.run();
  const out = new Map();
  for (const task of bench.tasks) {
    const passes = task.name in (keysPerPass.overrides ?? {}) ? keysPerPass.overrides[task.name] : keysPerPass.count;
    out.set(task.name, passes / (task.result.latency.mean / 1000));
  }
  return out;
}

/** The machine line recorded with every result. */
export function machine() {
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown CPU"} x${cpu.length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}`;
}

/** Millions with two decimals. */
export const millions = (n) => (n / 1e6).toFixed(2);

/** A markdown table from a header and rows. */
export function table(header, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/**
 * Builds of the library side by side in one process, for before/after runs: each directory is a
 * copy of build/ (e.g. from `git worktree add /tmp/old REV && (cd /tmp/old && npm run build)`),
 * loaded and initialised. Returns [{ dir, lib }].
 */
export async function loadBuilds(dirs) {
  const { resolve } = await import("node:path");
  const { pathToFileURL } = await import("node:url");
  const builds = [];
  for (const dir of dirs) {
    const lib = await import(pathToFileURL(resolve(dir, "js/index.node.js")).href);
    await lib.init();
    builds.push({ dir, lib });
  }
  return builds;
}

/**
 * Runs `run(build, round)` for every build, `rounds` times, the builds alternating within each
 * round so a slow minute on a shared machine hits all alike; returns each build's CPU seconds
 * (user + system of this process) sorted, with their minimum and median.
 */
export function alternateCpu(builds, rounds, run) {
  const seconds = builds.map(() => []);
  for (let round = 0; round < rounds; round++) {
    builds.forEach((build, i) => {
      const start = process.cpuUsage();
      run(build, round);
      const used = process.cpuUsage(start);
      seconds[i].push((used.user + used.system) / 1e6);
    });
  }
  return seconds.map((list) => {
    const sorted = [...list].sort((a, b) => a - b);
    return { sorted, min: sorted[0], median: sorted[sorted.length >> 1] };
  });
}

/** A xorshift32 generator of numbers in [0, 1) from `seed`: fast, and the same sequence on every machine (generated inputs are reproducible). */
export function xorshift32(seed) {
  let state = seed >>> 0;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

/** A free loopback port. */
export async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A redis-server on a free loopback port, no persistence, in a temporary folder named from `prefix`; its URL and how to stop it. */
export async function startRedis(prefix = "cs-bench-redis-") {
  const port = await freePort();
  const child = spawn("redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    mkdtempSync(join(tmpdir(), prefix)),
  ]);
  await new Promise((resolve, reject) => {
    child.on("error", reject);
    child.stdout.on("data", (d) => String(d).includes("Ready to accept") && resolve());
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") };
}

/**
 * Runs `argv` (a command and its arguments; with `shell: true`, one bash pipeline as a string) as
 * one timed contender: under `flock /tmp/cs-bench.lock` (the shared machine's other benchmarks
 * wait) and `/usr/bin/time`, so every figure has its wall and CPU seconds and peak RSS beside it.
 * `stdout`: "pipe" (returned as a Buffer), "ignore", or a file descriptor to write to.
 * Returns { wall, cpu, rss (MiB), stdout, stderr }; throws with the stderr's tail when it fails.
 */
export function timedRun(argv, { shell = false, stdout = "pipe", input, env, maxBuffer = 1 << 26 } = {}) {
  const command = shell ? ["bash", "-o", "pipefail", "-c", argv] : argv;
  const result = spawnSync("flock", ["/tmp/cs-bench.lock", "/usr/bin/time", "-f", "TIME %e %U %S %M", ...command], {
    input,
    stdio: [input === undefined ? "ignore" : "pipe", stdout, "pipe"],
    env: env === undefined ? process.env : { ...process.env, ...env },
    maxBuffer,
  });
  const stderr = result.stderr.toString();
  const line = stderr
    .trim()
    .split("\n")
    .find((l) => l.startsWith("TIME "));
  if (result.status !== 0 || line === undefined) throw new Error(`${command.join(" ")} failed: ${stderr.slice(-800)}`);
  const [wall, user, sys, kib] = line.slice(5).split(" ").map(Number);
  return { wall, cpu: user + sys, rss: kib / 1024, stdout: result.stdout ?? Buffer.alloc(0), stderr };
}

/** The JSON report a bench child prints last on stdout. */
export function lastJson(stdout) {
  return JSON.parse(stdout.toString().trim().split("\n").pop());
}

/** The run of `runs` with the median wall time (rounds are alternated by the caller). */
export function medianByWall(runs) {
  return [...runs].sort((a, b) => a.wall - b.wall)[Math.floor(runs.length / 2)];
}
