// The cross-runtime fixture: every w3lib and Scrapy vector, keys, texts, and (fixtureWithBytes)
// the structures Node serialized, which another runtime must load and answer from.
import { readFileSync } from "node:fs";
import * as node from "../../build/js/index.node.js";
import { compute } from "./compute.js";

const shared = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/vectors/${name}`, import.meta.url), "utf8"));

interface UrlCase {
  input: string | null;
  bytes: number[] | null;
  options: Record<string, unknown>;
}
export interface Fixture {
  texts: string[];
  fromNode?: { counting: number[]; window: number[]; index: number[] };
  urls: UrlCase[];
  requests: {
    url: string;
    method?: string;
    body?: number[];
    headers?: Record<string, string>;
    includeHeaders?: string[];
    keepFragments?: boolean;
  }[];
  keys: string[];
}

/** The fixture, with the Node-serialized structures the other runtime must load. */
export function fixtureWithBytes(): Fixture {
  const f = fixture();
  const made = compute(node, f);
  return { ...f, fromNode: { counting: made.counting, window: made.window, index: made.index } };
}

export function fixture(): Fixture {
  const urls: UrlCase[] = shared("w3lib_canonicalize_url.json").cases.map(
    (c: { input_kind: string; input?: string; input_bytes_hex?: string; kwargs: Record<string, unknown> }) => ({
      input:
        c.input_kind === "bytes"
          ? null
          : c.input_bytes_hex
            ? Buffer.from(c.input_bytes_hex, "hex").toString("latin1")
            : c.input!,
      bytes: c.input_kind === "bytes" ? [...Buffer.from(c.input_bytes_hex!, "hex")] : null,
      options: {
        keepBlankValues: c.kwargs.keep_blank_values,
        keepFragments: c.kwargs.keep_fragments,
        encoding: c.kwargs.encoding,
        querySeparator: c.kwargs.query_separator,
        // The vectors are w3lib's main-branch suite (test/canonicalize.test.ts runs them the same way).
        w3lib: "head",
      },
    }),
  );
  const requests = shared("scrapy_request_fingerprint.json").cases.map(
    (c: {
      request: { url: string; method?: string; body_hex?: string; headers?: Record<string, string> };
      kwargs: { include_headers?: string[]; keep_fragments?: boolean };
    }) => ({
      url: c.request.url,
      method: c.request.method,
      body: c.request.body_hex ? [...Buffer.from(c.request.body_hex, "hex")] : undefined,
      headers: c.request.headers,
      includeHeaders: c.kwargs.include_headers,
      keepFragments: c.kwargs.keep_fragments,
    }),
  );
  const keys = Array.from({ length: 2000 }, (_, i) => `https://cross.example/${i}?q=${i % 3 === 0 ? "日本語" : "x"}`);
  const story = "crawlers meet the same page again and again and keep one copy of each page they fetch from the web";
  const texts = Array.from(
    { length: 300 },
    (_, i) =>
      `${story} ${i % 50 === 0 ? "日本語のテキスト" : ""} item ${i} ${"word".repeat(i % 7)} ${i % 3 === 0 ? story : ""}`,
  );
  return { urls, requests, keys, texts };
}
