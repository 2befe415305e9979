// Parallel insert and query into a PartitionedBloomFilter with worker_threads. A batch of keys is
// put in SharedArrayBuffers once (bytes + spans), split into one contiguous range per worker, and
// each worker adds or tests its range in the shared filter; flags come back in a shared array.
// Node only.
import { Worker } from "node:worker_threads";
import { CrawlsieveError, DisposedError } from "../errors.js";
import * as check from "../validate.js";
import type { PartitionedBloomFilter } from "./partitioned-bloom-filter.js";

/** @internal One range of keys for one worker. */
export interface Job {
  readonly id: number;
  readonly filter: number;
  readonly op: "add" | "has";
  readonly data: SharedArrayBuffer;
  readonly spans: SharedArrayBuffer;
  readonly from: number;
  readonly to: number;
  readonly out: SharedArrayBuffer;
}

/** @internal A worker's answer to a job. */
export type JobResult =
  | { readonly id: number; readonly ok: true }
  | { readonly id: number; readonly ok: false; readonly message: string };

/** A job failed in a worker (its message says why). */
export class WorkerJobError extends CrawlsieveError {
  constructor(message: string) {
    super("ERR_WORKER", `a worker thread failed: ${message}`);
  }
}

const workerUrl = new URL("./worker.js", import.meta.url);

/** Starts `count` threads of the module at `url`, resolved once every one is online (rejected if one fails to start). */
export async function startWorkers(url: URL, count: number): Promise<Worker[]> {
  const threads = Array.from({ length: count }, () => new Worker(url));
  await Promise.all(
    threads.map(
      (worker) =>
        new Promise<void>((resolve, reject) => {
          worker.once("online", resolve);
          worker.once("error", reject);
        }),
    ),
  );
  return threads;
}

/** Worker threads that add and test keys in shared filters in parallel. */
export class BloomWorkerPool {
  private workers: Worker[];
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private readonly filterIds = new WeakMap<PartitionedBloomFilter, number>();
  private nextId = 1;

  private constructor(workers: Worker[]) {
    this.workers = workers;
    for (const worker of workers) {
      worker.on("message", (result: JobResult) => this.settle(result));
      worker.on("error", (error) => this.failAll(error));
    }
  }

  /** Starts `workers` threads (each compiles the modules once). */
  static async start(workers: number): Promise<BloomWorkerPool> {
    return new BloomWorkerPool(await startWorkers(workerUrl, check.positiveInteger("workers", workers, 1024)));
  }

  /** Threads in the pool. */
  get size(): number {
    return this.workers.length;
  }

  /** Adds keys (spans of one buffer) to the filter, split across the workers; result[i] = 1 when a worker set a bit of key i. */
  addSpans(filter: PartitionedBloomFilter, data: Uint8Array, spans: ArrayLike<number>): Promise<Uint8Array> {
    return this.dispatch(filter, "add", data, spans);
  }

  /** Tests keys (spans of one buffer) in parallel. */
  hasSpans(filter: PartitionedBloomFilter, data: Uint8Array, spans: ArrayLike<number>): Promise<Uint8Array> {
    return this.dispatch(filter, "has", data, spans);
  }

  /** Adds string or byte keys in parallel (they are encoded once, here, into shared memory). */
  addMany(filter: PartitionedBloomFilter, keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    const { data, spans } = encodeShared(check.keyList("keys", keys));
    return this.dispatch(filter, "add", data, spans);
  }

  /** Tests string or byte keys in parallel. */
  hasMany(filter: PartitionedBloomFilter, keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
    const { data, spans } = encodeShared(check.keyList("keys", keys));
    return this.dispatch(filter, "has", data, spans);
  }

  /** Stops the workers; pending jobs fail. */
  async close(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    this.failAll(new DisposedError("BloomWorkerPool"));
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private async dispatch(
    filter: PartitionedBloomFilter,
    op: "add" | "has",
    data: Uint8Array,
    spans: ArrayLike<number>,
  ): Promise<Uint8Array> {
    if (this.workers.length === 0) throw new DisposedError("BloomWorkerPool");
    check.spans(data, spans);
    const count = spans.length >>> 1;
    const sharedData = toShared(data);
    const sharedSpans = new Uint32Array(new SharedArrayBuffer(4 * spans.length));
    sharedSpans.set(spans);
    const out = new SharedArrayBuffer(count);
    const id = this.attach(filter);
    const per = Math.ceil(count / this.workers.length);
    const jobs: Promise<void>[] = [];
    this.workers.forEach((worker, w) => {
      const from = Math.min(count, w * per);
      const to = Math.min(count, from + per);
      if (from === to) return;
      const job: Job = {
        id: this.nextId++,
        filter: id,
        op,
        data: sharedData,
        spans: sharedSpans.buffer as SharedArrayBuffer,
        from,
        to,
        out,
      };
      jobs.push(new Promise((resolve, reject) => this.pending.set(job.id, { resolve, reject })));
      worker.postMessage({ job });
    });
    await Promise.all(jobs);
    return new Uint8Array(out).slice();
  }

  /** Attaches the filter in every worker once (messages are ordered, so later jobs find it). */
  private attach(filter: PartitionedBloomFilter): number {
    let id = this.filterIds.get(filter);
    if (id === undefined) {
      id = this.nextId++;
      this.filterIds.set(filter, id);
      const handle = filter.handle();
      for (const worker of this.workers) worker.postMessage({ attach: { id, handle } });
    }
    return id;
  }

  private settle(result: JobResult): void {
    const waiter = this.pending.get(result.id);
    if (waiter === undefined) return;
    this.pending.delete(result.id);
    if (result.ok) waiter.resolve();
    else waiter.reject(new WorkerJobError(result.message));
  }

  private failAll(error: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}

function toShared(data: Uint8Array): SharedArrayBuffer {
  if (data.buffer instanceof SharedArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength)
    return data.buffer;
  const shared = new SharedArrayBuffer(data.byteLength);
  new Uint8Array(shared).set(data);
  return shared;
}

function encodeShared(keys: readonly (string | Uint8Array)[]): { data: Uint8Array; spans: Uint32Array } {
  const encoder = new TextEncoder();
  const parts = keys.map((key, i) =>
    typeof key === "string" ? encoder.encode(key) : (check.key(`keys[${i}]`, key) as Uint8Array),
  );
  const spans = new Uint32Array(2 * parts.length);
  let bytes = 0;
  parts.forEach((part, i) => {
    spans[2 * i] = bytes;
    bytes += part.length;
    spans[2 * i + 1] = bytes;
  });
  const data = new Uint8Array(new SharedArrayBuffer(bytes));
  parts.forEach((part, i) => data.set(part, spans[2 * i]));
  return { data, spans };
}
