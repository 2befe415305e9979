// A deterministic mirror-site stream for `npm run bench:cli`: the URLs a crawler meets walking
// package mirrors. Each line is new with probability 1/2, else a repeat of an earlier URL, mostly
// a recent one (pages link their neighbours), sometimes any (indexes, sitemaps): about half the
// lines are duplicates, lines average about 120 bytes.
// usage: node bench/gen-mirror.js LINES OUT_FILE   (same arguments, same bytes, on any machine)
import { closeSync, openSync, writeSync } from "node:fs";
import { xorshift32 } from "./common.js";

const lines = Number(process.argv[2] ?? 12_000_000);
const file = process.argv[3] ?? "bench/out/mirror.txt";

const next = xorshift32(0x9e3779b9);

const MIRRORS = ["ftp.de", "ftp.fr", "ftp.us", "mirror.nl", "ftp.jp", "mirrors.kernel", "ftp.uk", "deb.mirror.br"];
const ARCHES = ["amd64", "arm64", "i386", "all", "armhf", "ppc64el", "s390x"];
const SYLLABLES = [
  "lib",
  "gtk",
  "py",
  "x",
  "net",
  "core",
  "util",
  "font",
  "perl",
  "ruby",
  "data",
  "doc",
  "dev",
  "kde",
  "gnome",
  "qt",
  "ssl",
  "xml",
  "zip",
  "tool",
];

/** The i-th distinct URL (its text depends only on i). */
function url(i) {
  let h = Math.imul(i ^ 0x5bd1e995, 0x2c1b3c6d) >>> 0;
  const pick = (n) => {
    h = Math.imul(h ^ (h >>> 15), 0x297a2d39) >>> 0;
    return h % n;
  };
  const name = SYLLABLES[pick(20)] + SYLLABLES[pick(20)] + (i % 7919).toString(36);
  const section = ["main", "contrib", "non-free"][pick(3)];
  const version = `${pick(9) + 1}.${pick(30)}.${pick(100)}-${pick(12) + 1}`;
  return `https://${MIRRORS[i % 8]}.debian.org/debian/pool/${section}/${name[0]}/${name}/${name}_${version}+b${Math.floor(i / 7919)}_${ARCHES[pick(7)]}.deb`;
}

const fd = openSync(file, "w");
const buffer = Buffer.allocUnsafe(1 << 22);
let used = 0;
let distinct = 0;
for (let t = 0; t < lines; t++) {
  let i;
  if (distinct === 0 || next() < 0.5) i = distinct++;
  else if (next() < 0.8) i = Math.max(0, distinct - 1 - Math.floor(next() * Math.min(distinct, 5000)));
  else i = Math.floor(next() * distinct);
  const line = url(i) + "\n";
  if (used + line.length * 3 > buffer.length) {
    writeSync(fd, buffer, 0, used);
    used = 0;
  }
  used += buffer.write(line, used, "latin1");
}
writeSync(fd, buffer, 0, used);
closeSync(fd);
process.stderr.write(`${lines} lines, ${distinct} distinct indexes -> ${file}\n`);
