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
  // The structures of issues 3, 5 and 6: made here, and loaded from bytes Node made (f.fromNode).
  const counting = new cs.CountingBloomFilter({ items: 5000, fpRate: 0.01 });
  counting.addMany([...f.keys, ...f.keys.slice(0, 300)]);
  counting.removeMany(f.keys.slice(0, 100));
  const instant = Date.UTC(2026, 0, 1, 12);
  const window = new cs.TimeWindowFilter({ granularity: "hour", slices: 24, itemsPerSlice: 3000, fpRate: 0.01, now: () => instant });
  window.seenMany(f.keys);
  const fps = cs.simhashMany(f.texts);
  const index = new cs.NearDupIndex({ layout: 10 });
  index.addMany(f.texts.map((_, i) => i), fps);
  const queries = Array.from(fps, (fp) => fp ^ 5n);
  const loaded = f.fromNode === undefined ? undefined : {
    counting: Array.from(cs.CountingBloomFilter.deserialize(new Uint8Array(f.fromNode.counting)).hasMany(probes.slice(0, 500).concat(f.keys.slice(0, 500)))),
    window: Array.from(cs.TimeWindowFilter.deserialize(new Uint8Array(f.fromNode.window), () => instant).hasMany(f.keys.slice(0, 500).concat(probes.slice(0, 500)))),
    index: JSON.stringify(cs.NearDupIndex.deserialize(new Uint8Array(f.fromNode.index)).queryMany(queries)),
  };
  return {
    canonical,
    fingerprints,
    md5s,
    bloom: Array.from(bloom.serialize()),
    blocked: Array.from(blocked.serialize()),
    answers: Array.from(bloom.hasMany(probes)),
    counting: Array.from(counting.serialize()),
    multiplicity: f.keys.slice(0, 400).map((k) => counting.multiplicity(k)),
    window: Array.from(window.serialize()),
    simhash: Array.from(fps, (fp) => fp.toString(16)),
    index: Array.from(index.serialize()),
    near: JSON.stringify(index.queryMany(queries)),
    loaded,
  };
}
