// The reference of the exact windowed seen-sets' tests, written from the rules alone: a Map of
// key -> time, TTLs matched with the WHATWG URL parser, tombstones as a list (nothing of
// crawlsieve is used). Every backend's answers are held against it.
export const H = 3600;
export const D = 86_400;
/** The map under test, and the same rules as the model reads them (seconds). */
export const TTL_MAP: Record<string, string> = {
  "news.example": "1h",
  "b.example": "2d",
  "a.b.example": "10m",
  "archive.example": "52w",
  "https://archive.example/old/": "never",
  "https://news.example/live/": "90s",
};
/** The rules the model applies (set by modelRules' caller). */
export let MODEL_RULES: [string, number][] = [];
/** Sets the rules the model applies. */
export function useModelRules(rules: [string, number][]): void {
  MODEL_RULES = rules;
}
/** The rules as the model reads them: seconds by hand, not by the code under test. */
export function modelRules(never: boolean): [string, number][] {
  return [
    ["news.example", H],
    ["b.example", 2 * D],
    ["a.b.example", 600],
    ["archive.example", never ? 52 * 7 * D : 3 * D],
    ...(never ? ([["https://archive.example/old/", Infinity]] as [string, number][]) : []),
    ["https://news.example/live/", 90],
  ];
}
export const DEFAULT = D;

/** Does a model rule (host or URL prefix) match a URL key? */
export function matches(pattern: string, key: string): boolean {
  if (pattern.includes("://")) return key.startsWith(pattern);
  let host: string;
  try {
    host = new URL(key).hostname;
  } catch {
    return false;
  }
  return host === pattern || host.endsWith(`.${pattern}`);
}

/** The model's TTL: a URL prefix rule first (longest), else the longest matching host. */
export function modelTtl(key: string): number {
  const prefixes = MODEL_RULES.filter(([p]) => p.includes("://") && matches(p, key));
  const hosts = MODEL_RULES.filter(([p]) => !p.includes("://") && matches(p, key));
  const best = (list: [string, number][]) => list.sort((a, b) => b[0].length - a[0].length)[0];
  return (best(prefixes) ?? best(hosts))?.[1] ?? DEFAULT;
}

export class Model {
  readonly times = new Map<string, number>();
  tombstones: [string, number][] = [];
  constructor(readonly refresh: boolean) {}
  private cutoff(key: string, now: number): number {
    const ttl = modelTtl(key);
    let c = ttl === Infinity ? 0 : Math.max(0, now - ttl + 1);
    for (const [p, f] of this.tombstones) if (matches(p, key)) c = Math.max(c, f + 1);
    return c;
  }
  held(key: string, now: number): boolean {
    const t = this.times.get(key);
    return t !== undefined && t >= this.cutoff(key, now);
  }
  add(keys: string[], now: number): number[] {
    return keys.map((k) => {
      if (this.held(k, now)) {
        if (this.refresh) this.times.set(k, Math.max(this.times.get(k)!, now));
        return 0;
      }
      this.times.set(k, Math.max(now, this.cutoff(k, now)));
      return 1;
    });
  }
  remove(keys: string[], now: number): number[] {
    return keys.map((k) => {
      const was = this.held(k, now) ? 1 : 0;
      this.times.delete(k);
      return was;
    });
  }
}

/** The keys the tests draw from: hosts with their subdomains, URL prefixes of the rules, and keys that are not URLs. */
export const HOSTS = [
  "news.example",
  "a.b.example",
  "c.b.example",
  "b.example",
  "archive.example",
  "other.example",
  "x.news.example",
];
const PATHS = ["/", "/live/1", "/live/2", "/old/a", "/old/b", "/p?q=1", "/news/x", "/a/b/c"];
/** Every key of HOSTS and PATHS in both schemes, and a few that are no URL. */
export const KEYS = [
  ...HOSTS.flatMap((h) => PATHS.flatMap((p) => [`https://${h}${p}`, `http://${h}${p}`])),
  "not a url",
  "urn:isbn:1",
  "",
];

/** The TTL map under test and the model's rules, with a never rule or with every TTL finite. */
export function ttlVariant(never: boolean): { ttlMap: Record<string, string>; rules: [string, number][] } {
  const ttlMap = { ...TTL_MAP };
  if (!never) {
    delete ttlMap["https://archive.example/old/"];
    ttlMap["archive.example"] = "3d";
  }
  return { ttlMap, rules: modelRules(never) };
}
