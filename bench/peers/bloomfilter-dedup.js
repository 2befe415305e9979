// Peer for bench/cli.bench.js: the `bloomfilter` package (Jason Davies) as a line filter, sized
// for the given distinct count at the given FP rate with m = -n ln p / (ln 2)^2, k = round(m/n ln 2).
// usage: node bench/peers/bloomfilter-dedup.js FILE DISTINCT FP_RATE > out
import { createReadStream } from "node:fs";
import { once } from "node:events";
import * as bloomfilter from "bloomfilter";

const n = Number(process.argv[3]);
const p = Number(process.argv[4] ?? 0.001);
const m = Math.ceil((-n * Math.log(p)) / Math.LN2 ** 2 / 32) * 32;
const filter = new bloomfilter.BloomFilter(m, Math.max(1, Math.round((m / n) * Math.LN2)));
let carry = "";
const keep = (line) => {
  const key = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (filter.test(key)) return "";
  filter.add(key);
  return line + "\n";
};
for await (const chunk of createReadStream(process.argv[2], { encoding: "latin1", highWaterMark: 1 << 20 })) {
  const lines = (carry + chunk).split("\n");
  carry = lines.pop();
  let out = "";
  for (const line of lines) out += keep(line);
  if (!process.stdout.write(out, "latin1")) await once(process.stdout, "drain");
}
if (carry !== "") process.stdout.write(keep(carry), "latin1");
