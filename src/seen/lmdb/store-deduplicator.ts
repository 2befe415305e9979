// IMP-CB over an external fingerprint store (on disk, or anywhere with synchronous reads): the
// counting filter lives in memory and is saved beside the store; a key goes to the store only
// when every counter of its fingerprint is non-zero. Every batch is decided and committed inside
// one write transaction, durably, before its answers are returned, so what a caller printed as
// new is never forgotten after a crash, and among processes sharing the store exactly one sees a
// key as new. A zero counter proves a key new only while this process's filter covers the store:
// it does when the epoch read inside the transaction is the one its filter was built or last
// updated at; after another process commits, every key is looked up in the store instead.
import { CountingBloomFilter } from "../../bloom/counting-bloom-filter.js";
import { FormatError, InvalidArgumentError } from "../../errors.js";
import { toHex } from "../../hash/md5.js";
import * as check from "../../validate.js";
import { sharedEngine } from "../../wasm/engine.js";
import { Accumulator, countOf, eachDigestBatch, type Keys } from "../../wasm/batch.js";
import { RecordArray } from "../../wasm/record-array.js";
import { BATCH } from "../../wasm/staging.js";
import type { DedupStats } from "../../exact/imp-cb.js";
import type { FingerprintStore } from "./fingerprint-store.js";

/** Options of StoreDeduplicator (used only when the store has no saved counting filter). */
export interface StoreDeduplicatorOptions {
  readonly items: number;
  readonly fpRate?: number;
  readonly counterBits?: number;
  /** Explicit counters (m) and hashes (k) instead of sizing from fpRate, e.g. m/n = 20, k = 8. */
  readonly counters?: number;
  readonly hashes?: number;
}

const SIDE = "counting-filter.csiv";

/**
 * Exact dedup by MD5 fingerprint against a FingerprintStore, fronted by a counting filter.
 * @deprecated Since 0.3.0: use `openDiskDeduplicator(dir)` (IMP-CB with reference counts on the disk engine), or `openSeenSet({ backend: "disk", dir })`, which imports an LMDB store in `dir` once; removed in 0.4.0.
 */
export class StoreDeduplicator {
  private readonly filter: CountingBloomFilter;
  /** True when the saved filter did not match the store and was rebuilt from it. */
  readonly rebuilt: boolean;
  private seen = 0;
  private fresh = 0;
  private lookups = 0;
  private avoided = 0;
  private missed = 0;
  /** The store epoch the filter holds every fingerprint of; undefined once another process wrote. */
  private coveredEpoch: number | undefined;

  constructor(
    private readonly store: FingerprintStore,
    options: StoreDeduplicatorOptions,
  ) {
    const opts = check.options<StoreDeduplicatorOptions>("options", options);
    const saved = loadSaved(store);
    if (saved !== undefined) {
      this.filter = saved.filter;
      this.coveredEpoch = saved.epoch;
      this.rebuilt = false;
    } else {
      this.filter =
        opts.counters !== undefined || opts.hashes !== undefined
          ? new CountingBloomFilter({ counters: opts.counters, hashes: opts.hashes, counterBits: opts.counterBits })
          : new CountingBloomFilter({
              items: opts.items ?? 1,
              fpRate: opts.fpRate ?? 0.01,
              counterBits: opts.counterBits,
            });
      this.rebuilt = store.size > 0;
      this.coveredEpoch = this.rebuild();
    }
  }

  /** Checks one key: isNew when stored now with one reference, count its references after the call. Durable on return. */
  check(key: string | Uint8Array): { isNew: boolean; count: number } {
    const { isNew, counts } = this.checkMany([check.key("key", key)]);
    return { isNew: isNew[0] === 1, count: counts[0] };
  }

  /** Checks keys in order; isNew[i] = 1 when new; counts[i] = references after the call. Durable on return. */
  checkMany(keys: readonly (string | Uint8Array)[]): { isNew: Uint8Array; counts: Uint32Array } {
    check.keyList("keys", keys);
    return this.run({ list: keys });
  }

  /** Checks keys given as spans of one buffer. */
  checkSpans(data: Uint8Array, spans: ArrayLike<number>): { isNew: Uint8Array; counts: Uint32Array } {
    check.spans(data, spans);
    return this.run({ data, spans });
  }

  /**
   * Read-only: out[i] = 1 when keys[i] is in the store, as last committed by any writer. A zero
   * counter answers without a read only while this process's filter covers the store.
   */
  hasMany(keys: readonly (string | Uint8Array)[]): Uint8Array {
    check.keyList("keys", keys);
    const out = new Uint8Array(keys.length);
    const maybe = new Uint8Array(BATCH);
    this.eachDigestCopy({ list: keys }, (digests, n, at) => {
      const covering = this.coveredEpoch !== undefined && this.coveredEpoch === this.store.epoch;
      if (covering) {
        this.stageDigests(digests, n);
        this.filter.store.min(n, maybe, 0);
      }
      for (let j = 0; j < n; j++) {
        if (covering && maybe[j] === 0) continue;
        out[at + j] = this.store.read(digests.subarray(16 * j, 16 * j + 16)) > 0 ? 1 : 0;
      }
    });
    return out;
  }

