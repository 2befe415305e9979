// An edge worker that tells a crawler whether it has seen a URL: a Bloom filter made in Node
// (build.js serializes it from the sample's links) is loaded from a data module, and URLs seen
// since the isolate started are added to it. Uses crawlsieve's workerd entry: the .wasm is
// imported as a module, so nothing is compiled at run time.
//   GET /check?url=U  ->  {"url": U, "seen": true|false}   (seen: in the filter; adds it otherwise)
//   GET /stats        ->  {"keys": N, "bits": M, "hashes": K}
import { BloomFilter, canonicalizeUrl, initSync } from "crawlsieve";
import filterBytes from "./filter.bin";

initSync();
const filter = BloomFilter.deserialize(new Uint8Array(filterBytes));

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/stats")
      return Response.json({ keys: filter.count, bits: filter.bits, hashes: filter.hashes });
    if (url.pathname !== "/check") return new Response("not found", { status: 404 });
    const target = url.searchParams.get("url");
    if (target === null || target === "") return Response.json({ error: "give ?url=" }, { status: 400 });
    const key = canonicalizeUrl(target);
    return Response.json({ url: key, seen: !filter.add(key) });
  },

  // `workerd test` runs this: the known links are seen, a new one is not (then it is).
  async test() {
    const ask = async (u) =>
      (await (await this.fetch(new Request(`http://worker/check?url=${encodeURIComponent(u)}`))).json()).seen;
    const known = "https://nodejs.org/docs/v20.20.2/api/fs.html#file-system";
    if ((await ask(known)) !== true) throw new Error(`${known} should be in the filter made by build.js`);
    const fresh = `https://example.com/fresh/${Date.now()}`;
    if ((await ask(fresh)) !== false) throw new Error("a fresh URL was reported seen");
    if ((await ask(fresh)) !== true) throw new Error("a URL checked once was not remembered");
    const stats = await (await this.fetch(new Request("http://worker/stats"))).json();
    if (stats.keys < 2_000) throw new Error(`filter holds ${stats.keys} keys`);
    console.log(`worker ok: ${JSON.stringify(stats)}`);
  },
};
