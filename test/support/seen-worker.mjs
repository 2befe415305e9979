// A separate process adding keys to a shared seen-set: argv[2] is the spec as JSON (for redis,
// { backend: "redis", url, name, ... }), argv[3] the key count, argv[4] a seed for the order.
// Prints the keys it saw as new, one JSON array.
import { createClient } from "redis";
import { init, openSeenSet } from "../../build/js/index.node.js";

await init();
const spec = JSON.parse(process.argv[2]);
const count = Number(process.argv[3]);
let seed = Number(process.argv[4]);
let client;
if (spec.backend === "redis") {
  client = createClient({ url: spec.url });
  await client.connect();
  spec.client = client;
}
const seen = await openSeenSet(spec);
const keys = Array.from({ length: count }, (_, i) => `https://fleet.example/page/${i}`);
// A seeded shuffle, so the processes meet the keys in different orders.
for (let i = keys.length - 1; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  const j = seed % (i + 1);
  [keys[i], keys[j]] = [keys[j], keys[i]];
}
const fresh = [];
for (let i = 0; i < keys.length; i += 250) {
  const batch = keys.slice(i, i + 250);
  const flags = await seen.addMany(batch);
  batch.forEach((key, j) => flags[j] === 1 && fresh.push(key));
}
await seen.close();
if (client !== undefined) await client.quit();
process.stdout.write(JSON.stringify(fresh));