  /**
   * Drops one reference of each key (every reference with `all`), in one durable write
   * transaction per batch; at the last reference the key is forgotten and its counters go down.
   * removed[i] = 1 when keys[i] was there; counts[i] = references left.
   */
  removeMany(
    keys: readonly (string | Uint8Array)[],
    options: { all?: boolean } = {},
  ): { removed: Uint8Array; counts: Uint32Array } {
    check.keyList("keys", keys);
    const all = check.options<{ all: boolean }>("options", options).all ?? false;
    if (typeof all !== "boolean") throw new InvalidArgumentError("all", all, "true or false");
    const removed = new Uint8Array(keys.length);
    const counts = new Uint32Array(keys.length);
    const changes = new Map<string, { fingerprint: Uint8Array; count: number }>();
    this.eachDigestCopy({ list: keys }, (digests, n, at) => {
      let covering = false;
      const epoch = this.store.update((view) => {
        covering = this.coveredEpoch === view.epoch;
        changes.clear();
        for (let j = 0; j < n; j++) {
          const fingerprint = digests.subarray(16 * j, 16 * j + 16);
          const hex = toHex(fingerprint);
          const before = changes.get(hex)?.count ?? view.get(fingerprint);
          if (before === 0) continue;
          const after = all ? 0 : before - 1;
          changes.set(hex, { fingerprint, count: after });
          removed[at + j] = 1;
          counts[at + j] = after;
        }
        return changes;
      });
      // A forgotten fingerprint lowers its counters once, as its insert raised them once.
      const gone = [...changes.values()].filter((c) => c.count === 0);
      if (covering && gone.length > 0) {
        const staged = new Uint8Array(16 * gone.length);
        gone.forEach((c, j) => staged.set(c.fingerprint, 16 * j));
        this.stageDigests(staged, gone.length);
        this.filter.store.remove(gone.length, new Uint8Array(gone.length), 0);
      }
      this.coveredEpoch = covering ? epoch : undefined;
    });
    return { removed, counts };
  }

  /** Counts of keys and of store look-ups made and avoided. */
  get stats(): DedupStats {
    return {
      seen: this.seen,
      new: this.fresh,
      duplicates: this.seen - this.fresh,
      lookups: this.lookups,
      lookupsAvoided: this.avoided,
      lookupsForNew: this.missed,
    };
  }

  /** Distinct keys in the store. */
  get size(): number {
    return this.store.size;
  }

  /** True while the counting filter holds every fingerprint in the store (no other process wrote since it was built). */
  get filterCoversStore(): boolean {
    return this.coveredEpoch !== undefined;
  }

  /**
   * Saves the counting filter beside the store, tagged with the store's identity and the epoch it
   * covers; a filter that stopped covering the store (another process wrote) is not saved, so a
   * later run rebuilds instead of trusting it. Returns whether it was saved.
   */
  save(): boolean {
    if (this.coveredEpoch === undefined) return false;
    this.store.writeSide(SIDE, writeSide(this.store.id, this.coveredEpoch, this.filter.serialize()));
    return true;
  }

  /** Saves the filter and closes the store. */
  close(): void {
    this.save();
    this.filter.dispose();
    this.store.close();
  }

  private run(keys: Keys): { isNew: Uint8Array; counts: Uint32Array } {
    const flags = new Uint8Array(countOf(keys));
    const counts = new Uint32Array(flags.length);
    const maybe = new Uint8Array(BATCH);
    const skip = new Uint8Array(BATCH);
    const changes = new Map<string, { fingerprint: Uint8Array; count: number }>();
    this.eachDigestCopy(keys, (digests, n, i) => {
      this.stageDigests(digests, n);
      this.filter.store.min(n, maybe, 0);
      let covering = false;
      const epoch = this.store.update((view) => {
        // The epoch is read under the write lock: equal to the covered one, no one else wrote since.
        covering = this.coveredEpoch === view.epoch;
        changes.clear();
        skip.fill(1, 0, n);
        let avoided = 0;
        let lookups = 0;
        let missed = 0;
        for (let j = 0; j < n; j++) {
          const fingerprint = digests.subarray(16 * j, 16 * j + 16);
          const hex = toHex(fingerprint);
          const pending = changes.get(hex);
          let before: number;
          if (pending !== undefined) before = pending.count;
          else if (covering && maybe[j] === 0) {
            before = 0;
            avoided++;
          } else {
            before = view.get(fingerprint);
            lookups++;
            if (before === 0) missed++;
          }
          if (before === 0) skip[j] = 0;
          const after = before === 0xffffffff ? before : before + 1;
          changes.set(hex, { fingerprint, count: after });
          flags[i + j] = before === 0 ? 1 : 0;
          counts[i + j] = after;
        }
        this.avoided += avoided;
        this.lookups += lookups;
        this.missed += missed;
        return changes;
      });
      // A new fingerprint raises its counters once. The filter still covers the store only if no
      // other process committed between the epoch it covered and this commit.
      this.stageDigests(digests, n);
      this.filter.store.set(n, skip, maybe, 0);
      this.coveredEpoch = covering ? epoch : undefined;
      this.seen += n;
      for (let j = 0; j < n; j++) this.fresh += flags[i + j];
    });
    return { isNew: flags, counts };
  }

