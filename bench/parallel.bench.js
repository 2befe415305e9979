// Parallel insert into the shared-memory PartitionedBloomFilter: one thread (the plain
// BloomFilter and the shared filter driven from the main thread) against a BloomWorkerPool of 1
// and 2 workers, on N URL keys given as spans of one SharedArrayBuffer (how a crawler holding
// lines in a buffer would hand them over). The machine has 2 cores.
import { BloomFilter, BloomWorkerPool, initSync, PartitionedBloomFilter } from "../build/js/index.node.js";
import { millions, table, urlKeys } from "./common.js";

initSync();

function sharedLines(keys) {
  const bytes = keys.reduce((sum, key) => sum + key.length + 1, 0);
  const data = new Uint8Array(new SharedArrayBuffer(bytes));
  const spans = new Uint32Array(2 * keys.length);
  const encoder = new TextEncoder();
  const scratch = new Uint8Array(4096);
  let at = 0;
  keys.forEach((key, i) => {
    const { written } = encoder.encodeInto(key, scratch);
    data.set(scratch.subarray(0, written), at);
    spans[2 * i] = at;
    spans[2 * i + 1] = at + written;
    at += written + 1;
  });
  return { data, spans };
}

/** Median seconds of `runs` runs of fn (each on a fresh filter from make()). */
async function time(make, fn, runs = 3) {
  const times = [];
  for (let r = 0; r < runs; r++) {
    const filter = make();
    const started = performance.now();
    await fn(filter);
    times.push((performance.now() - started) / 1000);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

/** Insert and query throughput at n keys. */
export async function parallelSuite(n = 10_000_000) {
  const { data, spans } = sharedLines(urlKeys(n, "parallel"));
  const plan = { items: n, fpRate: 0.01 };
  const rows = [];
  const one = await time(
    () => new BloomFilter(plan),
    (f) => f.addSpans(data, spans),
  );
  const sharedMain = await time(
    () => new PartitionedBloomFilter(plan),
    (f) => f.addSpans(data, spans),
  );
  rows.push(["BloomFilter.addSpans, main thread", millions(n / one), "1.00"]);
  rows.push([
    "PartitionedBloomFilter.addSpans, main thread (atomic kernel)",
    millions(n / sharedMain),
    (one / sharedMain).toFixed(2),
  ]);
  const queries = [];
  for (const workers of [1, 2]) {
    const pool = await BloomWorkerPool.start(workers);
    await pool.addSpans(new PartitionedBloomFilter({ items: 1000, fpRate: 0.01 }), data, spans.subarray(0, 2000));
    const seconds = await time(
      () => new PartitionedBloomFilter(plan),
      (f) => pool.addSpans(f, data, spans),
    );
    rows.push([
      `BloomWorkerPool.addSpans, ${workers} worker${workers > 1 ? "s" : ""}`,
      millions(n / seconds),
      (one / seconds).toFixed(2),
    ]);
    const filled = new PartitionedBloomFilter(plan);
    filled.addSpans(data, spans);
    const hasMain = await time(
      () => filled,
      (f) => f.hasSpans(data, spans),
    );
    const hasPool = await time(
      () => filled,
      (f) => pool.hasSpans(f, data, spans),
    );
    queries.push([
      `hasSpans, ${workers} worker${workers > 1 ? "s" : ""} vs main thread`,
      millions(n / hasPool),
      (hasMain / hasPool).toFixed(2),
    ]);
    await pool.close();
  }
  return [
    `### Parallel insert, ${millions(n)} M keys, p = 0.01 (${(new BloomFilter(plan).byteLength / 2 ** 20).toFixed(1)} MiB of bits)\n`,
    table(["", "M keys/s", "speed-up vs one thread"], [...rows, ...queries]),
    "",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`)
  console.log(await parallelSuite(Number(process.env.PARALLEL_KEYS ?? 1e7)));
