// RedisMinHashIndex on many copies of one page (issue 48 H4): a band bucket keeps representatives
// only, so claims stay O(1) in the copies stored and no script blocks the shared Redis. Script
// time is read from Redis itself (SLOWLOG at 10 ms), never from the client's clock.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FormatError } from "../build/js/index.node.js";
import { fromNodeRedis, RedisMinHashIndex, type RedisCommander } from "../build/js/redis/index.js";
import { ready, rng } from "./helpers.js";
import { startRedis, type RedisServer } from "./support/redis-server.js";

let server: RedisServer;
let client: ReturnType<typeof createClient>;
let redis: RedisCommander;

beforeAll(async () => {
  await ready();
  server = await startRedis(["--slowlog-log-slower-than", "10000", "--slowlog-max-len", "1024"]);
  client = createClient({ url: server.url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
  client.on("error", () => undefined);
  await client.connect();
  redis = fromNodeRedis(client);
}, 60_000);
afterAll(async () => {
  await client?.quit().catch(() => undefined);
  await server?.stop();
});

/** SLOWLOG entries (over 10 ms of server time) of Lua calls: [id, time, microseconds, argv...]. */
async function slowScripts(): Promise<string[]> {
  const entries = (await redis.send(["SLOWLOG", "GET", "-1"])) as unknown[][];
  return entries
    .filter((entry) => /^(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro)$/i.test(String((entry[3] as unknown[])[0])))
    .map(
      (entry) =>
        `${String((entry[3] as unknown[])[0])} ${Number(entry[2])} us, ${(entry[3] as unknown[]).length} arguments`,
    );
}

describe("RedisMinHashIndex on copies of one page", () => {
  it("20,000 copies in batches of 100: every copy reports the first, each band holds one id, and no Lua call runs 10 ms (SLOWLOG)", async () => {
    const next = rng(48);
    const page = Array.from({ length: 120 }, () => Math.floor(next() * 1e9).toString(36)).join(" ");
    const index = await RedisMinHashIndex.open(redis, { name: "mh-copies", threshold: 0.8 });
    await redis.send(["SLOWLOG", "RESET"]);
    const copies = 20_000;
    const batch = 100;
    for (let start = 0; start < copies; start += batch) {
      const ids = Array.from({ length: batch }, (_, j) => `copy-${start + j}`);
      const answers = await index.addMany(
        ids,
        ids.map(() => page),
      );
      // The reference: every text is the same page, so its Jaccard similarity to the first is 1.
      expect(answers, `batch at ${start}`).toEqual(
        ids.map((id) => (id === "copy-0" ? null : { id: "copy-0", similarity: 1 })),
      );
      expect(await slowScripts(), `after ${start + batch} copies`).toEqual([]);
    }
    // One representative per band: the first copy's 8-byte id hash, whatever the copies stored.
    const values = (await redis.send(["HVALS", "cs:{mh-copies}:mh:b:0"])) as Uint8Array[];
    expect(values.length).toBe(index.params.bands);
    expect(values.map((v) => v.length)).toEqual(values.map(() => 8));
    index.dispose();
  }, 600_000);

  it("an index recorded in the version-1 layout (every copy in its bands) is refused with a typed error, not misread", async () => {
    await redis.send([
      "SET",
      "cs:{mh-old}:mh:meta",
      JSON.stringify({
        kind: "minhash",
        threshold: 0.8,
        shingle: 3,
        k: 512,
        bands: 13,
        rows: 3,
        layout: "tagged",
        shards: 1,
      }),
    ]);
    const opening = RedisMinHashIndex.open(redis, { name: "mh-old", threshold: 0.8 });
    await expect(opening).rejects.toThrow(FormatError);
    await expect(RedisMinHashIndex.open(redis, { name: "mh-old", threshold: 0.8 })).rejects.toThrow(
      /cs:\{mh-old\}:mh:meta has description version 1; this crawlsieve reads version 2/,
    );
    await expect(RedisMinHashIndex.open(redis, { name: "mh-old", threshold: 0.8 })).rejects.toMatchObject({
      code: "ERR_VERSION",
    });
  });
});
