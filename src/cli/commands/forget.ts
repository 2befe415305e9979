// `crawlsieve forget`: forgets every key of a host (and its subdomains) or under a URL prefix in a
// windowed store (`dedup --store DIR --window`) or a windowed set in Redis (`dedup --redis URL
// --namespace N --window`), and no other key: a tombstone beside the keys, so it takes no time
// whatever the set holds, and the next run sees those lines as new.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CrawlsieveError } from "../../errors.js";
import { openDiskWindowSet, WINDOW_FILE } from "../../seen/disk/disk-window-set.js";
import { stdout } from "../stdout.js";
import { nowOption } from "../window-set.js";

/** Usage of `forget`. */
export const forgetUsage = `crawlsieve forget (--store DIR | --redis URL[,URL...] [--cluster] --namespace NAME) (--host HOST | --prefix URL) [--now TIME] [--json]
  Forgets, in the windowed store DIR (made by dedup --store DIR --window) or the windowed set NAME
  in Redis (made by dedup --redis URL --namespace NAME --window), every key of HOST and
  its subdomains (--host a.example) or every key starting with URL (--prefix
  https://a.example/news/), recorded until now (--now: an ISO 8601 time with its zone, or ms since
  the epoch; with --redis, the server's clock by default): the next dedup --window prints those lines again. Keys recorded after it
  stay. Prints what it did (--json: one JSON object).`;

/** Runs `forget`; returns the exit code. */
export async function forgetCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      store: { type: "string" },
      redis: { type: "string" },
      cluster: { type: "boolean" },
      namespace: { type: "string" },
      host: { type: "string" },
      prefix: { type: "string" },
      now: { type: "string" },
      json: { type: "boolean" },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0)
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", `forget takes no file, got ${JSON.stringify(positionals[0])}`);
  if ((values.store === undefined) === (values.redis === undefined))
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "forget needs one of --store DIR and --redis URL --namespace NAME",
    );
  if (values.redis === undefined && (values.namespace !== undefined || values.cluster))
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--namespace and --cluster need --redis");
  if (values.redis !== undefined && values.namespace === undefined)
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--redis needs --namespace NAME (the windowed set's name)");
  if ((values.host === undefined) === (values.prefix === undefined))
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "forget needs one of --host HOST and --prefix URL");
  const given = values.now === undefined ? undefined : nowOption(values.now);
  const forget = async (set: {
    forgetHost(h: string, at?: number): Promise<void>;
    forgetPrefix(p: string, at?: number): Promise<void>;
  }) =>
    values.host !== undefined ? set.forgetHost(values.host, given) : set.forgetPrefix(values.prefix as string, given);
  if (values.redis !== undefined) {
    const { connectRedis } = await import("../redis-set.js");
    const { RedisWindowedSeenSet } = await import("../../redis/redis-windowed-set.js");
    const { commander, close, checked } = await connectRedis(values.redis, values.cluster === true, "during forget");
    try {
      // The default TTL given here is only the opener's: forgetting reads none.
      const set = await checked(
        RedisWindowedSeenSet.open(commander, { name: values.namespace as string, ttl: "never" }),
      );
      await checked(forget(set));
    } finally {
      await close();
    }
  } else {
    const dir = values.store as string;
    // Never made here: a mistyped directory is an error, not a new empty store.
    if (!existsSync(join(dir, WINDOW_FILE)))
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `--store ${dir} holds no windowed store (${WINDOW_FILE}, made by dedup --store DIR --window)`,
      );
    const told = (message: string) => process.stderr.write(`crawlsieve: ${message}\n`);
    const store = await openDiskWindowSet(dir, { ttl: "never", onRecover: told });
    try {
      await forget(store);
    } finally {
      await store.close();
    }
  }
  const at = given ?? Date.now();
  const what = values.host !== undefined ? { host: values.host } : { prefix: values.prefix };
  const done = {
    command: "forget",
    store: values.store,
    ...what,
    at: new Date(Math.floor(at / 1000) * 1000).toISOString(),
  };
  stdout().write(
    values.json
      ? `${JSON.stringify(done)}\n`
      : `forgot ${values.host !== undefined ? `host ${values.host}` : `prefix ${values.prefix}`} in ${values.store ?? `${values.redis} ${values.namespace}`}, as of ${done.at}\n`,
  );
  return 0;
}
