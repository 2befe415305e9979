// How long a key stays seen, per host or URL prefix, and the hosts and prefixes forgotten: the
// rules every exact windowed seen-set (memory, Redis) applies to its keys at each look-up, so a
// changed map takes effect on keys already stored. Times are whole seconds (the sets keep a key's
// time as seconds since the Unix epoch in 32 bits).
//
// A rule's pattern is a host ("a.example": that host and its subdomains) or a URL prefix (a string
// starting with "scheme://": keys that start with it, scheme and host compared in lower case). A
// URL prefix rule wins over a host rule; among URL prefixes the longest wins, among hosts the most
// specific. A key that is not a URL ("scheme://..." with a host) takes the default.
import { FormatError, InvalidArgumentError } from "../errors.js";

/** A duration: milliseconds, or a number with a unit: "90s", "30m", "12h", "7d", "2w". */
export type Duration = number | `${number}${"s" | "m" | "h" | "d" | "w"}`;

/** When a windowed set's keys come due again: a TTL after the sighting reported new, or after the last sighting. */
export type WindowSemantics = "first-seen" | "refresh";

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
/** Milliseconds of a Duration: a positive number of ms, or "<number><s|m|h|d|w>". */
export function durationMs(name: string, value: Duration | unknown): number {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  const match = typeof value === "string" ? /^(\d+(?:\.\d+)?)([smhdw])$/.exec(value) : null;
  const ms = match === null ? NaN : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (!(ms > 0))
    throw new InvalidArgumentError(
      name,
      value,
      'a positive duration: milliseconds, or a number with a unit s, m, h, d or w ("7d")',
    );
  return ms;
}

/** How long a key stays seen: a Duration (whole seconds) or "never" (it never comes due). */
export type Ttl = Duration | "never";

/** TTL rules by host or URL prefix: pattern -> Ttl ("news.example": "1h", "https://a.example/archive/": "52w"). */
export type TtlMap = Readonly<Record<string, Ttl>>;

/** Seconds of a Ttl (Infinity for "never"); a TTL that is not a whole number of seconds is refused. */
export function ttlSeconds(name: string, ttl: Ttl | unknown): number {
  if (ttl === "never") return Infinity;
  const ms = durationMs(name, ttl);
  if (!Number.isInteger(ms / 1000) || ms / 1000 >= 2 ** 32)
    throw new InvalidArgumentError(name, ttl, 'a whole number of seconds under 136 years ("90m", "7d"), or "never"');
  return ms / 1000;
}

/** The scheme and host of a URL key in lower case ("https://a.example"), its host, and the rest; undefined for a key that is not a URL. */
function urlParts(key: string): { origin: string; host: string; rest: string } | undefined {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)/.exec(key);
  if (match === null) return undefined;
  // The authority without user info and port: the host a rule names.
  const authority = match[2].toLowerCase();
  const host = authority.slice(authority.lastIndexOf("@") + 1).replace(/:\d*$/, "");
  if (host === "") return undefined;
  const origin = `${match[1].toLowerCase()}://${authority}`;
  return { origin, host, rest: key.slice(match[0].length) };
}

/** A pattern as a rule keeps it: a host, or a URL prefix with its scheme and host in lower case. */
function rulePattern(pattern: string): { host: string; prefix?: string } | undefined {
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(pattern)) {
    const parts = urlParts(pattern);
    return parts === undefined ? undefined : { host: parts.host, prefix: parts.origin + parts.rest };
  }
  const host = pattern.toLowerCase().replace(/\.$/, "");
  return /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host) || /^\[[0-9a-f:.]+\]$/.test(host) ? { host } : undefined;
}

const decoder = new TextDecoder();

/** Rules by host or URL prefix, each with a value: the longest match, or every match, for a key. */
export class PrefixRules<T> {
  private readonly hosts = new Map<string, T>();
  /** URL prefix rules by the host they name, longest first. */
  private readonly prefixes = new Map<string, { prefix: string; value: T }[]>();

  /** Rules from [pattern, value] pairs; a pattern that is neither a host nor a URL prefix is refused, naming it. */
  constructor(rules: Iterable<readonly [string, T]> = []) {
    for (const [pattern, value] of rules) this.set(pattern, value);
  }

  /** Sets (or replaces) the rule of `pattern`. */
  set(pattern: string, value: T): void {
    const rule = typeof pattern === "string" ? rulePattern(pattern) : undefined;
    if (rule === undefined)
      throw new InvalidArgumentError(
        "pattern",
        pattern,
        'a host ("a.example", matching its subdomains too) or a URL prefix ("https://a.example/news/")',
      );
    if (rule.prefix === undefined) {
      this.hosts.set(rule.host, value);
      return;
    }
    const list = (this.prefixes.get(rule.host) ?? []).filter((r) => r.prefix !== rule.prefix);
    list.push({ prefix: rule.prefix, value });
    list.sort((a, b) => b.prefix.length - a.prefix.length);
    this.prefixes.set(rule.host, list);
  }

  /** The value of the rule for exactly `pattern` (as set), or undefined. */
  exact(pattern: string): T | undefined {
    const rule = rulePattern(pattern);
    if (rule === undefined) return undefined;
    if (rule.prefix === undefined) return this.hosts.get(rule.host);
    return this.prefixes.get(rule.host)?.find((r) => r.prefix === rule.prefix)?.value;
  }

