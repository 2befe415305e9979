// The table of a disk seen-set with a memory budget, from its first key: the keys of the file's sorted part stay on
// disk (cold-keys.ts: a filter and a block index in memory, a block read for a key the filter
// cannot rule out), and only what came after that part, this process's batches and others', is
// held in a FingerprintSet. Keys of the sorted part forgotten since are held too, in a set of
// their own, so the sorted part is never rewritten to forget one. A key is held when the
// FingerprintSet holds it, or the sorted part does and it was not forgotten. A background merge
// (background-merge.ts) writes the file as of a snapshot into a new sorted part while batches go
// on: at the snapshot the keys in memory are frozen (still held, no longer added to) and new keys
// gather in a new set; once the new part is in place the frozen keys go, and the keys the merge
// took that were forgotten since are the new part's forgotten ones.
import { FingerprintSet } from "../../exact/fingerprint-set.js";
import type { Arena } from "../../wasm/arena.js";
import { selectFlagged } from "../../wasm/batch.js";
import type { SievePlace } from "../../lines/key-sieve.js";
import type { ColdKeys } from "./cold-keys.js";

/** Bytes a key takes in a FingerprintSet, its growth room included (about 13-20 once placed). */
const TABLE_BYTES_A_KEY = 24;

/** Whether `stored` keys are too many to hold in a table within `memory` bytes: then they stay on disk (a TieredTable; dedup --store defers its new lines). */
export function exceedsBudget(stored: number, memory: number): boolean {
  return stored * TABLE_BYTES_A_KEY > memory;
}

/** Keys a table may hold within `memory` bytes: what a tiered table's keys in memory are first made for, so a large plan does not take memory the budget never gave. */
export function heldItems(memory: number): number {
  return Math.max(1, Math.floor(memory / TABLE_BYTES_A_KEY));
}

/**
 * Bytes left within `memory` for the keys a tiered table holds in memory, once its sorted part's
 * filter and index take `coldBytes`: at least a quarter of the budget, so a budget smaller than
 * the filter's floor (8 bits a key) still lets keys gather between merges.
 */
export function roomLeft(memory: number, coldBytes: number): number {
  return Math.max(memory - coldBytes, memory / 4);
}

/** What a tiered table's look-ups on disk cost (PersistedSeenSet's stats). */
export interface DiskLookups {
  /** Keys looked up in the sorted part (every one the table in memory does not hold). */
  readonly asked: number;
  /** 4 KiB blocks read and verified for them: a key the filter let through. */
  readonly blocksRead: number;
  /** Reads made (blocks near each other are read at once). */
  readonly reads: number;
  /** The sorted part's filter: bits a key (0: no sorted part). */
  readonly filterBits: number;
  /** The share of absent keys its size lets through to a block read. */
  readonly filterFpRate: number;
  /** Background merges of keys held in memory into the sorted part installed so far. */
  readonly merges: number;
  /** Of those, the merges that kept the part's filter as it was (it held every key: no second filter built). */
  readonly mergesKept: number;
  /** Times a sorted part was read whole for its filter and index (none saved beside the log fit). */
  readonly partScans: number;
  /** Whether a merge is running. */
  readonly merging: boolean;
  /** Batches that waited for a merge to end (keys gathered faster than it wrote). */
  readonly mergeWaits: number;
}

/** A disk seen-set's keys: its sorted part on disk, the rest in memory. */
export class TieredTable {
  private recent: FingerprintSet;
  /** Keys of the sorted part forgotten since it was written. */
  private forgotten = new FingerprintSet();
  /** Keys frozen at a merge's snapshot (more than one set after a merge failed), held until a merge takes them into the sorted part. */
  private frozen: FingerprintSet[] = [];
  /** While a merge runs: keys it takes (frozen, or of the sorted part) forgotten since its snapshot. */
  private since: FingerprintSet | undefined;
  /** Keys looked up in sorted parts replaced since, and blocks read for them. */
  private asked = 0;
  private blocksRead = 0;
  private reads = 0;
  private merges = 0;
  private mergesKept = 0;
  /** Sorted parts replaced since that were read whole (ColdKeys.scanned). */
  private scans = 0;
  /** Batches that waited for a merge: keys gathered past twice what the budget leaves them while it ran. */
  waited = 0;

  constructor(
    private cold: ColdKeys | undefined,
    items: number,
  ) {
    this.recent = new FingerprintSet({ items });
  }

  /** Keys held. */
  get size(): number {
    return (this.cold?.count ?? 0) - this.forgotten.size + this.recent.size + this.frozenSize;
  }

