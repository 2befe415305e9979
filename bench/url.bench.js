// URL canonicalization against a plain WHATWG `new URL(u).href` round trip (which normalizes far
// less: no query sorting, no re-quoting), and request fingerprints per second per algorithm.
import { readFileSync } from "node:fs";
import { canonicalizeUrl, initSync, requestFingerprint } from "../build/js/index.node.js";
import { keysPerSecond, millions, table } from "./common.js";

initSync();

/** Runs the suite; returns markdown. */
export async function urlSuite() {
  // Real links (the shipped sample), given the query strings crawl frontiers are full of.
  const links = readFileSync(new URL("../examples/nodejs-doc-links.txt", import.meta.url), "latin1")
    .split("\n")
    .filter(Boolean);
  const urls = links.map((u, i) =>
    i % 2 === 0 ? `${u.split("#")[0]}?utm_source=feed&id=${i}&b=${i % 7}&a=caf%c3%a9#top` : u,
  );
  const n = urls.length;
  const canon = await keysPerSecond(
    "canonicalize",
    { count: n },
    [
      {
        name: "canonicalizeUrl",
        fn: () => {
          for (let i = 0; i < n; i++) canonicalizeUrl(urls[i]);
        },
      },
      {
        name: "new URL(u).href",
        fn: () => {
          for (let i = 0; i < n; i++) new URL(urls[i]).href;
        },
      },
    ],
    { iterations: 5 },
  );
  const requests = urls.map((url) => ({ url }));
  const fps = await keysPerSecond(
    "fingerprints",
    { count: n },
    ["md5", "scrapy", "scrapy-legacy", "scrapy-redis"].map((algorithm) => ({
      name: algorithm,
      fn: () => {
        for (let i = 0; i < n; i++) requestFingerprint(requests[i], { algorithm });
      },
    })),
    { iterations: 5 },
  );
  const ours = canon.get("canonicalizeUrl");
  const whatwg = canon.get("new URL(u).href");
  return [
    `### URL canonicalization, ${n} URLs (the sample's links, half given a query and a fragment)`,
    "",
    table(
      ["implementation", "M URLs/s", "canonicalizeUrl / this"],
      [
        ["canonicalizeUrl (Scrapy rules)", millions(ours), "1.00"],
        ["new URL(u).href (WHATWG round trip)", millions(whatwg), (ours / whatwg).toFixed(2)],
      ],
    ),
    "",
    table(
      ["fingerprint algorithm", "M requests/s"],
      [...fps].map(([name, rate]) => [name, millions(rate)]),
    ),
    "",
  ].join("\n");
}