  /** Removes the rule of exactly `pattern`; true when there was one. */
  delete(pattern: string): boolean {
    const rule = rulePattern(pattern);
    if (rule === undefined) return false;
    if (rule.prefix === undefined) return this.hosts.delete(rule.host);
    const list = this.prefixes.get(rule.host);
    const kept = list?.filter((r) => r.prefix !== rule.prefix) ?? [];
    if (list === undefined || kept.length === list.length) return false;
    if (kept.length === 0) this.prefixes.delete(rule.host);
    else this.prefixes.set(rule.host, kept);
    return true;
  }

  /** Rules held. */
  get size(): number {
    let n = this.hosts.size;
    for (const list of this.prefixes.values()) n += list.length;
    return n;
  }

  /** The value of the rule that wins for `key` (the longest URL prefix, else the most specific host), or undefined. */
  longest(key: string | Uint8Array): T | undefined {
    let found: T | undefined;
    this.visit(key, (value) => {
      found = value;
      return false;
    });
    return found;
  }

  /** Calls `each` with the value of every rule that matches `key`, the winning one first. */
  all(key: string | Uint8Array, each: (value: T) => void): void {
    this.visit(key, (value) => {
      each(value);
      return true;
    });
  }

  /** The rules as [pattern, value] pairs (hosts, then URL prefixes). */
  entries(): [string, T][] {
    const out: [string, T][] = [...this.hosts];
    for (const list of this.prefixes.values()) for (const r of list) out.push([r.prefix, r.value]);
    return out;
  }

  /** Visits matching rules, winner first, while `go` returns true. */
  private visit(key: string | Uint8Array, go: (value: T) => boolean): void {
    if (this.size === 0) return;
    const parts = urlParts(typeof key === "string" ? key : decoder.decode(key));
    if (parts === undefined) return;
    const list = this.prefixes.get(parts.host);
    if (list !== undefined) {
      const url = parts.origin + parts.rest;
      for (const rule of list) if (url.startsWith(rule.prefix) && !go(rule.value)) return;
    }
    // The host, then each parent domain: "a.b.example" -> "b.example" -> "example".
    for (let host = parts.host; ; ) {
      const value = this.hosts.get(host);
      if (value !== undefined && !go(value)) return;
      const dot = host.indexOf(".");
      if (dot < 0 || host.startsWith("[")) return;
      host = host.slice(dot + 1);
    }
  }
}

/**
 * Reads a TTL map file: one rule a line, `PATTERN DURATION` separated by whitespace, DURATION as
 * `--window` takes it ("90m", "12h", "1d", "52w") or "never"; `#` starts a comment. A bad line is
 * an InvalidArgumentError whose argument is "FILE:LINE" and whose value is the line.
 */
export function parseTtlMap(text: string, file: string): Record<string, Ttl> {
  const map: Record<string, Ttl> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/#.*$/, "").trim();
    if (line === "") continue;
    const fields = line.split(/\s+/);
    const where = `${file}:${i + 1}`;
    const rule =
      "a rule PATTERN DURATION (a host such as a.example or a URL prefix such as https://a.example/news/, then a duration such as 90m, 12h, 1d, 52w, or never)";
    if (fields.length !== 2) throw new InvalidArgumentError(where, lines[i].trim(), rule);
    const [pattern, duration] = fields;
    try {
      ttlSeconds("duration", duration);
      new PrefixRules([[pattern, 0]]);
    } catch {
      throw new InvalidArgumentError(where, lines[i].trim(), rule);
    }
    map[pattern] = duration as Ttl;
  }
  return map;
}

/** A default TTL and a TtlMap, in seconds: what a windowed set asks for each key. */
export class TtlPolicy {
  private readonly rules: PrefixRules<number>;
  /** Seconds of the default TTL (Infinity: never). */
  readonly defaultSeconds: number;

  /** The policy of a default TTL and a map (checked: every pattern and duration, naming the bad one). */
  constructor(ttl: Ttl, map: TtlMap = {}) {
    this.defaultSeconds = ttlSeconds("ttl", ttl);
    if (map === null || typeof map !== "object")
      throw new InvalidArgumentError("ttlMap", map, "an object of pattern -> TTL");
    this.rules = new PrefixRules(Object.entries(map).map(([p, t]) => [p, ttlSeconds(`ttlMap["${p}"]`, t)]));
  }

  /** True when every key has the default TTL (no per-key work). */
  get uniform(): boolean {
    return this.rules.size === 0;
  }

  /** Seconds a key stays seen (Infinity: never). */
  secondsFor(key: string | Uint8Array): number {
    return this.rules.longest(key) ?? this.defaultSeconds;
  }

  /** The longest TTL any key may have (Infinity when some rule or the default is never): what may be dropped as expired. */
  get longestSeconds(): number {
    let most = this.defaultSeconds;
    for (const [, s] of this.rules.entries()) most = Math.max(most, s);
    return most;
  }
}

/** The tombstones of a record of kind "tombstones"; a FormatError naming `where` when they are not [pattern, second] pairs. */
export function decodeTombstones(bytes: Uint8Array, where: string): [string, number][] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    parsed = undefined;
  }
  const good =
    Array.isArray(parsed) &&
    parsed.every(
      (t) =>
        Array.isArray(t) &&
        t.length === 2 &&
        typeof t[0] === "string" &&
        Number.isInteger(t[1]) &&
        t[1] >= 0 &&
        t[1] < 2 ** 32,
    );
  if (!good) throw new FormatError(`${where}: a record of tombstones is not [pattern, second] pairs`, "ERR_FORMAT");
  return parsed as [string, number][];
}
