// One crawler process for the shared MinHash index tests: opens the index on a Redis Cluster,
// adds the documents it reads from stdin ({ ids, texts, batch }) in batches, and prints its
// answers as a JSON array. Usage: node minhash-worker.mjs NODE_URLS_JSON NAME
import { createCluster } from "redis";
import { initSync } from "../../build/js/index.node.js";
import { fromNodeRedis, RedisMinHashIndex } from "../../build/js/redis/index.js";

initSync();
const [urls, name] = process.argv.slice(2);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { ids, texts, batch } = JSON.parse(input);
const client = createCluster({ rootNodes: JSON.parse(urls).map((url) => ({ url })), defaults: { disableOfflineQueue: true, socket: { reconnectStrategy: false } } });
await client.connect();
const index = await RedisMinHashIndex.open(fromNodeRedis(client), { name, threshold: 0.8 });
const answers = [];
for (let i = 0; i < ids.length; i += batch) answers.push(...(await index.addMany(ids.slice(i, i + batch), texts.slice(i, i + batch))));
process.stdout.write(JSON.stringify(answers));
index.dispose();
await client.close();
