// The browser's exact windowed seen-set (openSeenSet({ backend: "browser", name, window })): the
// windowed set over a log (../log-window-set.ts) on the same stores as the browser seen-set (an
// OPFS file, IndexedDB where OPFS is missing) under the name's Web Lock. Its records are the disk
// window's (keys with their times, removals, tombstones), so every tab and worker opening the name
// takes the others' batches before deciding (each key new for exactly one of them), and a reload
// or a browser restart keeps every key's time and every forgotten host.
import { InvalidArgumentError } from "../../errors.js";
import { ExactWindowSet } from "../../window/exact-window-set.js";
import { type Ttl, ttlSeconds } from "../../window/ttl-rules.js";
import { LogWindowSet } from "../log-window-set.js";
import type { WindowedSeenSet } from "../seen-set.js";
import type { BrowserSeenSpec } from "../seen-spec.js";
import { type BrowserStorage, storageError } from "./batch-log.js";
import { openBrowserLog } from "./browser-seen-set.js";

/** An exact windowed seen-set kept in the browser: `storage` says where. */
export interface BrowserWindowSet extends WindowedSeenSet {
  readonly backend: "browser";
  /** "opfs" (a file in the Origin Private File System) or "indexeddb". */
  readonly storage: BrowserStorage;
  /** Records keys at `at` (ms; default the clock, read under the lock): 1 where a key was not seen within its TTL. */
  addMany(keys: readonly (string | Uint8Array)[], at?: number): Promise<Uint8Array>;
  /** Forgets every key of a host and its subdomains recorded until now (`at`, ms). */
  forgetHost(host: string, at?: number): Promise<void>;
  /** Forgets every key that starts with a URL prefix recorded until now (`at`, ms). */
  forgetPrefix(prefix: string, at?: number): Promise<void>;
}

/** Opens (or creates) the windowed browser seen-set `spec.name` (a spec with `window`). */
export async function browserWindowSet(spec: BrowserSeenSpec): Promise<BrowserWindowSet> {
  ttlSeconds("window", spec.window); // named as the spec names it
  if (spec.now !== undefined && typeof spec.now !== "function")
    throw new InvalidArgumentError("now", spec.now, "a function returning ms since the epoch");
  const options = {
    ttl: spec.window as Ttl,
    ttlMap: spec.ttlMap,
    semantics: spec.semantics,
    items: spec.items,
    now: spec.now,
  };
  // The options are checked before the store is opened (or made).
  new ExactWindowSet(options).dispose();
  const { log, lock } = await openBrowserLog(spec);
  const set = new LogWindowSet(options, { backend: "browser", log, lock, storageError }) as LogWindowSet &
    BrowserWindowSet;
  try {
    // Read in now: a damaged or plain store is said at open.
    await set.size();
  } catch (error) {
    await set.close().catch(() => undefined);
    throw error;
  }
  return set;
}
