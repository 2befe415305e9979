// One computation run against whichever build `cs` is (Node's or the browser's), so the two can
// be compared result for result. Plain JavaScript: the page imports this very file.

/** Canonical URLs, fingerprints, MD5s, serialized filters and answers for fixture `f`. */
export function compute(cs, f) {
  const canonical = f.urls.map((c) => cs.canonicalizeUrl(c.bytes ? new Uint8Array(c.bytes) : c.input, c.options));
  const fingerprints = f.requests.map((r) =>
    ["md5", "scrapy", "scrapy-legacy", "scrapy-redis"].map((algorithm) =>
      cs.requestFingerprint(
        { url: r.url, method: r.method, headers: r.headers, body: r.body ? new Uint8Array(r.body) : undefined },
        { algorithm, includeHeaders: r.includeHeaders, keepFragments: r.keepFragments },
      ),
    ),
  );
  const md5s = f.keys.slice(0, 200).map((k) => cs.md5Hex(k));
  const bloom = new cs.BloomFilter({ items: 5000, fpRate: 0.01 });
  bloom.addMany(f.keys);
  const blocked = new cs.BlockedBloomFilter({ items: 5000, fpRate: 0.01 });
  blocked.addMany(f.keys);
  const probes = f.keys.map((k) => k + "#absent");
  return {
    canonical,
    fingerprints,
    md5s,
    bloom: Array.from(bloom.serialize()),
    blocked: Array.from(blocked.serialize()),
    answers: Array.from(bloom.hasMany(probes)),
  };
}
