// Prototype driver, not shipped (issue 13, Deliver 4): `dedup --approx` of one file with the kernel
// cut in two (bench/proto/split-lines.ts), on one thread (THREADS=1: scan, then apply, a chunk at a
// time) or with reading, scanning and hashing in a worker that hands 32-byte line records to the
// main thread through a ring of four slots in a SharedArrayBuffer (THREADS=2), while the main
// thread reads the same chunks itself (the kept lines' bytes), tests-and-sets and writes. One
// split-block filter sized for ITEMS at p = 0.0005, as the CLI's first stage is; lines must fit the
// 64 KiB head room; stdout must be a file. Compare with `node build/js/cli/main.js dedup --approx`.
// usage: node bench/proto/split-dedup.js FILE THREADS(1|2) ITEMS > OUT
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, read, readFileSync, readSync, write, writeFileSync } from "node:fs";
import { Worker, isMainThread, workerData } from "node:worker_threads";

const CHUNK = 1 << 20;
const HEAD = 1 << 16;
const MAXREC = 1 << 16;
const REC = 32;
const RING = 4;
const WASM = "bench/out/split-lines.wasm";
if (isMainThread && !existsSync(WASM)) {
  mkdirSync("bench/out", { recursive: true });
  // A config of its own: with the project's asconfig.json, asc would also write its release target's files over build/.
  writeFileSync("bench/out/split-lines.asconfig.json", JSON.stringify({ targets: { release: {} }, options: {} }));
  const asc = spawnSync("npx", ["asc", "bench/proto/split-lines.ts", "--config", "bench/out/split-lines.asconfig.json", "-o", WASM, "-O3", "--converge", "--noAssert", "--runtime", "stub", "--enable", "simd", "--use", "abort=", "--initialMemory", "1"], { stdio: "inherit" });
  if (asc.status !== 0) throw new Error("asc failed");
}
const wasm = new WebAssembly.Module(readFileSync(WASM));

function instance(bytes) {
  const inst = new WebAssembly.Instance(wasm, { env: { abort() { throw new Error("abort"); } } });
  const mem = inst.exports.memory;
  const base = (inst.exports.heapBase() + 63) & ~63;
  const need = base + bytes;
  if (need > mem.buffer.byteLength) mem.grow(Math.ceil((need - mem.buffer.byteLength) / 65536));
  return { k: inst.exports, mem, base };
}

