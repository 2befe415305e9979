// `crawlsieve dedup`: lines in, first occurrences out, order kept, streaming in bounded memory.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CrawlsieveError } from "../../errors.js";
import { defersStore, StoreGate } from "../../seen/disk/store-gate.js";
import { urlFlags, urlOptions } from "../url-options.js";
import { count, Progress } from "../progress.js";
import { totalmem, tmpdir } from "node:os";
import { bytesOption, integerOption, probabilityOption, writableFileOption } from "../parse.js";
import { LineDeduplicator, MIN_MEMORY } from "../../lines/line-deduplicator.js";
import { fileSpill } from "../../lines/file-spill.js";
import { removeTempFoldersAtExit } from "../../files/temp-folders.js";
import { regularInputBytes, runLinePipeline } from "../line-pipeline.js";
import type { KeySpec, MissingPolicy } from "../../lines/keys/record-keys.js";
import { LineKeys } from "../../lines/keys/line-keys.js";
import { LONG_LINE_BYTES } from "../../lines/long-line-store.js";
import { DEDUP_LIMIT_OF, MAX_LINE_BYTES } from "../line-limit.js";

/** Usage of `dedup`. */
export const dedupUsage = `crawlsieve dedup [FILE...] [--memory SIZE] [--tmp DIR] [--hash xxh128|md5] [--approx] [--fp-rate P] [--items N] [--store DIR] [--window DUR [--refresh] [--ttl-map FILE] [--now TIME]] [--redis URL[,URL...] [--cluster] (--namespace NAME [--durability local|replicated] | --dupefilter KEY)] [--save-filter F [--blocked]] [--canonicalize [--keep-fragments] [--drop-blank-values] [--encoding E] [--query-separator S] [--w3lib 2.4.1|head] [extras]] [--field N [--delimiter C] [--csv] | --json-key KEY [--missing keep|drop]] [--stats]
  Prints the first occurrence of every input line (stdin when no FILE or FILE is -), in input order.
  Lines compare by their bytes without "\\n" or "\\r\\n"; output bytes are the input's.
  Exact by default: 128-bit fingerprints of the lines in an in-memory table, so a unique line is
  never dropped (two lines would have to share a 128-bit fingerprint); at most 32 bytes a
  distinct line past the first ten thousand or so, grown as lines come (no --items needed). Lines are read, split, fingerprinted,
  checked and written in WebAssembly a megabyte at a time. A line past ${LONG_LINE_BYTES >> 20} MiB is fingerprinted as
  it streams by and not held: a new one is copied from the input file when printed (from a pipe
  or a device, from a copy under --tmp); memory stays bounded whatever the line's length.
  Read whole, as a URL or record (--canonicalize, --field, --json-key, --redis, --save-filter),
  a line may be up to ${MAX_LINE_BYTES >> 20} MiB: a longer one stops the command with an error
  naming its file and line.
  --memory SIZE   exact dedup: memory the seen-set may take (512MiB, 8GiB; at least
                  16MiB; default: half of the physical memory). The table spreads over as many
                  WebAssembly memories (4 GiB each) as that allows; past it, lines not in the table
                  wait in files under --tmp and are printed, still in input order, at the end.
                  With --store, the store's keys fill the table up to SIZE; past it the lines not
                  found there are decided at the end against the whole store, read again
  --tmp DIR       where lines past --memory wait, and lines past ${LONG_LINE_BYTES >> 20} MiB read from a pipe until
                  they end (default: the system's temporary folder); the files are removed at
                  exit and on SIGINT/SIGTERM; a full or unwritable DIR stops the command with
                  exit code 2
  --hash H        the fingerprint of exact in-memory dedup (of the line, or of its key): xxh128
                  (XXH3-128, the default: several times faster than MD5 on short lines) or md5
  --approx        Bloom filter only (cache-line-blocked): a line may be dropped as a false
                  positive with probability up to P
  --fp-rate P     approx: false-positive rate (default 0.001)
  --items N       approx: expected distinct lines (one filter of that size); without it the filter
                  grows by stages and keeps the compound false-positive rate under P.
                  Exact (and --store): the first size of the table in memory, within --memory
                  and one 4 GiB memory (it grows past it as lines come)
  --blocked       approx: accepted for compatibility (the blocked filter is the default)
  --store DIR     exact mode on disk: the store's fingerprints (XXH3-128) are read into the
                  in-memory table, every line is looked up there, and each megabyte of input's new
                  fingerprints are appended to DIR/fingerprints.log and flushed to disk
                  (fdatasync) before its lines are printed, so a later run with the same DIR
                  resumes the same seen-set and nothing printed is forgotten, through kill -9 or
                  a power loss; processes sharing DIR print each line once between them. A last
                  batch cut short by a crash is cut off (said on stderr); a damaged store stops
                  the command (exit 2) naming the file. A DIR holding an LMDB store of an earlier
                  version is imported once
  --canonicalize  compare lines by their canonical URL (Scrapy's rules), print them as they came;
                  takes the canonicalize command's flags too
  --window DUR    a line is printed again once DUR (90m, 12h, 30d, 52w, 3mo; never with a
                  --ttl-map) passed since it was printed: exact (each key kept with its time, in
                  whole seconds), in memory, in a --store of its own or in --redis; --approx
                  --window is the Bloom window (whole slices of m, h, d or mo)
  --refresh       with --window: every sighting restarts the window, not only the printed one
  --ttl-map FILE  with --window: TTLs by host (with its subdomains) or URL prefix, one rule a
                  line "PATTERN DURATION" (# comments); the longest URL prefix wins, then the
                  most specific host; a bad line is exit 2 naming the file and line
  --now TIME      with --window: the clock, an ISO 8601 time with its zone or ms since the
                  epoch (replaying logs); default the machine's (with --redis, the server's)
  --redis URL     share the seen-set with every process using the same --namespace on that
                  Redis: exact by default (MD5 fingerprints with reference counts), a Redis
                  Bloom filter with --approx, or the window of --window. A line is printed only
                  after Redis acknowledged it; if Redis goes away the command stops with an error
  --dupefilter KEY with --redis, instead of --namespace: the seen-set is a Scrapy-Redis fleet's
                  dupefilter SET (such as spider:dupefilter): each line (or --field, --json-key)
                  is a URL, recorded as the fingerprint Scrapy-Redis gives a GET request for it,
                  so the command and a Scrapy fleet skip each other's requests
  --cluster       with --redis: the URLs (comma-separated) are nodes of a Redis Cluster; the
                  seen-set spreads over all its masters
  --durability D  with --redis: local (the default) prints a batch once its master has it, so a
                  master that dies before its replica caught up can forget the last printed
                  lines in a failover; replicated prints it only after a replica of every master
                  written to has it (WAIT), so nothing printed is forgotten in a failover
  --save-filter F with --approx: write the Bloom filter (format v1, the standard filter, or the
                  blocked one with --blocked --items) to F at the end; it loads with
                  BloomFilter.deserialize (BlockedBloomFilter.deserialize) in Node, browsers and
                  workers (and in the demo page)
  --field N       compare records by their field N (from 1), not the whole line; the record is
                  printed as it came. Fields are split at --delimiter (default a tab). A key
                  (--field, --json-key, --canonicalize) changes nothing else: every other
                  option means what it means for whole lines
  --delimiter C   one single-byte character (\\t for a tab) between fields
  --csv           RFC 4180 fields: a quoted field is compared by its value ("" is one ");
                  the delimiter is a comma unless --delimiter says otherwise. A record is one line
  --json-key KEY  compare JSON lines by the value at KEY (a top-level key or a dotted path such as
                  page.url), as its JSON text: "1" and 1 differ, "\\u0061" and "a" do not
  --missing M     a record without the field or key (or not JSON): an error naming file and line
                  (the default), keep (printed, never deduplicated) or drop
  --stats         one JSON line of counts and timings on stderr at the end`;

