// A Worker whose seen-set lives in Durable Objects: POST a JSON array of URLs to
// /add?set=NAME&shards=N and get back 1 for each URL not seen before (by any client, ever),
// 0 for the others. /has, /size and /clear take the same query; &window=7d makes keys expire.
import { durableSeenSet, SeenSetDurableObject } from "crawlsieve/durable-object";

// The class is exported under the name the configuration binds (className).
export { SeenSetDurableObject };

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      const seen = durableSeenSet(env.SEEN, {
        name: url.searchParams.get("set") ?? "urls",
        shards: Number(url.searchParams.get("shards") ?? 1),
        window: url.searchParams.get("window") ?? undefined,
      });
      switch (url.pathname) {
        case "/add":
          return Response.json([...(await seen.addMany(await request.json()))]);
        case "/has":
          return Response.json([...(await seen.hasMany(await request.json()))]);
        case "/size":
          return Response.json(await seen.size());
        case "/clear":
          await seen.clear();
          return Response.json(true);
        default:
          return new Response("not found", { status: 404 });
      }
    } catch (error) {
      return Response.json({ name: error.name, code: error.code, message: error.message }, { status: 409 });
    }
  },
};
