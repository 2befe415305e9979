// The hosts and URL prefixes a windowed set in Redis has forgotten: tombstones pattern -> time in
// one hash ("cs:{name}:forgotten") with a version counter beside it. Forgetting a host is then one
// write, whatever it holds, and exact: a key is forgotten when its time is not after the latest
// tombstone that matches it, so every key of the host answers new and no other key changes. Each
// process keeps the tombstones in memory and reads them again only when the version moved (one
// GET a batch), because every batch needs them to compute its keys' cutoffs.
import { InvalidArgumentError } from "../errors.js";
import { PrefixRules } from "../window/ttl-rules.js";
import type { RedisCommander } from "./commander.js";
import { durableBatch, type Durability } from "./durability.js";
import { FORGET, FORGOTTEN_READ } from "./scripts.js";

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//;

/** The tombstones of one windowed set, as this process last read them. */
export class ForgottenRules {
  private readonly hash: string;
  private readonly version: string;
  private seen: string | undefined;
  private rules = new PrefixRules<number>();

  constructor(
    private readonly redis: RedisCommander,
    prefix: string,
    private readonly durability: Durability,
  ) {
    this.hash = `${prefix}forgotten`;
    this.version = `${prefix}forgotten:v`;
  }

  /** Reads the tombstones again when their version changed since the last look (one GET when it did not). */
  async refresh(): Promise<void> {
    const version = String((await this.redis.send(["GET", this.version])) ?? "0");
    if (version === this.seen) return;
    const [stored, flat] = (await FORGOTTEN_READ.run(this.redis, [this.hash, this.version], [])) as [
      unknown,
      unknown[],
    ];
    const rules = new PrefixRules<number>();
    for (let i = 0; i + 1 < flat.length; i += 2) rules.set(String(flat[i]), Number(String(flat[i + 1])));
    this.rules = rules;
    this.seen = String(stored);
  }

  /** The latest time (seconds) a tombstone matching `key` was recorded, 0 when none does. */
  latest(key: string | Uint8Array): number {
    if (this.rules.size === 0) return 0;
    let most = 0;
    this.rules.all(key, (time) => {
      if (time > most) most = time;
    });
    return most;
  }

  /**
   * Records a tombstone for a host ("a.example", with its subdomains) or a URL prefix, at `now`
   * (seconds as text, "" for the server's TIME), dropping those older than `longest` seconds (-1: keep all).
   */
  async forget(what: "host" | "prefix", pattern: string, now: string, longest: string): Promise<void> {
    const stored = normalized(what, pattern);
    const write = () => FORGET.run(this.redis, [this.hash, this.version], [stored, now, longest]);
    await durableBatch(this.redis, this.durability, [this.hash], write, (first) => first);
    this.seen = undefined;
  }

  /** Deletes every tombstone; the version moves on (never back), so no process keeps an old copy. */
  async clear(): Promise<void> {
    await this.redis.send(["DEL", this.hash]);
    await this.redis.send(["INCR", this.version]);
    this.seen = undefined;
  }
}

/** A host or URL prefix as PrefixRules keeps it (host and scheme in lower case), checked; a bad one is refused, naming it. */
function normalized(what: "host" | "prefix", pattern: string): string {
  const isPrefix = typeof pattern === "string" && SCHEME.test(pattern);
  if (typeof pattern !== "string" || isPrefix !== (what === "prefix"))
    throw new InvalidArgumentError(
      what,
      pattern,
      what === "host" ? 'a host ("a.example")' : 'a URL prefix ("https://a.example/news/")',
    );
  try {
    return new PrefixRules([[pattern, 0]]).entries()[0][0];
  } catch {
    throw new InvalidArgumentError(
      what,
      pattern,
      what === "host" ? 'a host ("a.example")' : 'a URL prefix ("https://a.example/news/")',
    );
  }
}
