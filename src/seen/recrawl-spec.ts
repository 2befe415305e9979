// `recrawlAfter` of the crawler integrations: a page is fetched again once its TTL has passed
// since it was fetched. The integrations take it beside a seen-set spec and turn that spec into
// the exact windowed one of the same backend (memory -> window, disk and redis with `window`),
// so the TTL rules, their one home (src/window/ttl-rules.ts) and every backend's guarantees are
// the windowed sets' own; nothing here keeps times.
import { InvalidArgumentError } from "../errors.js";
import { PrefixRules, type Ttl, type TtlMap, ttlSeconds } from "../window/ttl-rules.js";
import type { SeenSet } from "./seen-set.js";
import type { SeenSpec } from "./seen-spec.js";

/**
 * When a fetched page is due again: one TTL ("7d", or "never"), or TTLs by host or URL prefix
 * with a `default` ({ default: "30d", "news.example": "1h", "https://a.example/archive/": "never" }).
 */
export type RecrawlAfter = Ttl | (TtlMap & { readonly default: Ttl });

/** What the seen-set of an integration is, once `recrawlAfter` is applied. */
export interface RecrawlSeen {
  /** The spec (or the ready seen-set) to open. */
  readonly seen: SeenSet | SeenSpec;
  /** True when keys come due again with time: a page the crawler fetched before may be fetched again. */
  readonly windowed: boolean;
}

/**
 * Applies `recrawlAfter` (and the clock `now`) to a seen-set spec. `urlKeys` says whether the
 * integration's keys are URLs, which per-host or per-prefix rules need; fingerprints have no host.
 */
export function recrawlSeen(
  given: SeenSet | SeenSpec,
  recrawlAfter: RecrawlAfter | undefined,
  now: (() => number) | undefined,
  urlKeys: { readonly urls: boolean; readonly key: string },
): RecrawlSeen {
  if (now !== undefined && typeof now !== "function")
    throw new InvalidArgumentError("now", now, "a function returning ms since the epoch");
  const ready = typeof (given as SeenSet).addMany === "function";
  if (recrawlAfter === undefined) {
    if (now !== undefined) throw new InvalidArgumentError("now", now, "given only with recrawlAfter");
    return { seen: given, windowed: isWindowed(given, ready) };
  }
  const { ttl, rules } = parseRecrawlAfter(recrawlAfter);
  if (Object.keys(rules).length > 0 && !urlKeys.urls)
    throw new InvalidArgumentError(
      "recrawlAfter",
      recrawlAfter,
      `one TTL: key ${urlKeys.key} gives fingerprints, which name no host or URL prefix for its rules`,
    );
  if (ready)
    throw new InvalidArgumentError(
      "seen",
      (given as SeenSet).backend,
      'a spec ({ backend: "disk", path }) with recrawlAfter: the sieve opens the windowed set itself',
    );
  const spec = given as SeenSpec & { window?: unknown; exact?: unknown };
  if (spec.backend === "window" || spec.window !== undefined)
    throw new InvalidArgumentError(
      "recrawlAfter",
      recrawlAfter,
      "given once: the seen spec already has a window (drop one of the two)",
    );
  const window = { window: ttl, ...(Object.keys(rules).length > 0 ? { ttlMap: rules } : {}), ...(now ? { now } : {}) };
  switch (spec.backend) {
    case "memory": {
      const { backend: _, exact, ...rest } = spec;
      if (exact === false)
        throw new InvalidArgumentError("seen.exact", exact, "true with recrawlAfter (the recrawl window is exact)");
      if (Object.keys(rest).some((k) => k !== "bytes" && k !== "items"))
        throw new InvalidArgumentError(
          "seen",
          Object.keys(rest).join(", "),
          "a memory spec of bytes and items with recrawlAfter",
        );
      return { seen: { backend: "window", ...rest, ...window } as SeenSpec, windowed: true };
    }
    case "disk":
    case "lmdb":
    case "redis":
      return { seen: { ...spec, ...window } as SeenSpec, windowed: true };
    default:
      throw new InvalidArgumentError("seen.backend", spec.backend, "memory, disk or redis with recrawlAfter");
  }
}

/** The default TTL and the rules of a RecrawlAfter, each checked (naming the bad one). */
function parseRecrawlAfter(value: RecrawlAfter): { ttl: Ttl; rules: Record<string, Ttl> } {
  if (value === null || typeof value !== "object") {
    ttlSeconds("recrawlAfter", value);
    return { ttl: value as Ttl, rules: {} };
  }
  const { default: ttl, ...rules } = value as Record<string, Ttl>;
  if (ttl === undefined)
    throw new InvalidArgumentError("recrawlAfter.default", ttl, 'the TTL of pages no rule names ("30d" or "never")');
  ttlSeconds("recrawlAfter.default", ttl);
  for (const [pattern, t] of Object.entries(rules)) {
    ttlSeconds(`recrawlAfter["${pattern}"]`, t);
    new PrefixRules([[pattern, t]]);
  }
  return { ttl, rules };
}

/** True for a seen-set (or spec) whose keys come due again with time. */
function isWindowed(given: SeenSet | SeenSpec, ready: boolean): boolean {
  if (ready) {
    const set = given as SeenSet & { dueMany?: unknown };
    return set.backend === "window" || typeof set.dueMany === "function";
  }
  const spec = given as SeenSpec & { window?: unknown };
  return spec.backend === "window" || spec.window !== undefined;
}
