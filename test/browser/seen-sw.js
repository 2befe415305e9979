// A service worker (what an extension's background is) that adds keys to a browser seen-set on
// request, for test/browser/browser-seen-set.test.ts: service workers cannot start workers nor
// use OPFS sync access handles, so "auto" opens the set in IndexedDB here.
import * as cs from "/build/js/index.browser.js";

const ready = cs.init();

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("message", (event) => {
  const answer = (async () => {
    await ready;
    const seen = await cs.openSeenSet({ backend: "browser", name: event.data.name });
    const flags = [];
    for (const batch of event.data.batches) flags.push(...(await seen.addMany(batch)));
    const out = { flags, storage: seen.storage };
    await seen.close();
    return out;
  })().catch((error) => ({ error: { name: error.name, code: error.code, message: error.message } }));
  event.waitUntil(answer.then((message) => event.source.postMessage({ id: event.data.id, ...message })));
});
