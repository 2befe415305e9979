// One contender of bench/seen-scale.js in its own process: adds `count` distinct URL keys
// (https://www.site-N.example.com/p/I.html, 40-50 bytes), a million a call, to an exact set held
// in memory, and prints JSON: how many it took, the seconds the adds took (key making included),
// and for crawlsieve its WebAssembly memories and bytes per key; a contender that stops says where
// and why. crawlsieve takes each million as one buffer of lines and their spans (addSpans: how a
// reader of a file or a socket holds them); a JavaScript Set takes strings, split from one text.
// usage: node bench/peers/seen-scale-run.js crawlsieve|set COUNT [BUILD_DIR]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [contender, countText, buildDir = "build"] = process.argv.slice(2);
const count = Number(countText);
const CALL = 1_000_000;

/** The keys start .. start + n - 1 as one buffer of lines and their [from, to) spans. */
function lines(start, n) {
  const text = Buffer.allocUnsafe(n * 64);
  const spans = new Uint32Array(2 * n);
  let at = 0;
  for (let i = start; i < start + n; i++) {
    spans[2 * (i - start)] = at;
    at += text.latin1Write(`https://www.site-${i % 997}.example.com/p/${i}.html`, at);
    spans[2 * (i - start) + 1] = at;
    text[at++] = 10;
  }
  return { text: text.subarray(0, at), spans };
}

let add;
let report = () => ({});
if (contender === "crawlsieve") {
  const lib = await import(pathToFileURL(resolve(buildDir, "js/index.node.js")).href);
  await lib.init();
  const set = new lib.FingerprintSet({});
  add = (start, n) => {
    const { text, spans } = lines(start, n);
    set.addSpans(text, spans);
  };
  report = () => ({ memories: set.memories ?? 1, bytesPerKey: +(set.byteLength / set.size).toFixed(1) });
} else {
  const set = new Set();
  add = (start, n) => {
    const keys = lines(start, n).text.toString("latin1").split("\n");
    keys.pop();
    for (const k of keys) set.add(k);
  };
}
const begin = performance.now();
let done = 0;
let stopped;
try {
  for (; done < count; done += CALL) add(done, Math.min(CALL, count - done));
} catch (error) {
  stopped = `${error.constructor.name}: ${error.message}`.slice(0, 160);
}
console.log(
  JSON.stringify({
    contender,
    count,
    took: Math.min(done, count),
    seconds: +((performance.now() - begin) / 1000).toFixed(1),
    stopped,
    ...(stopped ? {} : report()),
  }),
);
