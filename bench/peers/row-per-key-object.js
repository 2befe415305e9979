// The usual way to keep a seen-set in a Durable Object, as idempotency-key libraries do: one
// SQLite row per key (the key as TEXT PRIMARY KEY, plus its time), an INSERT OR IGNORE per key
// whose rowsWritten says whether it was new. Exported beside the example worker, so both run in
// the same workerd; /rows/add?set=NAME sends a JSON array of keys to the object NAME.
import example, { SeenSetDurableObject } from "../../examples/durable-object/worker.js";

export { SeenSetDurableObject };

/** One row per key. */
export class RowPerKeyObject {
  constructor(ctx) {
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS seen (key TEXT PRIMARY KEY, created INTEGER NOT NULL)");
  }

  async fetch(request) {
    const keys = await request.json();
    const now = Date.now();
    const out = new Uint8Array(keys.length);
    for (let i = 0; i < keys.length; i++)
      out[i] =
        this.sql.exec("INSERT OR IGNORE INTO seen (key, created) VALUES (?, ?)", keys[i], now).rowsWritten > 0 ? 1 : 0;
    return new Response(out);
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== "/rows/add") return example.fetch(request, env);
    const stub = env.RowPerKeyObject.get(env.RowPerKeyObject.idFromName(url.searchParams.get("set") ?? "urls"));
    const answer = await stub.fetch("https://rows/add", { method: "POST", body: await request.text() });
    return Response.json([...new Uint8Array(await answer.arrayBuffer())]);
  },
};
