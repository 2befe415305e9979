// The thread of a background merge (background-merge.ts): writes the compaction of the store's
// file as of a snapshot aside, and builds the new sorted part's filter and block index from each
// record as it is written (so nothing reads the part again) in the shared memory the set hands it
// (or only the index, when the set keeps its filter: MergeJob.keep),
// copies on the records appended since as far as the set's process tells it they are whole, saves
// the filter and index beside the part (part-index.ts), then hands it all back on its port.
import { rmSync } from "node:fs";
import { type MessagePort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { Arena } from "../../wasm/arena.js";
import { initSync } from "../../wasm/node.js";
import { instantiateSharedKernels } from "../../wasm/shared-module.js";
import type { MergeJob, MergeOutcome } from "./background-merge.js";
import { ColdIndex } from "./cold-keys.js";
import { catchUpAside, epochOf, LOG_HEADER, writeSnapshotAside } from "./file-log.js";

initSync();
const { job, port } = workerData as { job: MergeJob; port: MessagePort };
const outcome = merge(job);
const { index } = outcome as { index?: { firsts: Uint32Array; sums: BigUint64Array } };
// The filter's shared memory goes as it is; the index's arrays are moved, not copied.
port.postMessage(outcome, index === undefined ? [] : ([index.firsts.buffer, index.sums.buffer] as ArrayBuffer[]));
port.close();

function merge(job: MergeJob): MergeOutcome {
  try {
    // Sized for every fingerprint the snapshot may hold (16 bytes each at least): the live count is known only at the end.
    // The filter is built in the shared memory the set gave (its last part's, no longer used, or new) and used there after;
    // or the set's own is kept, and this thread runs no kernel over that memory (the set's thread does).
    const most = Math.max(1, Math.floor((job.snapshot.from - LOG_HEADER) / 16));
    const index =
      job.keep === undefined
        ? new ColdIndex(new Arena(instantiateSharedKernels(job.memory)), most, job.budget)
        : ColdIndex.indexOnly(job.memory, job.keep, most);
    // Groups of partitions in an eighth of the budget (8 MiB at least, one partition whatever it
    // needs): the thread's memory comes on top of the set's. Past a few passes' worth the groups
    // are read from partition files written in one pass, so a smaller room makes more groups,
    // not more reads of the file (a quarter: the same fill rate at 1e8 keys under 128 MiB, 8 MiB more).
    const room = Math.min(Math.max(job.budget / 8, 8 << 20), 1 << 30);
    const compacted = writeSnapshotAside(
      job.snapshot,
      new Arena(),
      job.aside,
      (fingerprints) => index.add(fingerprints),
      room,
    );
    const stale = { ok: false, stale: true, message: `${job.snapshot.path} was replaced` } as const;
    if (compacted === undefined) return stale;
    // The records batches appended meanwhile, as far as the set's process says they are whole: what the install copies under the lock is only what came after.
    let safe = job.snapshot.from;
    const copiedTo = catchUpAside(job.snapshot, compacted, () => {
      for (let got = receiveMessageOnPort(port); got !== undefined; got = receiveMessageOnPort(port))
        safe = Math.max(safe, (got.message as { safe: number }).safe);
      return safe;
    });
    if (copiedTo === undefined) return stale;
    // Saved beside the part, so the next open past the budget reads it instead of the part; without it (a full disk) that open reads the part.
    try {
      index.save(job.indexAside, epochOf(compacted.aside));
    } catch {
      rmSync(job.indexAside, { force: true });
    }
    if (job.gate !== undefined) hold(new Int32Array(job.gate));
    return { ok: true, compacted, copiedTo, index: index.parts() };
  } catch (error) {
    return { ok: false, stale: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** Tests only: tells the gate the merge is written, and waits until the test lets it hand the result back. */
function hold(gate: Int32Array): void {
  Atomics.store(gate, 0, 1);
  Atomics.notify(gate, 0);
  Atomics.wait(gate, 1, 0);
}
