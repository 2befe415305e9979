// The demo's Web Worker: all crawlsieve work happens here, chunk by chunk, with progress messages,
// so the page stays responsive. Uses the browser entry (the .wasm is fetched beside it). Exact and
// Bloom dedup go through LineDeduplicator (the command line's line engine); "remember across
// visits" passes the kept lines through the browser seen-set (OPFS, opened right here: a dedicated
// worker uses its sync access handle directly); near-duplicates through MinHash, as `near-dups`.
import * as cs from "../../build/js/index.browser.js";

const ready = cs.init();
const CHUNK = 1 << 20;
const BATCH = 65_536;
/** The seen-set that remembers lines across visits (opened on first use). */
const MEMORY = "crawlsieve-demo";
let memory;

self.onmessage = async ({ data }) => {
  if (data.type === "hello") return;
  try {
    await ready;
    const result = await handlers[data.type](data, (done, total) =>
      self.postMessage({ type: "progress", id: data.id, done, total }),
    );
    self.postMessage({ type: "result", id: data.id, ...result });
  } catch (error) {
    self.postMessage({
      type: "error",
      id: data.id,
      message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  }
};

/** The remembering seen-set, opened once per worker. */
async function remembered() {
  memory ??= cs.openSeenSet({ backend: "browser", name: MEMORY });
  return memory;
}

/** Lines of UTF-8 bytes as strings (a last empty line, after the final newline, dropped). */
function linesOf(bytes) {
  const lines = new TextDecoder().decode(bytes).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const handlers = {
  async dedup({ text, mode, fpRate, remember }, progress) {
    const input = new TextEncoder().encode(text);
    const started = performance.now();
    const dedup = new cs.LineDeduplicator(mode === "approx" ? { approx: true, fpRate, inputBytes: input.length } : {});
    const parts = [];
    for (let at = 0; at < input.length; at += CHUNK) {
      parts.push(dedup.push(input.subarray(at, at + CHUNK)));
      progress(Math.min(at + CHUNK, input.length), input.length);
    }
    parts.push(dedup.end());
    const { lines, unique } = dedup.stats;
    dedup.dispose();
    let kept = parts.flatMap(linesOf);
    let before = 0;
    if (remember) {
      // Kept only when no earlier visit (or other tab) had the line: each batch is on disk before its answer.
      const seen = await remembered();
      const fresh = [];
      for (let i = 0; i < kept.length; i += BATCH) {
        const batch = kept.slice(i, i + BATCH);
        const flags = await seen.addMany(batch);
        batch.forEach((line, j) => (flags[j] === 1 ? fresh.push(line) : before++));
      }
      kept = fresh;
    }
    return { lines, unique, before, kept, ms: performance.now() - started };
  },

  async forget() {
    const seen = await remembered();
    await seen.clear();
    return { size: await seen.size() };
  },

  async remembered() {
    const seen = await remembered();
    return { size: await seen.size(), storage: seen.storage };
  },

  check({ text, filter }, progress) {
    const loaded = cs.BloomFilter.deserialize(filter);
    const lines = linesOf(new TextEncoder().encode(text));
    let present = 0;
    for (let i = 0; i < lines.length; i += BATCH) {
      for (const flag of loaded.hasMany(lines.slice(i, i + BATCH))) present += flag;
      progress(Math.min(i + BATCH, lines.length), lines.length);
    }
    return { lines: lines.length, present, keys: loaded.count };
  },

  bench({ count }, progress) {
    // The same URLs the browser test gives Node: 1e6 lines, every fourth a repeat.
    const input = new TextEncoder().encode(benchText(count));
    const dedup = new cs.LineDeduplicator();
    const started = performance.now();
    for (let at = 0; at < input.length; at += CHUNK) {
      dedup.push(input.subarray(at, at + CHUNK));
      progress(Math.min(at + CHUNK, input.length), input.length);
    }
    dedup.end();
    const ms = performance.now() - started;
    const { unique } = dedup.stats;
    dedup.dispose();
    return { count, unique, ms };
  },

  near({ docs, threshold }, progress) {
    const index = new cs.MinHashIndex({ threshold });
    index.addMany(
      docs.map((_, i) => i),
      docs.map((d) => d.text),
    );
    progress(docs.length, docs.length);
    const groups = cs
      .groupPairs(index.pairs())
      .map((g) =>
        g.members.map((m) => ({ name: docs[m.id].name, similarity: m.id === g.representative ? 1 : m.similarity })),
      );
    index.dispose();
    return { groups };
  },
};

/** The benchmark's input: URL number j on line i, j = i less one on every fourth line (the browser test builds the same list). */
function benchText(count) {
  const url = (j) => `https://www.site-${j % 997}.example.com/page/${j}.html?ref=${j % 13}`;
  return Array.from({ length: count }, (_, i) => url(i - (i % 4 === 3 ? 1 : 0))).join("\n") + "\n";
}
