// The demo page's main thread: gathers input, hands work to the Web Worker (worker.js), shows
// progress and results (the deduplicated lines themselves, and a download of them), draws the
// FP-rate/memory chart from crawlsieve's sizing, and turns HTML files into text with DOMParser
// (workers have no DOM).
import { sizing } from "../../build/js/index.browser.js";

const $ = (id) => document.getElementById(id);
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
let files = [];
let lastKept = [];
/** Lines shown in the page; the download has them all. */
const SHOWN = 2000;
const pending = new Map();
let nextId = 1;

function call(message, onProgress) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    worker.postMessage({ ...message, id });
  });
}

worker.onmessage = ({ data }) => {
  const waiter = pending.get(data.id);
  if (waiter === undefined) return;
  if (data.type === "progress") return waiter.onProgress?.(data.done, data.total);
  pending.delete(data.id);
  if (data.type === "error") waiter.reject(new Error(data.message));
  else waiter.resolve(data);
};

async function inputText() {
  const parts = await Promise.all(files.map((f) => f.text()));
  if ($("paste").value.trim() !== "") parts.push($("paste").value);
  return parts.join("\n");
}

function setFiles(list) {
  files = [...list];
  $("drop").firstChild.textContent = `${files.length} file(s): ${files.map((f) => f.name).join(", ")}. Drop more or `;
}

/** Drops the previous job's numbers, so nothing (a reader or a test) takes them for this job's. */
function startJob() {
  for (const key of ["unique", "kept", "present", "rate"]) delete $("numbers").dataset[key];
  $("numbers").innerHTML = "";
}

function showNumbers(pairs) {
  $("numbers").innerHTML = pairs.map(([label, value]) => `<span>${label}<br><b>${value}</b></span>`).join("");
}

const progress = (done, total) => {
  $("progress").max = total;
  $("progress").value = done;
};

$("files").addEventListener("change", (e) => setFiles(e.target.files));
$("clearInput").addEventListener("click", () => {
  setFiles([]);
  $("files").value = "";
  $("paste").value = "";
});
$("drop").addEventListener("dragover", (e) => (e.preventDefault(), $("drop").classList.add("over")));
$("drop").addEventListener("dragleave", () => $("drop").classList.remove("over"));
$("drop").addEventListener("drop", (e) => {
  e.preventDefault();
  $("drop").classList.remove("over");
  setFiles(e.dataTransfer.files);
});

$("dedup").addEventListener("click", async () => {
  startJob();
  const mode = document.querySelector("input[name=mode]:checked").value;
  const result = await call(
    {
      type: "dedup",
      text: await inputText(),
      mode,
      fpRate: Number($("fpRate").value),
      remember: $("remember").checked,
    },
    progress,
  );
  lastKept = result.kept;
  $("download").disabled = false;
  const numbers = [
    ["lines", result.lines.toLocaleString()],
    ["unique", result.unique.toLocaleString()],
    ["duplicates", (result.lines - result.unique).toLocaleString()],
  ];
  if ($("remember").checked)
    numbers.push(
      ["seen on earlier visits", result.before.toLocaleString()],
      ["new", result.kept.length.toLocaleString()],
    );
  showNumbers([
    ...numbers,
    ["time", `${result.ms.toFixed(0)} ms`],
    ["lines/s", Math.round(result.lines / (result.ms / 1000)).toLocaleString()],
  ]);
  $("numbers").dataset.unique = String(result.unique);
  $("numbers").dataset.kept = String(result.kept.length);
  const more = result.kept.length - SHOWN;
  $("result").textContent =
    result.kept.slice(0, SHOWN).join("\n") +
    (more > 0 ? `\n… and ${more.toLocaleString()} more lines: download the list for all of them` : "");
  await showMemory();
});

$("download").addEventListener("click", () => {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([lastKept.map((line) => line + "\n").join("")], { type: "text/plain" }));
  link.download = "deduplicated.txt";
  link.click();
});

/** How many lines this browser remembers, and where. */
async function showMemory() {
  const { size, storage } = await call({ type: "remembered" });
  $("memory").textContent =
    `${size.toLocaleString()} lines in ${storage === "opfs" ? "the Origin Private File System" : "IndexedDB"}`;
  $("memory").dataset.size = String(size);
}

$("forget").addEventListener("click", async () => {
  await call({ type: "forget" });
  await showMemory();
});

$("filterFile").addEventListener("change", async (e) => {
  startJob();
  const bytes = new Uint8Array(await e.target.files[0].arrayBuffer());
  const result = await call({ type: "check", text: await inputText(), filter: bytes }, progress);
  showNumbers([
    ["lines", result.lines.toLocaleString()],
    ["in the filter", result.present.toLocaleString()],
    ["not in it", (result.lines - result.present).toLocaleString()],
    ["filter keys", result.keys.toLocaleString()],
  ]);
  $("numbers").dataset.present = String(result.present);
});

