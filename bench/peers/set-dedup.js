// Peer for bench/cli.bench.js: what a Node user writes first, a Set of line strings. Lines are read
// as latin1 so every byte round-trips; the key leaves out a final "\r", as crawlsieve's does.
// usage: node bench/peers/set-dedup.js FILE > out
import { createReadStream } from "node:fs";
import { once } from "node:events";

const seen = new Set();
let carry = "";
const keep = (line) => {
  const key = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (seen.has(key)) return "";
  seen.add(key);
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