  /** MD5s (already checked) keys batch by batch on the one batch loop and visits each batch's digests (a copy, 16 bytes a key). */
  private eachDigestCopy(keys: Keys, visit: (digests: Uint8Array, n: number, at: number) => void): void {
    eachDigestBatch(
      () => sharedEngine().staging,
      keys,
      "md5",
      (digests, n, at) => visit(digests.slice(), n, at),
    );
  }

  /** Puts digests into the filter's hash-pair region (h2 forced odd, as the in-memory Deduplicator does). */
  private stageDigests(digests: Uint8Array, n: number): void {
    const { arena, staging } = this.filter.store.front;
    staging.hashes.copyIn(arena.u8, digests.subarray(0, staging.hashes.size * n));
    const pairs = new RecordArray(arena.u8, staging.hashes, { h2: arena.k.HASH_H2 }, 0, n);
    const h2Low = pairs.low("h2");
    for (let j = 0; j < n; j++) pairs.setWord(j, h2Low, pairs.word(j, h2Low) | 1);
  }

  /** Rebuilds the counters from every fingerprint in the store; returns the epoch they cover, if one provably. */
  private rebuild(): number | undefined {
    const before = this.store.epoch;
    const digests = new Uint8Array(16 * BATCH);
    const flags = new Uint8Array(BATCH);
    const batch = new Accumulator(BATCH, (n) => {
      this.stageDigests(digests, n);
      this.filter.store.set(n, undefined, flags, 0);
    });
    for (const fingerprint of this.store.fingerprints()) {
      digests.set(fingerprint, 16 * batch.at);
      batch.added();
    }
    batch.flush();
    // A commit by another process during the scan may or may not have been seen: then no epoch is covered.
    return this.store.epoch === before ? before : undefined;
  }
}

// The side file: magic, format version, the store's identity and the covered epoch, then the
// counting filter in format v1 (which carries its own checksum).
const SIDE_MAGIC = 0x46435343; // "CSCF" little-endian
const SIDE_VERSION = 1;
const ID_BYTES = 32;
const SIDE_HEAD = 4 + 4 + ID_BYTES + 8;

function writeSide(id: string, epoch: number, filter: Uint8Array): Uint8Array {
  const side = new Uint8Array(SIDE_HEAD + filter.length);
  const view = new DataView(side.buffer);
  view.setUint32(0, SIDE_MAGIC, true);
  view.setUint32(4, SIDE_VERSION, true);
  new TextEncoder().encodeInto(id.padEnd(ID_BYTES).slice(0, ID_BYTES), side.subarray(8, 8 + ID_BYTES));
  view.setFloat64(8 + ID_BYTES, epoch, true);
  side.set(filter, SIDE_HEAD);
  return side;
}

/** The saved counting filter, when it exists, loads, and belongs to this store at its current epoch. */
function loadSaved(store: FingerprintStore): { filter: CountingBloomFilter; epoch: number } | undefined {
  const side = store.readSide(SIDE);
  if (side === undefined || side.length < SIDE_HEAD) return undefined;
  const view = new DataView(side.buffer, side.byteOffset, SIDE_HEAD);
  if (view.getUint32(0, true) !== SIDE_MAGIC || view.getUint32(4, true) !== SIDE_VERSION) return undefined;
  if (new TextDecoder().decode(side.subarray(8, 8 + ID_BYTES)) !== store.id.padEnd(ID_BYTES).slice(0, ID_BYTES))
    return undefined;
  const epoch = view.getFloat64(8 + ID_BYTES, true);
  if (epoch !== store.epoch) return undefined;
  try {
    return { filter: CountingBloomFilter.deserialize(side.subarray(SIDE_HEAD)), epoch };
  } catch (error) {
    if (error instanceof FormatError) return undefined;
    throw error;
  }
}
