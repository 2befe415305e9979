// The demo's Web Worker: all crawlsieve work happens here, batch by batch, with progress
// messages, so the page stays responsive. Uses the browser entry (the .wasm is fetched beside it).
import * as cs from "../../build/js/index.browser.js";

const ready = cs.init();
const BATCH = 65_536;

self.onmessage = async ({ data }) => {
  if (data.type === "hello") return;
  try {
    await ready;
    const result = await handlers[data.type](data, (done, total) => self.postMessage({ type: "progress", id: data.id, done, total }));
    self.postMessage({ type: "result", id: data.id, ...result.message }, result.transfer ?? []);
  } catch (error) {
    self.postMessage({ type: "error", id: data.id, message: error instanceof Error ? error.message : String(error) });
  }
};

/** Lines as `dedup` compares them: split on \n, a trailing \r dropped, a last empty line ignored. */
function linesOf(text) {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

const handlers = {
  dedup({ text, mode, fpRate, items }, progress) {
    const lines = linesOf(text);
    const started = performance.now();
    const set = mode === "approx" ? new cs.BloomFilter({ items: Math.max(items, 1), fpRate }) : new cs.Deduplicator({ items: Math.max(items, 1) });
    let unique = 0;
    const duplicates = [];
    for (let i = 0; i < lines.length; i += BATCH) {
      const batch = lines.slice(i, i + BATCH);
      const fresh = mode === "approx" ? set.addMany(batch) : set.checkMany(batch).isNew;
      fresh.forEach((flag, j) => (flag === 1 ? unique++ : duplicates.length < 100 && duplicates.push(batch[j])));
      progress(Math.min(i + BATCH, lines.length), lines.length);
    }
    const ms = performance.now() - started;
    const filter = mode === "approx" ? set.serialize() : undefined;
    return { message: { lines: lines.length, unique, duplicates, ms, filter }, transfer: filter ? [filter.buffer] : [] };
  },

  check({ text, filter }, progress) {
    const loaded = cs.BloomFilter.deserialize(filter);
    const lines = linesOf(text);
    let present = 0;
    for (let i = 0; i < lines.length; i += BATCH) {
      for (const flag of loaded.hasMany(lines.slice(i, i + BATCH))) present += flag;
      progress(Math.min(i + BATCH, lines.length), lines.length);
    }
    return { message: { lines: lines.length, present, keys: loaded.count } };
  },

  bench({ count }, progress) {
    // The same URLs the browser test gives Node: 1e6 lines, every fourth a repeat.
    const urls = Array.from({ length: count }, (_, i) => benchUrl(i - (i % 4 === 3 ? 1 : 0)));
    const dedup = new cs.Deduplicator({ items: count });
    const started = performance.now();
    let unique = 0;
    for (let i = 0; i < urls.length; i += BATCH) {
      for (const flag of dedup.checkMany(urls.slice(i, i + BATCH)).isNew) unique += flag;
      progress(Math.min(i + BATCH, count), count);
    }
    return { message: { count, unique, ms: performance.now() - started } };
  },

  near({ docs, maxDistance }, progress) {
    const fps = cs.simhashMany(docs.map((d) => d.text));
    progress(docs.length, docs.length);
    const index = new cs.NearDupIndex({ maxDistance });
    const usable = docs.map((_, i) => i).filter((i) => fps[i] !== 0n);
    index.addMany(usable, usable.map((i) => fps[i]));
    const out = cs.nearDupGroups(index.pairs()).map((g) => g.map((i) => ({ name: docs[i].name, distance: cs.hammingDistance(fps[i], fps[g[0]]) })));
    return { message: { groups: out } };
  },
};

/** The benchmark's URL number j (the browser test builds the same list). */
function benchUrl(j) {
  return `https://www.site-${j % 997}.example.com/page/${j}.html?ref=${j % 13}`;
}