  /** Fingerprints held in memory: keys added after the sorted part (frozen ones too), and its keys forgotten since. */
  get inMemory(): number {
    return this.recent.size + this.forgotten.size + this.frozenSize + (this.since?.size ?? 0);
  }

  private get frozenSize(): number {
    return this.frozen.reduce((sum, set) => sum + set.size, 0);
  }

  /** Bytes the sorted part's filter and block index take. */
  get coldBytes(): number {
    return this.cold?.byteLength ?? 0;
  }

  /**
   * The sorted part's filter, when a merge of every key held now (and `more` to come) can keep it
   * where it is (ColdKeys.keptFor: it holds them all already), else undefined.
   */
  filterKept(budget: number, more = 0): { memory: WebAssembly.Memory; place: SievePlace } | undefined {
    return this.cold?.keptFor(this.cold.count + this.inMemory + more, budget);
  }

  /** Where the sorted part's filter lies now, the keys added to it counted (a merge that kept it hands this on to the new part). */
  get filterNow(): SievePlace | undefined {
    return this.cold?.filter;
  }

  /** Keys looked up on disk, the blocks read for them and the reads made, and the sorted part's filter: bits a key and the share of absent keys it lets through to a read. */
  get diskLookups(): DiskLookups {
    const cold = this.cold;
    return {
      asked: this.asked + (cold?.asked ?? 0),
      blocksRead: this.blocksRead + (cold?.blocksRead ?? 0),
      reads: this.reads + (cold?.reads ?? 0),
      filterBits: cold?.filterBits ?? 0,
      filterFpRate: cold?.filterFpRate ?? 0,
      merges: this.merges,
      mergesKept: this.mergesKept,
      partScans: this.scans + (cold?.scanned === true ? 1 : 0),
      merging: this.since !== undefined,
      mergeWaits: this.waited,
    };
  }

  /**
   * Takes the sorted part of a file put in place of the one read (this process's merge, or another
   * process compacted it), made by `make` in the old part's memory: what came after the old one
   * goes too, and is read again. Should `make` fail, no part is held until the next replaceCold
   * (the log is read again then: its driver forgets what it read when a call fails).
   */
  replaceCold(make: (memory: Arena | undefined) => ColdKeys | undefined): void {
    this.recent.clear();
    this.forgotten.clear();
    this.thaw();
    this.dropFrozen();
    this.swapCold(make);
  }

  /** A merge's snapshot was taken: the keys in memory are frozen, new ones gather apart, and what the merge takes that is forgotten from now on is noted. */
  freeze(): void {
    if (this.since !== undefined) throw new Error("a merge is already running");
    this.frozen.push(this.recent);
    // Made small and grown as keys come: kept cleared for the next merge instead, the frozen set's memory would stay resident beside it (measured: 10-20 MiB more at the peak).
    this.recent = new FingerprintSet();
    this.since = new FingerprintSet();
  }

  /** The merge ended without a new part (failed, or the file changed): the frozen keys stay held, as they were. */
  thaw(): void {
    this.since?.dispose();
    this.since = undefined;
  }

  /**
   * The merge's new sorted part is in place, made by `make` in the old part's memory: it holds the
   * frozen keys and the old part's live ones, so those go from memory, and the keys it took that
   * were forgotten since its snapshot are its forgotten ones. `kept`: the merge kept the old
   * part's filter (it holds every key already). Should `make` fail, as replaceCold.
   */
  merged(make: (memory: Arena | undefined) => ColdKeys | undefined, kept: boolean): void {
    const since = this.since;
    if (since === undefined) throw new Error("no merge is running");
    this.since = undefined;
    this.dropFrozen();
    this.forgotten.dispose();
    this.forgotten = since;
    this.merges++;
    if (kept) this.mergesKept++;
    const holding = this.cold?.holdsEveryKey === true;
    this.swapCold(make);
    // A filter the merge built holds the keys of its snapshot; those that came since (noted in the
    // old one) are added to it, so it holds every key held and a later merge may keep it. A kept
    // filter holds them already, unless the old part's stopped taking keys while the merge ran.
    const cold = this.cold;
    if (cold === undefined) return;
    if (!kept) this.recent.eachPacked((packed) => cold.note(packed));
    else if (!holding) cold.lacksKeys();
  }

  /** 1 for each packed fingerprint held. */
  hasFingerprints(packed: Uint8Array): Uint8Array {
    const flags = this.inSets(packed);
    const live = this.liveCold(packed, flags);
    for (let i = 0; i < flags.length; i++) flags[i] |= live[i];
    return flags;
  }