/** Runs `dedup`; returns the exit code. */
export async function dedup(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      approx: { type: "boolean" },
      "fp-rate": { type: "string" },
      items: { type: "string" },
      blocked: { type: "boolean" },
      stats: { type: "boolean" },
      store: { type: "string" },
      canonicalize: { type: "boolean" },
      redis: { type: "string" },
      cluster: { type: "boolean" },
      namespace: { type: "string" },
      dupefilter: { type: "string" },
      window: { type: "string" },
      refresh: { type: "boolean" },
      "ttl-map": { type: "string" },
      now: { type: "string" },
      durability: { type: "string" },
      "save-filter": { type: "string" },
      hash: { type: "string" },
      memory: { type: "string" },
      tmp: { type: "string" },
      field: { type: "string" },
      delimiter: { type: "string" },
      csv: { type: "boolean" },
      "json-key": { type: "string" },
      missing: { type: "string" },
      ...urlFlags,
    },
    allowPositionals: true,
    strict: true,
  });
  const exact = !values.approx;
  const fpRate = probabilityOption("fp-rate", values["fp-rate"], exact ? 0.01 : 0.001);
  const items = values.items === undefined ? undefined : integerOption("items", values.items);
  if (values.blocked && exact) throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--blocked needs --approx");
  const hash = values.hash ?? "xxh128";
  if (hash !== "xxh128" && hash !== "md5")
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `--hash must be md5 or xxh128, got ${JSON.stringify(values.hash)}`,
    );
  if (values.hash !== undefined && values.redis !== undefined)
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--hash is for dedup in memory; --redis keeps MD5 fingerprints");
  if (values.hash !== undefined && values.store !== undefined && values.window === undefined)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--hash does not apply to --store: a store keeps the fingerprint it was created with (XXH3-128)",
    );
  if (values["fp-rate"] !== undefined && values.store !== undefined)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--fp-rate does not apply to --store: it is exact, every line is looked up in memory",
    );
  if (values.store !== undefined && !exact)
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--store is for exact dedup; leave out --approx");
  if (
    values.redis === undefined &&
    (values.namespace !== undefined ||
      values.dupefilter !== undefined ||
      values.cluster ||
      values.durability !== undefined)
  )
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--namespace, --dupefilter, --cluster and --durability need --redis",
    );
  if (values.window === undefined && (values.refresh || values["ttl-map"] !== undefined || values.now !== undefined))
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--refresh, --ttl-map and --now are for --window: give it");
  if (values.window !== undefined && (values.hash !== undefined || values["save-filter"] !== undefined))
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--window keeps XXH3-128 fingerprints with their times: leave out --hash and --save-filter",
    );
  if (
    values.dupefilter !== undefined &&
    (values.namespace !== undefined ||
      values.window !== undefined ||
      values.durability !== undefined ||
      values.approx ||
      values.canonicalize)
  )
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--dupefilter is a Scrapy-Redis SET of request fingerprints (exact, the URL canonicalized by the fingerprint): leave out --namespace, --window, --durability, --approx and --canonicalize",
    );
  if (values.durability !== undefined && values.durability !== "local" && values.durability !== "replicated")
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `--durability must be local or replicated, got ${JSON.stringify(values.durability)}`,
    );
  if (values.durability === "replicated" && values.window !== undefined && !exact)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--durability replicated is for the exact seen-sets (a --window too) and --approx without --window; the Bloom --window acknowledges once its master has a batch",
    );
  if (values.redis !== undefined && values.store !== undefined)
    throw new CrawlsieveError("ERR_INVALID_ARGUMENT", "--redis and --store are two different seen-sets: give one");
  if (values["save-filter"] !== undefined) writableFileOption("save-filter", values["save-filter"]);
  const { key, missing } = keyOptions(values);
  // A field, a JSON value or a canonical URL is the key that is fingerprinted; the line is printed as it came.
  const keys =
    key === undefined && !values.canonicalize
      ? undefined
      : new LineKeys({
          record: key,
          missing,
          canonicalize: values.canonicalize ? urlOptions(values) : undefined,
          maxLineBytes: MAX_LINE_BYTES,
          limitOf: DEDUP_LIMIT_OF,
        });
  // Every key, in memory or with a store, goes through the byte pipeline in WebAssembly; a seen-set
  // in Redis or a Bloom filter to save goes through the keyed path, loaded only then.
  // A window keeps each key's time: it goes through the keyed path too.
  const pipeline = values.redis === undefined && values["save-filter"] === undefined && values.window === undefined;
  if (values.memory !== undefined && !(pipeline && exact))
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--memory is for exact dedup (in memory or with --store): leave out --approx, --redis, --window and --save-filter",
    );
  if (values.tmp !== undefined && !pipeline)
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      "--tmp is for dedup in memory or with --store: leave out --redis, --window and --save-filter",
    );
  if (pipeline) {
    const memory =
      values.memory === undefined
        ? Math.max(MIN_MEMORY, Math.floor(totalmem() / 2))
        : bytesOption("memory", values.memory, MIN_MEMORY);
    return pipelineDedup(positionals, {
      exact,
      fpRate,
      items,
      hash,
      stats: values.stats === true,
      memory,
      tmp: values.tmp ?? tmpdir(),
      store: values.store,
      keys,
    });
  }
  const { keyedDedup } = await import("./dedup-keyed.js");
  return keyedDedup(positionals, values, { exact, fpRate, items, keys });
}

