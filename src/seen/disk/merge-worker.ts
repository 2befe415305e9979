// The thread of a background merge (background-merge.ts): writes the compaction of the store's
// file as of a snapshot aside, and builds the new sorted part's filter and block index from each
// record as it is written (so nothing reads the part again), then hands both back on its port.
import { type MessagePort, workerData } from "node:worker_threads";
import { Arena } from "../../wasm/arena.js";
import { initSync } from "../../wasm/node.js";
import type { MergeJob, MergeOutcome } from "./background-merge.js";
import { ColdIndex } from "./cold-keys.js";
import { LOG_HEADER, writeSnapshotAside } from "./file-log.js";

initSync();
const { job, port } = workerData as { job: MergeJob; port: MessagePort };
const outcome = merge(job);
const { index } = outcome as { index?: { bits: { bits: Uint8Array }; firsts: Uint32Array; sums: BigUint64Array } };
port.postMessage(
  outcome,
  index === undefined ? [] : ([index.bits.bits.buffer, index.firsts.buffer, index.sums.buffer] as ArrayBuffer[]),
);
port.close();

function merge(job: MergeJob): MergeOutcome {
  try {
    // Sized for every fingerprint the snapshot may hold (16 bytes each at least): the live count is known only at the end.
    const index = new ColdIndex(
      new Arena(),
      Math.max(1, Math.floor((job.snapshot.from - LOG_HEADER) / 16)),
      job.budget,
    );
    // Groups of partitions in a quarter of the budget (8 MiB at least, one partition whatever it needs): the thread's memory comes on top of the set's.
    const room = Math.min(Math.max(job.budget / 4, 8 << 20), 1 << 30);
    const compacted = writeSnapshotAside(
      job.snapshot,
      new Arena(),
      job.aside,
      (fingerprints) => index.add(fingerprints),
      room,
    );
    if (compacted === undefined) return { ok: false, stale: true, message: `${job.snapshot.path} was replaced` };
    if (job.gate !== undefined) hold(new Int32Array(job.gate));
    return { ok: true, compacted, index: index.parts() };
  } catch (error) {
    const { message, code } = error as NodeJS.ErrnoException;
    return { ok: false, stale: false, message: String(message ?? error), code };
  }
}

/** Tests only: tells the gate the merge is written, and waits until the test lets it hand the result back. */
function hold(gate: Int32Array): void {
  Atomics.store(gate, 0, 1);
  Atomics.notify(gate, 0);
  Atomics.wait(gate, 1, 0);
}