  /** Adds packed fingerprints; 1 for each that was not held (a repeat within the call is not new). */
  addFingerprints(packed: Uint8Array): Uint8Array {
    const held = this.inSets(packed);
    const live = this.liveCold(packed, held);
    for (let i = 0; i < held.length; i++) held[i] = held[i] | live[i] ? 0 : 1;
    const fresh = selectFlagged(packed, held);
    // Into the part's filter too: it holds every key held, so the next merge may keep it (ColdKeys.keptFor).
    this.cold?.note(fresh);
    return scatter(held, this.recent.addFingerprints(fresh));
  }

  /**
   * Adds packed fingerprints a batch after the sorted part recorded as new, as the log is read (at
   * an open, or another process's batches): each was new when written, so none is in the part
   * unless forgotten since, and held in memory it is held either way; no look-up on disk (at an
   * open after a fill, millions of keys a block read each for the filter's false positives, which
   * cover most of the part's blocks). A key a damaged log recorded twice counts twice in `size`
   * until the next merge.
   */
  addLogged(packed: Uint8Array): void {
    const fresh = selectFlagged(
      packed,
      this.inSets(packed).map((held) => 1 - held),
    );
    this.cold?.note(fresh);
    this.recent.addFingerprints(fresh);
  }

  /** Forgets packed fingerprints; 1 for each that was held (a repeat within the call is not). */
  removeFingerprints(packed: Uint8Array): Uint8Array {
    const live = this.liveCold(packed, new Uint8Array(packed.length / 16));
    const taken = new Uint8Array(live.length);
    for (const set of this.frozen) {
      const gone = set.removeFingerprints(packed);
      for (let i = 0; i < gone.length; i++) taken[i] |= gone[i];
    }
    const fromCold = scatter(live, this.forgotten.addFingerprints(selectFlagged(packed, live)));
    for (let i = 0; i < taken.length; i++) taken[i] |= fromCold[i];
    // What a running merge takes into its part and is gone now is the new part's forgotten.
    this.since?.addFingerprints(selectFlagged(packed, taken));
    const flags = this.recent.removeFingerprints(packed);
    for (let i = 0; i < flags.length; i++) flags[i] |= taken[i];
    return flags;
  }

  /** Forgets every key (the file was cleared). */
  clear(): void {
    this.replaceCold(() => undefined);
  }

  /** Hands over the memory of the keys held in memory (for the file's compaction at close); the rest is released. */
  releaseArena(): Arena | undefined {
    this.cold?.close();
    this.cold = undefined;
    this.forgotten.dispose();
    this.thaw();
    this.dropFrozen();
    return this.recent.releaseArena();
  }

  /** 1 for each packed fingerprint the sets in memory hold (recent or frozen). */
  private inSets(packed: Uint8Array): Uint8Array {
    const flags = this.recent.hasFingerprints(packed);
    for (const set of this.frozen) {
      const held = set.hasFingerprints(packed);
      for (let i = 0; i < flags.length; i++) flags[i] |= held[i];
    }
    return flags;
  }

  private dropFrozen(): void {
    for (const set of this.frozen) set.dispose();
    this.frozen = [];
  }

  /** Puts the part `make` makes (in the old part's memory) in place of the old one, keeping its counts. */
  private swapCold(make: (memory: Arena | undefined) => ColdKeys | undefined): void {
    const old = this.cold;
    this.cold = undefined;
    this.asked += old?.asked ?? 0;
    this.blocksRead += old?.blocksRead ?? 0;
    this.reads += old?.reads ?? 0;
    if (old?.scanned === true) this.scans++;
    this.cold = make(old?.releaseArena());
  }

  /** 1 for each fingerprint not `skip`ped that the sorted part holds and that was not forgotten since. */
  private liveCold(packed: Uint8Array, skip: Uint8Array): Uint8Array {
    const out = new Uint8Array(skip.length);
    if (this.cold === undefined) return out;
    const ask = skip.map((s) => 1 - s);
    const asked = selectFlagged(packed, ask);
    if (asked.length === 0) return out;
    const found = this.cold.has(asked);
    const kept = scatter(
      found,
      this.forgotten.hasFingerprints(selectFlagged(asked, found)).map((f) => 1 - f),
    );
    return scatter(ask, kept, out);
  }
}

/** Spreads `values` (one for each 1 of `mask`, in order) over the places of the 1s: 0 elsewhere. */
function scatter(mask: Uint8Array, values: Uint8Array, out = new Uint8Array(mask.length)): Uint8Array {
  for (let i = 0, j = 0; i < mask.length; i++) if (mask[i] === 1) out[i] = values[j++];
  return out;
}
