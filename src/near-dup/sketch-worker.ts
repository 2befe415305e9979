// The worker_threads side of SketchPool: sketches one slice of a batch's texts with its own
// WebAssembly instance and sends the values and band keys back (their buffers transferred).
import { parentPort } from "node:worker_threads";
import { initSync } from "../wasm/node.js";
import { type SketchParams, sketchMany } from "./minhash.js";

initSync();

parentPort!.on("message", (job: { id: number; texts: string[]; params: SketchParams }) => {
  try {
    const { values, keys } = sketchMany(job.texts, job.params);
    parentPort!.postMessage({ id: job.id, ok: true, values, keys }, [
      values.buffer as ArrayBuffer,
      keys.buffer as ArrayBuffer,
    ]);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
