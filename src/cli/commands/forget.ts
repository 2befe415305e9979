// `crawlsieve forget`: forgets every key of a host (and its subdomains) or under a URL prefix in a
// windowed store (`dedup --store DIR --window`), and no other key: a tombstone in the store, so it
// takes no time whatever the store holds, and the next run sees those lines as new.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CrawlsieveError } from "../../errors.js";
import { openDiskWindowSet, WINDOW_FILE } from "../../seen/disk/disk-window-set.js";
import { stdout } from "../stdout.js";
import { nowOption } from "../window-set.js";

/** Usage of `forget`. */
export const forgetUsage = `crawlsieve forget --store DIR (--host HOST | --prefix URL) [--now TIME] [--json]
  Forgets, in the windowed store DIR (made by dedup --store DIR --window), every key of HOST and
  its subdomains (--host a.example) or every key starting with URL (--prefix
  https://a.example/news/), recorded until now (--now: an ISO 8601 time with its zone, or ms since
  the epoch): the next dedup --store DIR --window prints those lines again. Keys recorded after it
  stay. Prints what it did (--json: one JSON object).`;

/** Runs `forget`; returns the exit code. */
export async function forgetCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      store: { type: "string" },
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
  if (values.store === undefined)
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "forget needs --store DIR (a windowed store)");
  if ((values.host === undefined) === (values.prefix === undefined))
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "forget needs one of --host HOST and --prefix URL");
  const at = values.now === undefined ? Date.now() : nowOption(values.now);
  // Never made here: a mistyped directory is an error, not a new empty store.
  if (!existsSync(join(values.store, WINDOW_FILE)))
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `--store ${values.store} holds no windowed store (${WINDOW_FILE}, made by dedup --store DIR --window)`,
    );
  const told = (message: string) => process.stderr.write(`crawlsieve: ${message}\n`);
  // The window given here is only the opener's default: forgetting reads no TTL.
  const store = await openDiskWindowSet(values.store, { ttl: "never", onRecover: told });
  try {
    if (values.host !== undefined) await store.forgetHost(values.host, at);
    else await store.forgetPrefix(values.prefix as string, at);
  } finally {
    await store.close();
  }
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
      : `forgot ${values.host !== undefined ? `host ${values.host}` : `prefix ${values.prefix}`} in ${values.store}, as of ${done.at}\n`,
  );
  return 0;
}