/** The record key options (--field, --delimiter, --csv, --json-key, --missing), checked. */
function keyOptions(values: {
  field?: string;
  delimiter?: string;
  csv?: boolean;
  "json-key"?: string;
  missing?: string;
}): { key?: KeySpec; missing: MissingPolicy } {
  const missing = values.missing ?? "error";
  if (missing !== "error" && missing !== "keep" && missing !== "drop")
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `--missing must be keep, drop or error, got ${JSON.stringify(values.missing)}`,
    );
  if (values["json-key"] !== undefined) {
    if (values.field !== undefined || values.delimiter !== undefined || values.csv)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        "--json-key compares a JSON value; leave out --field, --delimiter and --csv",
      );
    const path = values["json-key"].split(".");
    if (path.some((name) => name.length === 0))
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        `--json-key must be a key or a dotted path of keys (url, page.url), got ${JSON.stringify(values["json-key"])}`,
      );
    return { key: { kind: "json", path }, missing };
  }
  if (values.field === undefined) {
    if (values.delimiter !== undefined || values.csv || values.missing !== undefined)
      throw new CrawlsieveError(
        "ERR_INVALID_ARGUMENT",
        "--delimiter, --csv and --missing need --field N (or --json-key for --missing)",
      );
    return { missing };
  }
  const field = integerOption("field", values.field, 1, 2 ** 31);
  const text = values.delimiter === "\\t" ? "\t" : (values.delimiter ?? (values.csv ? "," : "\t"));
  const bytes = new TextEncoder().encode(text);
  if (bytes.length !== 1 || (values.csv && (bytes[0] === 0x22 || bytes[0] === 0x0a || bytes[0] === 0x0d)))
    throw new CrawlsieveError(
      "ERR_INVALID_ARGUMENT",
      `--delimiter must be one single-byte character (or \\t for a tab)${values.csv ? ", not a quote or a line break," : ""} got ${JSON.stringify(values.delimiter)}`,
    );
  return { key: { kind: "field", field, delimiter: bytes[0], csv: values.csv === true }, missing };
}

