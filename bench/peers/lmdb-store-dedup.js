// The previous `dedup --store DIR` (before the disk seen-set): lines in batches of 4,096, each
// batch decided and committed by StoreDeduplicator over LMDB (a counting filter in front, one
// durable write transaction a batch), then printed. Kept to measure the disk seen-set against.
// usage: node bench/peers/lmdb-store-dedup.js DIR FILE
import { createReadStream } from "node:fs";
import { initSync, openLmdbStore, StoreDeduplicator } from "../../build/js/index.node.js";

initSync();
const [dir, file] = process.argv.slice(2);
const dedup = new StoreDeduplicator(openLmdbStore(dir), { items: 1_000_000, fpRate: 0.01 });
let carry = Buffer.alloc(0);
const out = [];
const flushBatch = (data, starts, ends) => {
  const spans = new Uint32Array(2 * starts.length);
  starts.forEach((s, i) => ((spans[2 * i] = s), (spans[2 * i + 1] = ends[i])));
  const { isNew } = dedup.checkSpans(data, spans);
  for (let i = 0; i < starts.length; i++) if (isNew[i]) out.push(data.subarray(starts[i], ends[i] + 1));
  process.stdout.write(Buffer.concat(out));
  out.length = 0;
};
for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
  const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
  let starts = [];
  let ends = [];
  let start = 0;
  for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, start)) {
    starts.push(start);
    ends.push(nl);
    start = nl + 1;
    if (starts.length === 4096) {
      flushBatch(data, starts, ends);
      starts = [];
      ends = [];
    }
  }
  if (starts.length > 0) flushBatch(data, starts, ends);
  carry = data.subarray(start);
}
dedup.close();