if (!isMainThread) {
  // The worker: reads the file itself, scans and hashes each chunk, hands records over the ring.
  const { file, sab } = workerData;
  const ctrl = new Int32Array(sab, 0, RING * 4);
  const ring = new Uint8Array(sab, RING * 16);
  const { k, mem, base } = instance(HEAD + CHUNK + MAXREC * REC);
  const buf = base;
  const rec = base + HEAD + CHUNK;
  const u8 = new Uint8Array(mem.buffer);
  const fd = openSync(file, "r");
  let carry = 0;
  let i = 0;
  const post = (n, consumed, last) => {
    const s = i % RING;
    while (Atomics.load(ctrl, s * 4) !== 0) Atomics.wait(ctrl, s * 4, Atomics.load(ctrl, s * 4));
    ring.set(u8.subarray(rec, rec + n * REC), s * MAXREC * REC);
    ctrl[s * 4 + 1] = n;
    ctrl[s * 4 + 2] = consumed;
    Atomics.store(ctrl, s * 4, last ? 2 : 1);
    Atomics.notify(ctrl, s * 4);
    i++;
  };
  for (;;) {
    const got = readSync(fd, u8, buf + HEAD, CHUNK, null);
    const start = buf + HEAD - carry;
    if (got === 0) {
      const n = carry > 0 ? k.scan(start, carry, 1, rec, MAXREC) : 0;
      post(n, carry, true);
      break;
    }
    const n = k.scan(start, carry + got, 0, rec, MAXREC);
    const consumed = k.consumed.value;
    const rest = carry + got - consumed;
    if (rest > HEAD) throw new Error("prototype: a line longer than the head room");
    u8.copyWithin(buf + HEAD - rest, start + consumed, start + consumed + rest);
    carry = rest;
    post(n, consumed, false);
  }
  closeSync(fd);
} else {
  const [file, threads, itemsArg] = process.argv.slice(2);
  const { initSync, sizing } = await import("../../build/js/index.node.js");
  initSync();
  const items = Number(itemsArg ?? 12e6);
  const plan = sizing.optimalSplitBlockBloom({ items, fpRate: 0.0005 });
  const blocks = Math.ceil(plan.bits / 512);
  const SLOT = HEAD + CHUNK;
  const OUT = HEAD + CHUNK + 64;
  const { k, mem, base } = instance(2 * SLOT + MAXREC * REC + 2 * OUT + blocks * 64 + 64);
  const slots = [base, base + SLOT];
  const rec = base + 2 * SLOT;
  const outs = [rec + MAXREC * REC, rec + MAXREC * REC + OUT];
  const bits = outs[1] + OUT;
  const u8 = new Uint8Array(mem.buffer);
  const fd = openSync(file, "r");
  const readInto = (slot) => new Promise((res, rej) => read(fd, u8, slots[slot] + HEAD, CHUNK, null, (e, n) => (e ? rej(e) : res(n))));
  let pendingWrite = Promise.resolve();
  const direct = fstatSync(1).isFile();
  const writeOut = async (ptr, len) => {
    await pendingWrite;
    pendingWrite = (async () => {
      for (let at = 0; at < len; ) at += await new Promise((res, rej) => write(1, u8, ptr + at, len - at, null, (e, n) => (e ? rej(e) : res(n))));
    })();
  };
  if (!direct) throw new Error("prototype: stdout must be a file");
  let outSlot = 0;
  let carry = 0;
  let slot = 0;
  let next = readInto(0);
  let take;
  if (threads === "2") {
    const sab = new SharedArrayBuffer(RING * 16 + RING * MAXREC * REC);
    const ctrl = new Int32Array(sab, 0, RING * 4);
    const ring = new Uint8Array(sab, RING * 16);
    const worker = new Worker(new URL(import.meta.url), { workerData: { file, sab } });
    worker.on("error", (e) => { console.error("worker", e); process.exit(3); });
    worker.unref();
    let i = 0;
    take = () => {
      const s = i++ % RING;
      while (Atomics.load(ctrl, s * 4) === 0) if (Atomics.wait(ctrl, s * 4, 0, 5000) === "timed-out") throw new Error(`prototype: no records for chunk ${i - 1} after 5 s (worker state ${Array.from(ctrl)})`);
      const n = ctrl[s * 4 + 1];
      u8.set(ring.subarray(s * MAXREC * REC, (s * MAXREC + n) * REC), rec);
      const consumed = ctrl[s * 4 + 2];
      Atomics.store(ctrl, s * 4, 0);
      Atomics.notify(ctrl, s * 4);
      return { n, consumed };
    };
  }
  for (;;) {
    const got = await next;
    const start = slots[slot] + HEAD - carry;
    const final = got === 0;
    const other = slot ^ 1;
    if (!final) next = readInto(other);
    let n, consumed;
    if (take) ({ n, consumed } = take());
    else {
      n = final ? (carry > 0 ? k.scan(start, carry, 1, rec, MAXREC) : 0) : k.scan(start, carry + got, 0, rec, MAXREC);
      consumed = final ? carry : k.consumed.value;
    }
    const outLen = k.apply(start, rec, n, bits, blocks, outs[outSlot], 0);
    if (outLen > 0) {
      await writeOut(outs[outSlot], outLen);
      outSlot ^= 1;
    }
    if (final) break;
    const rest = carry + got - consumed;
    if (rest > HEAD) throw new Error("prototype: a line longer than the head room");
    await next.then(() => undefined, () => undefined);
    u8.copyWithin(slots[other] + HEAD - rest, start + consumed, start + consumed + rest);
    carry = rest;
    slot = other;
  }
  await pendingWrite;
  closeSync(fd);
  process.stderr.write(`unique ${k.unique.value}\n`);
  process.exit(0);
}