/** `dedup` of raw lines: the byte pipeline (src/lines/), in memory or under a store (--store). */
async function pipelineDedup(
  files: string[],
  opts: {
    exact: boolean;
    fpRate: number;
    items?: number;
    hash: "xxh128" | "md5";
    stats: boolean;
    memory: number;
    tmp: string;
    store?: string;
    keys?: LineKeys;
  },
): Promise<number> {
  const started = performance.now();
  // Without --items, a regular file's size sizes the filter (see src/lines/stage-plan.ts).
  const inputBytes = opts.exact || opts.items !== undefined ? undefined : regularInputBytes(files);
  // Spilled lines' files go at exit, on an error, and on the signals that end a long run.
  removeTempFoldersAtExit();
  // Test-only: a small memory per instance, so tests spread over several with little input.
  const perMemory =
    process.env.CRAWLSIEVE_TEST_PER_MEMORY === undefined ? undefined : Number(process.env.CRAWLSIEVE_TEST_PER_MEMORY);
  let gate: StoreGate | undefined;
  let dedup: LineDeduplicator;
  if (opts.store !== undefined) {
    // The store's keys and the new lines' go into the table within --memory; past it lines not
    // found there wait under --tmp and are resolved at the end against the whole store. A store
    // too large for --memory is not read in: every new line waits for that end.
    gate = await StoreGate.open(
      opts.store,
      (hash, stored) => {
        const deferNew = defersStore(stored, opts.memory);
        return new LineDeduplicator({
          hash,
          memory: opts.memory,
          spill: fileSpill(opts.tmp),
          perMemory,
          fresh: true,
          tableItems: deferNew ? (opts.items ?? 0) : Math.max(opts.items ?? 0, stored),
          deferNew,
          keys: opts.keys,
        });
      },
      (message) => process.stderr.write(`crawlsieve: ${message}\n`),
    );
    dedup = gate.dedup;
  } else {
    // Exact: --items sizes the first table (within --memory and one memory); approx: the filter.
    const exactOptions = opts.exact
      ? { memory: opts.memory, spill: fileSpill(opts.tmp), perMemory, tableItems: opts.items }
      : { items: opts.items };
    dedup = new LineDeduplicator({
      approx: !opts.exact,
      fpRate: opts.fpRate,
      hash: opts.hash,
      inputBytes,
      keys: opts.keys,
      ...exactOptions,
    });
  }
  const progress = new Progress();
  let bytesIn = 0;
  try {
    await runLinePipeline(
      files,
      dedup,
      (bytes) => {
        bytesIn += bytes;
        progress.update(() => {
          const { lines, unique } = dedup.stats;
          return `${count(lines)} lines, ${count(unique)} unique, ${count(lines / ((performance.now() - started) / 1000))} lines/s`;
        });
      },
      opts.tmp,
      gate,
      opts.keys,
    );
  } catch (error) {
    await gate?.close().catch(() => undefined);
    dedup.dispose();
    throw error;
  }
  const { lines, unique, duplicates } = dedup.stats;
  const memoryBytes = dedup.byteLength;
  const described = dedup.describe();
  // The table's memory, touched already, is the store's to compact its file in at close.
  if (gate !== undefined) await gate.close(dedup.releaseArena());
  else dedup.dispose();
  progress.done();
  if (opts.stats) {
    const seconds = (performance.now() - started) / 1000;
    const stats = {
      command: "dedup",
      mode: opts.exact ? "exact" : "approx",
      filter: gate !== undefined ? "disk-log" : opts.exact ? "fingerprint-table" : "blocked",
      ...(opts.exact ? { hash: gate?.hash ?? opts.hash } : { fpRate: opts.fpRate }),
      canonicalize: opts.keys?.spec.canonicalize !== undefined,
      lines,
      unique,
      duplicates,
      bytesIn,
      memoryBytes,
      // No front filter in memory: every line is one table look-up (one cache line).
      ...(opts.exact ? { lookups: lines, lookupsAvoided: 0 } : {}),
      ...(gate !== undefined ? storeStats(gate) : {}),
      ...described,
      ...processIo(),
      seconds: Number(seconds.toFixed(3)),
      linesPerSecond: Math.round(lines / seconds),
    };
    process.stderr.write(JSON.stringify(stats) + "\n");
  }
  return 0;
}

/** Bytes this process read and wrote through system calls (Linux: /proc/self/io), input and output included; nothing elsewhere. */
function processIo(): { ioReadBytes?: number; ioWriteBytes?: number } {
  try {
    const io = readFileSync("/proc/self/io", "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(io)?.[1]);
    return { ioReadBytes: field("rchar"), ioWriteBytes: field("wchar") };
  } catch {
    return {};
  }
}

/** What --stats says of the store: its keys, those other processes added meanwhile, and the records of its sorted part read at the end (when it was looked up). */
function storeStats(gate: StoreGate): Record<string, number | undefined> {
  const { stored, fromOthers, ...sorted } = gate.stats;
  return { stored, fromOtherWriters: fromOthers, ...sorted };
}