$("bench").addEventListener("click", async () => {
  startJob();
  const result = await call({ type: "bench", count: 1_000_000 }, progress);
  showNumbers([
    ["URLs", result.count.toLocaleString()],
    ["unique", result.unique.toLocaleString()],
    ["time", `${result.ms.toFixed(0)} ms`],
    ["URLs/s", Math.round(result.count / (result.ms / 1000)).toLocaleString()],
  ]);
  $("numbers").dataset.rate = String(result.count / (result.ms / 1000));
  $("numbers").dataset.unique = String(result.unique);
});

/** Visible main text of an HTML document: the same boilerplate rules as crawlsieve/html. */
function htmlText(html) {
  const doc = new DOMParser().parseFromString(html, "text/html");
  doc
    .querySelectorAll(
      "script,style,noscript,template,svg,nav,header,footer,aside,form,iframe,button,select,textarea,[hidden],[aria-hidden=true],[role=navigation],[role=banner],[role=contentinfo],[role=complementary],[role=search]",
    )
    .forEach((e) => e.remove());
  const main = doc.querySelectorAll("main,article,[role=main]");
  const roots = main.length > 0 ? [...main] : [doc.body ?? doc.documentElement];
  // Text in document order, with a line break around block elements so adjacent blocks never glue.
  const parts = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return void parts.push(node.data);
    const block = BLOCKS.has(node.nodeName.toLowerCase());
    if (block) parts.push("\n");
    node.childNodes.forEach(walk);
    if (block) parts.push("\n");
  };
  roots.forEach(walk);
  return parts.join("");
}
const BLOCKS = new Set([
  "address",
  "blockquote",
  "br",
  "dd",
  "div",
  "dl",
  "dt",
  "figcaption",
  "figure",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
  "li",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "tbody",
  "td",
  "tfoot",
  "th",
  "thead",
  "tr",
  "ul",
  "main",
  "article",
  "body",
  "summary",
  "details",
]);

$("near").addEventListener("click", async () => {
  const docs = await Promise.all(
    files.map(async (f) => ({
      name: f.name,
      text: /\.html?$/i.test(f.name) ? htmlText(await f.text()) : await f.text(),
    })),
  );
  const result = await call({ type: "near", docs, threshold: Number($("threshold").value) }, progress);
  $("groups").textContent =
    result.groups.length === 0
      ? "no near-duplicates"
      : result.groups
          .map((g, i) => `group ${i + 1}\n${g.map((m) => `  ${m.similarity.toFixed(3)}\t${m.name}`).join("\n")}`)
          .join("\n");
  $("groups").dataset.groups = JSON.stringify(result.groups.map((g) => g.map((m) => m.name).sort()));
});

/** FP rate (log scale) against bits per item for the planned item count, from sizing.bloomFpRate. */
function drawChart() {
  const items = Math.max(1, Number($("items").value) || 1);
  const width = 640;
  const height = 260;
  const points = [];
  for (let bitsPerItem = 1; bitsPerItem <= 24; bitsPerItem += 0.5) {
    const bits = Math.ceil(bitsPerItem * items);
    const hashes = Math.max(1, Math.round(bitsPerItem * Math.LN2));
    points.push({ x: bitsPerItem, y: sizing.bloomFpRate({ bits, hashes, items }), bytes: bits / 8 });
  }
  const px = (x) => 50 + ((x - 1) / 23) * (width - 70);
  const py = (y) => 20 + (-Math.log10(y) / 8) * (height - 50);
  const mib = (b) => (b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(0)} KiB`);
  const grid = [1, 2, 3, 4, 5, 6, 7, 8]
    .map(
      (e) =>
        `<line x1="50" x2="${width - 20}" y1="${py(10 ** -e)}" y2="${py(10 ** -e)}" stroke="#eee"/><text x="5" y="${py(10 ** -e) + 4}" font-size="11">1e-${e}</text>`,
    )
    .join("");
  const ticks = [4, 8, 12, 16, 20, 24]
    .map(
      (x) =>
        `<text x="${px(x) - 20}" y="${height - 8}" font-size="11">${x} (${mib(points.find((p) => p.x === x)?.bytes ?? 0)})</text>`,
    )
    .join("");
  const line = points
    .filter((p) => p.y > 1e-8)
    .map((p) => `${px(p.x)},${py(p.y)}`)
    .join(" ");
  $("chart").innerHTML =
    `<svg width="${width + 60}" height="${height}" font-family="sans-serif">${grid}${ticks}<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${line}"/><text x="60" y="14" font-size="12">FP rate of a Bloom filter for ${items.toLocaleString()} items, by bits per item (memory)</text></svg>`;
}
$("items").addEventListener("input", drawChart);
drawChart();
worker.postMessage({ type: "hello" });
showMemory().then(
  () => (document.body.dataset.ready = "true"),
  (error) => {
    $("memory").textContent = `not available here: ${error.message}`;
    document.body.dataset.ready = "true";
  },
);
