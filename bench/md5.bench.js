// MD5 of URL strings and of a 64 MiB buffer: crawlsieve against node:crypto (crypto.hash and
// createHash), hash-wasm and spark-md5, all producing binary digests, in one process.
import { createHash, hash as cryptoHash } from "node:crypto";
import { createMD5 } from "hash-wasm";
import SparkMD5 from "spark-md5";
import { initSync, md5, md5Many } from "../build/js/index.node.js";
import { keysPerSecond, millions, table, urlKeys } from "./common.js";

initSync();

/** Runs the suite; returns markdown. */
export async function md5Suite() {
  const n = 1_000_000;
  const keys = urlKeys(n, "md5");
  const hasher = await createMD5();
  const perKey = await keysPerSecond(
    `md5 ${n}`,
    { count: n },
    [
      { name: "crawlsieve md5Many", fn: () => md5Many(keys) },
      {
        name: "crawlsieve md5",
        fn: () => {
          for (let i = 0; i < n; i++) md5(keys[i]);
        },
      },
      {
        name: "crypto.hash",
        fn: () => {
          for (let i = 0; i < n; i++) cryptoHash("md5", keys[i], "buffer");
        },
      },
      {
        name: "createHash",
        fn: () => {
          for (let i = 0; i < n; i++) createHash("md5").update(keys[i]).digest();
        },
      },
      {
        name: "hash-wasm",
        fn: () => {
          for (let i = 0; i < n; i++) hasher.init().update(keys[i]).digest("binary");
        },
      },
      {
        name: "spark-md5",
        fn: () => {
          for (let i = 0; i < n; i++) SparkMD5.hash(keys[i], true);
        },
      },
    ],
    { iterations: 5 },
  );

  const buffer = new Uint8Array(64 * 2 ** 20);
  for (let i = 0; i < buffer.length; i++) buffer[i] = (i * 2654435761) >>> 24;
  const mb = buffer.length / 2 ** 20;
  const bulk = await keysPerSecond(
    "md5 64 MiB",
    { count: mb },
    [
      { name: "crawlsieve md5", fn: () => md5(buffer) },
      { name: "crypto.hash", fn: () => cryptoHash("md5", buffer, "buffer") },
      { name: "createHash", fn: () => createHash("md5").update(buffer).digest() },
      { name: "hash-wasm", fn: () => hasher.init().update(buffer).digest("binary") },
      { name: "spark-md5", fn: () => SparkMD5.ArrayBuffer.hash(buffer.buffer, true) },
    ],
    { iterations: 5 },
  );

  const ours = perKey.get("crawlsieve md5Many");
  const rows = [...perKey].map(([name, rate]) => [name, millions(rate), (ours / rate).toFixed(2)]);
  const oursBulk = bulk.get("crawlsieve md5");
  const bulkRows = [...bulk].map(([name, rate]) => [name, rate.toFixed(0), (oursBulk / rate).toFixed(2)]);
  return [
    `### MD5 of ${n.toExponential(0)} URL strings (binary digests)`,
    "",
    table(["implementation", "M hashes/s", "crawlsieve md5Many / this"], rows),
    "",
    "### MD5 of a 64 MiB buffer",
    "",
    table(["implementation", "MiB/s", "crawlsieve / this"], bulkRows),
    "",
  ].join("\n");
}
