// MinHash sketches on every core: a batch of texts is cut into one contiguous slice per worker
// thread, each worker sketches its slice with the same kernel as sketchMany, and the slices are
// put back in order. A sketch depends only on its text and the parameters, so the result is the
// bytes sketchMany gives on one thread, whatever the thread count. Node only.
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { DisposedError } from "../errors.js";
import * as check from "../validate.js";
import { startWorkers, WorkerJobError } from "../threads/worker-pool.js";
import { checkSketchParams, type SketchParams, type Sketches, sketchMany } from "./minhash.js";

const workerUrl = new URL("./sketch-worker.js", import.meta.url);

/** Fewer texts than this a worker are sketched on the calling thread: a message costs more than their sketches. */
const MIN_PER_WORKER = 16;

type Reply =
  | { id: number; ok: true; values: Uint32Array; keys: Uint32Array }
  | { id: number; ok: false; message: string };

/** Worker threads that make MinHash sketches in parallel (`await SketchPool.start()`, then `sketchMany`). */
export class SketchPool {
  private workers: Worker[];
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  private constructor(workers: Worker[]) {
    this.workers = workers;
    for (const worker of workers) {
      worker.on("message", (reply: Reply) => {
        const job = this.pending.get(reply.id);
        this.pending.delete(reply.id);
        if (this.pending.size === 0) this.hold(false);
        job?.resolve(reply);
      });
      worker.on("error", (error) => this.failAll(error));
      // Idle workers do not keep the process alive (a pool nobody closed never hangs an exit);
      // busy ones do, or a process awaiting only their replies would end with the work undone.
      worker.unref();
    }
  }

  /** Starts `threads` workers (default: the cores available to this process). */
  static async start(threads = availableParallelism()): Promise<SketchPool> {
    return new SketchPool(await startWorkers(workerUrl, check.positiveInteger("threads", threads, 256)));
  }

  /** Threads in the pool. */
  get size(): number {
    return this.workers.length;
  }

  /** The texts' sketches, as sketchMany(texts, params) gives them, made across the workers. */
  async sketchMany(texts: readonly string[], params: SketchParams): Promise<Sketches> {
    if (this.workers.length === 0) throw new DisposedError("SketchPool");
    checkSketchParams(params);
    const parts = Math.min(this.workers.length, Math.floor(texts.length / MIN_PER_WORKER));
    if (parts <= 1) return sketchMany(texts, params);
    const per = Math.ceil(texts.length / parts);
    const replies = await Promise.all(
      Array.from({ length: parts }, (_, w) => this.run(w, texts.slice(w * per, (w + 1) * per), params)),
    );
    const stride = params.k + 1;
    const values = new Uint32Array(texts.length * stride);
    const keys = new Uint32Array(texts.length * params.bands);
    let at = 0;
    let keyAt = 0;
    for (const reply of replies) {
      values.set(reply.values, at);
      keys.set(reply.keys, keyAt);
      at += reply.values.length;
      keyAt += reply.keys.length;
    }
    return { params, count: texts.length, values, keys };
  }

  /** Stops the workers; sketches under way fail. */
  async close(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    this.failAll(new DisposedError("SketchPool"));
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private run(w: number, texts: string[], params: SketchParams): Promise<{ values: Uint32Array; keys: Uint32Array }> {
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      if (this.pending.size === 0) this.hold(true);
      this.pending.set(id, { resolve, reject });
      this.workers[w].postMessage({ id, texts, params: { ...params } });
    }).then((reply) => {
      if (!reply.ok) throw new WorkerJobError(reply.message);
      return reply;
    });
  }

  private failAll(error: Error): void {
    for (const job of this.pending.values()) job.reject(error);
    this.pending.clear();
    this.hold(false);
  }

  /** Keeps the process alive while jobs are out (ref), or lets it end (unref). */
  private hold(busy: boolean): void {
    for (const worker of this.workers) {
      if (busy) worker.ref();
      else worker.unref();
    }
  }
}
