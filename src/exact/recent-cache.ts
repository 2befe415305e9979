// A local cache of recently seen keys in front of a shared seen-set (Redis, a store): on a crawl
// most duplicates are recent, and each would otherwise cost a round trip. The cache is a 2-way
// set-associative table of 64-bit key fingerprints in WebAssembly memory (assembly/recent-cache.ts),
// 16 bytes and a bit per entry. It only ever answers "seen": a key it does not hold goes to the
// seen-set, which decides, and is remembered afterwards whatever the answer (the fleet has it
// now). So it cannot make a key new twice in a fleet; what it can do is drop a new key whose
// 64-bit fingerprint equals a cached one: about entries / 2^64 per key (5.7e-14 at 2^20 entries).
import * as check from "../validate.js";
import { Arena } from "../wasm/arena.js";
import { eachBatch } from "../wasm/batch.js";
import { Staging } from "../wasm/staging.js";
import { CrawlsieveError, DisposedError } from "../errors.js";

/** A seen-set the cache can front: addMany is an atomic check-and-insert (1 where a key was new). */
export interface CheckAndInsert {
  /** Atomic check-and-insert: one answer per key, 1 where it was new. */
  addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array> | Uint8Array;
}

/** Options of withRecentCache. */
export interface RecentCacheOptions {
  /** Fingerprints kept (rounded up to a power of two; default 2^20, 16 MiB). */
  readonly entries?: number;
}

/** Counts of a cached seen-set: keys answered locally and keys sent on. */
export interface RecentCacheStats {
  readonly hits: number;
  readonly misses: number;
}

/** `seen` with a recent-key cache in front: same answers, fewer round trips. */
export interface CachedSeenSet {
  /** The seen-set's answers, with keys the cache recently saw answered here. */
  addMany(keys: readonly (string | Uint8Array)[]): Promise<Uint8Array>;
  readonly stats: RecentCacheStats;
  /** Bytes of the fingerprint table. */
  readonly byteLength: number;
  /** Frees the cache's WebAssembly memory (the seen-set itself is not closed). */
  dispose(): void;
}

const DEFAULT_ENTRIES = 2 ** 20;
// A key's UTF-8 bytes read one character a byte: the Map key of a call's repeats. The seen-set
// compares UTF-8 bytes, so a string and a byte key are one key only when the bytes are the
// string's UTF-8 (reading byte keys alone as latin1 made "Ã©" and c3 a9 one key).
const utf8 = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const bytesKey = (key: string | Uint8Array): string => latin1.decode(typeof key === "string" ? utf8.encode(key) : key);

/** Puts a bounded cache of recently seen keys in front of `seen`. */
export function withRecentCache(seen: CheckAndInsert, options: RecentCacheOptions = {}): CachedSeenSet {
  if (seen === null || typeof seen !== "object" || typeof seen.addMany !== "function")
    throw new TypeError("withRecentCache needs a seen-set with addMany(keys)");
  const opts = check.options<RecentCacheOptions>("options", options);
  const entries =
    2 ** Math.ceil(Math.log2(check.integerInRange("entries", opts.entries ?? DEFAULT_ENTRIES, 2, 2 ** 26)));
  const sets = entries / 2;
  let arena: Arena | undefined = new Arena();
  // Each set's two 8-byte ways, then one byte a set naming the way used last.
  const tableBytes = sets * 16 + sets;
  const { table, end } = arena.place({ table: tableBytes }, arena.base, "the recent cache");
  const staging = new Staging(arena, end);
  const stats = { hits: 0, misses: 0 };
  const live = () => {
    if (arena === undefined) throw new DisposedError("withRecentCache");
    return arena;
  };

  /** Runs a kernel over keys batch by batch, after hashing each batch into the staging region. */
  const eachHashed = (keys: readonly (string | Uint8Array)[], kernel: (a: Arena, n: number, at: number) => void) => {
    const a = live();
    eachBatch(staging, { list: keys }, (n, at) => {
      staging.hashStaged(n);
      kernel(a, n, at);
    });
  };

  return {
    async addMany(keys) {
      check.keyList("keys", keys);
      const fresh = new Uint8Array(keys.length);
      const missed: number[] = [];
      eachHashed(keys, (a, n, at) => {
        stats.hits += a.k.recentProbe(table, sets - 1, staging.hashesPtr, n, staging.outPtr);
        const hit = a.bytes(staging.outPtr, n);
        for (let j = 0; j < n; j++) if (hit[j] === 0) missed.push(at + j);
      });
      if (missed.length === 0) return fresh;
      // A key repeated inside this call goes on once: the seen-set records its first occurrence,
      // so the repeats are duplicates whatever it answers (as the seen-set would have said).
      const first = new Map<string, number>();
      const sent: (string | Uint8Array)[] = [];
      const answerOf = new Int32Array(missed.length).fill(-1);
      missed.forEach((i, j) => {
        const key = keys[i];
        const text = bytesKey(key);
        if (first.has(text)) return;
        first.set(text, sent.length);
        answerOf[j] = sent.length;
        sent.push(key);
      });
      stats.hits += missed.length - sent.length;
      stats.misses += sent.length;
      const answers = await seen.addMany(sent);
      // A missing answer is not "seen": taking it so would drop a key the fleet may never have had.
      if (answers === null || typeof answers !== "object" || answers.length !== sent.length) {
        const got = answers === null || typeof answers !== "object" ? String(answers) : `${answers.length} keys`;
        throw new CrawlsieveError(
          "ERR_SEEN_SET_ANSWERS",
          `the seen-set behind withRecentCache answered ${got} where it was given ${sent.length}`,
        );
      }
      missed.forEach((i, j) => (fresh[i] = answerOf[j] === -1 ? 0 : answers[answerOf[j]]));
      // Acknowledged by the seen-set: new or not, the fleet has these keys now.
      eachHashed(sent, (a, n) => {
        staging.skip.fill(a.u8, 0, 0, n);
        a.k.recentInsert(table, sets - 1, staging.hashesPtr, n, staging.skipPtr);
      });
      return fresh;
    },
    get stats() {
      return { ...stats };
    },
    byteLength: tableBytes,
    dispose() {
      arena = undefined;
    },
  };
}
