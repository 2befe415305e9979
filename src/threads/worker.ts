// The worker_threads side of BloomWorkerPool: attaches to shared filters by their handle and runs
// add/has jobs over key spans that live in SharedArrayBuffers, writing flags into a shared array.
import { parentPort } from "node:worker_threads";
import { initSync } from "../wasm/node.js";
import { PartitionedBloomFilter, type PartitionedBloomFilterHandle } from "./partitioned-bloom-filter.js";
import type { Job, JobResult } from "./worker-pool.js";

initSync();
const attached = new Map<number, PartitionedBloomFilter>();

parentPort!.on(
  "message",
  (message: { attach?: { id: number; handle: PartitionedBloomFilterHandle }; detach?: number; job?: Job }) => {
    if (message.attach !== undefined) {
      attached.set(message.attach.id, PartitionedBloomFilter.attach(message.attach.handle));
      return;
    }
    if (message.detach !== undefined) {
      attached.get(message.detach)?.dispose();
      attached.delete(message.detach);
      return;
    }
    const job = message.job!;
    let result: JobResult;
    try {
      const filter = attached.get(job.filter);
      if (filter === undefined) throw new Error(`filter ${job.filter} is not attached in this worker`);
      const data = new Uint8Array(job.data);
      const spans = new Uint32Array(job.spans).subarray(2 * job.from, 2 * job.to);
      const flags = job.op === "add" ? filter.addSpans(data, spans) : filter.hasSpans(data, spans);
      new Uint8Array(job.out).set(flags, job.from);
      result = { id: job.id, ok: true };
    } catch (error) {
      result = { id: job.id, ok: false, message: error instanceof Error ? error.message : String(error) };
    }
    parentPort!.postMessage(result);
  },
);
