// The worker of test/edge/durable-window.test.ts: every call of durableWindowSet as a POST of JSON
// ({ name, shards, ttl, ttlMap, semantics, now?, keys, at, pattern }), the objects' clock set by
// POST /clock ({ t }) (one isolate holds the worker and its objects in local workerd), a plain
// set on /plain, and raw calls to shard 0 on /raw (a head of the test's own, bad ones included).
import { durableSeenSet, durableWindowSet, SeenSetDurableObject as Base } from "crawlsieve/durable-object";

let clock = 0;

export class SeenSetDurableObject extends Base {
  now() {
    return clock;
  }
}

/** A window call's body as the protocol lays it out (the test's own encoder, not the package's). */
function rawBody(head, keys = []) {
  const json = new TextEncoder().encode(JSON.stringify(head));
  const encoded = keys.map((k) => new TextEncoder().encode(k));
  const out = new Uint8Array(8 + json.length + encoded.reduce((n, k) => n + 4 + k.length, 0));
  const view = new DataView(out.buffer);
  view.setUint32(0, json.length, true);
  out.set(json, 4);
  let at = 4 + json.length;
  view.setUint32(at, encoded.length, true);
  at += 4;
  for (const k of encoded) {
    view.setUint32(at, k.length, true);
    out.set(k, at + 4);
    at += 4 + k.length;
  }
  return out;
}

export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    const q = await request.json().catch(() => ({}));
    try {
      if (path === "/clock") {
        clock = q.t;
        return Response.json(true);
      }
      if (path === "/plain") {
        const plain = durableSeenSet(env.SEEN, { name: q.name, shards: q.shards });
        return Response.json([...(await plain.addMany(q.keys))]);
      }
      if (path === "/raw") {
        const responses = [];
        for (let shard = 0; shard < q.shards; shard++) {
          const stub = env.SEEN.get(env.SEEN.idFromName(`${q.name}/${shard}`));
          const response = await stub.fetch(`https://crawlsieve/window/${q.op}`, {
            method: "POST",
            headers: { "x-crawlsieve-shards": String(q.shards), "x-crawlsieve-shard": String(shard) },
            body: rawBody(q.head, q.keys),
          });
          const json = (response.headers.get("content-type") ?? "").includes("json");
          responses.push({
            status: response.status,
            body: json ? await response.json() : [...new Uint8Array(await response.arrayBuffer())],
          });
        }
        return Response.json(responses);
      }
      const set = durableWindowSet(env.SEEN, {
        name: q.name,
        shards: q.shards,
        ttl: q.ttl,
        ttlMap: q.ttlMap,
        semantics: q.semantics,
        ...(q.now === undefined ? {} : { now: () => q.now }),
      });
      switch (path) {
        case "/add":
          return Response.json([...(await set.addMany(q.keys, q.at))]);
        case "/has":
          return Response.json([...(await set.hasMany(q.keys, q.at))]);
        case "/due":
          return Response.json([...(await set.dueMany(q.keys, q.at))]);
        case "/remove":
          return Response.json([...(await set.removeMany(q.keys))]);
        case "/seen-at":
          return Response.json(Array.from(await set.seenAtMany(q.keys), (t) => (Number.isNaN(t) ? null : t)));
        case "/forget-host":
          await set.forgetHost(q.pattern, q.at);
          return Response.json(true);
        case "/forget-prefix":
          await set.forgetPrefix(q.pattern, q.at);
          return Response.json(true);
        case "/size":
          return Response.json(await set.size());
        case "/clear":
          await set.clear();
          return Response.json(true);
        default:
          return new Response("not found", { status: 404 });
      }
    } catch (error) {
      return Response.json(
        { name: error.name, code: error.code, message: error.message, argument: error.argument },
        { status: 409 },
      );
    }
  },
};
