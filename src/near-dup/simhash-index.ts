// Finds every stored fingerprint within Hamming distance k of a query without scanning them all:
// the permuted tables of Manku et al. (see assembly/near-dup.ts and layouts.ts), in WASM memory.
// New fingerprints wait in a pending list that queries scan in full; when it fills (1/16 of the
// index, at least 4096) every table is rebuilt with them, and with removed ids dropped.
import { DisposedError, FormatError, InvalidArgumentError } from "../errors.js";
import { concat, Kind, writeContainer } from "../format/container.js";
import { fromStoredParams, payloadOf, readStored, type Recipe } from "../format/recipe.js";
import * as check from "../validate.js";
import { Arena } from "../wasm/arena.js";
import { array, ArrayRegion } from "../wasm/array-region.js";
import { eachRun } from "../wasm/batch.js";
import { KernelRecord } from "../wasm/record.js";
import { RecordArray } from "../wasm/record-array.js";
import { BATCH } from "../wasm/staging.js";
import { defaultTables, layout, layoutChoices, MAX_TABLES, type TableSpec } from "./layouts.js";

/** Options of NearDupIndex. */
export interface NearDupIndexOptions {
  /** Largest Hamming distance reported (k), 0 to 8; default 3. */
  readonly maxDistance?: number;
  /** Tables of the layout (for k = 3: 4, 10, 16 or 20); default: chosen by size at each rebuild. */
  readonly layout?: number;
}

/** A stored fingerprint near a query. */
export interface NearMatch {
  readonly id: number;
  readonly distance: number;
}

/** Two stored fingerprints near each other (a < b in insertion order of their entries). */
export interface NearPair {
  readonly a: number;
  readonly b: number;
  readonly distance: number;
}

const PARAM_BYTES = 16;

/** Format v1, kind 9: distance, fixed layout (0: chosen by size), entry count; the payload is the fingerprints, then their ids. */
const RECIPE: Recipe<{ options: NearDupIndexOptions; count: number }> = {
  kind: Kind.NearDupIndex,
  what: "an index",
  paramBytes: PARAM_BYTES,
  read(params, payloadBytes) {
    const count = Number(params.getBigUint64(8, true));
    if (payloadBytes !== 12 * count)
      throw new FormatError(
        `payload of ${payloadBytes} bytes where ${count} entries need ${12 * count}`,
        "ERR_BAD_PARAMS",
      );
    const tables = params.getUint32(4, true);
    return { options: { maxDistance: params.getUint32(0, true), layout: tables === 0 ? undefined : tables }, count };
  },
};
const MIN_PENDING = 4096;
const CHUNK = 65536;

interface Layout {
  /** One descriptor a table (ND_TABLE_BYTES each). */
  readonly descs: ArrayRegion;
  /** Where a query leaves its result count (one u32). */
  readonly state: ArrayRegion;
  /** Entries added since the tables were built: fingerprints (u64) and ids (u32), up to their length. */
  readonly pendingFps: ArrayRegion;
  readonly pendingIds: ArrayRegion;
  /** The committed entries' ids, in table 0's order. */
  readonly ids: ArrayRegion;
  readonly end: number;
}

/** The permuted-table near-duplicate index over 64-bit fingerprints. */
export class NearDupIndex {
  /** Largest distance reported. */
  readonly maxDistance: number;
  private readonly fixedTables: number | undefined;
  private arena: Arena | undefined;
  private specs: TableSpec[] = [];
  private place: Layout;
  private committed = 0;
  private pending = 0;
  private readonly removed = new Set<number>();
  private removedEntries = 0;

  constructor(options: NearDupIndexOptions = {}) {
    const opts = check.options<NearDupIndexOptions>("options", options);
    this.maxDistance = opts.maxDistance === undefined ? 3 : check.integerInRange("maxDistance", opts.maxDistance, 0, 8);
    if (opts.layout !== undefined && !layoutChoices(this.maxDistance).includes(opts.layout)) {
      throw new InvalidArgumentError(
        "layout",
        opts.layout,
        `a table count for maxDistance ${this.maxDistance}: ${layoutChoices(this.maxDistance).join(", ")}`,
      );
    }
    this.fixedTables = opts.layout;
    this.arena = new Arena();
    this.place = this.lay(new BigUint64Array(0), new Uint32Array(0));
  }

  /** Fingerprints stored (removed ones excluded). */
  get size(): number {
    return this.committed + this.pending - this.removedEntries;
  }

  /** Tables of the current layout. */
  get tables(): number {
    return this.specs.length;
  }

  /** Bytes of WASM memory the index holds now. */
  get byteLength(): number {
    return this.live().u8.length;
  }

  /** Stores a fingerprint under an id (a u32 of the caller's; ids need not be unique). */
  add(id: number, fp: bigint): void {
    this.addMany([id], [fp]);
  }

  /** Stores many fingerprints: ids[i] for fps[i]. */
  addMany(ids: ArrayLike<number>, fps: BigUint64Array | readonly bigint[]): void {
    if (ids === null || typeof ids !== "object" || typeof ids.length !== "number")
      throw new InvalidArgumentError("ids", ids, "an array of u32 ids");
    if (fps === null || typeof fps !== "object" || fps.length !== ids.length)
      throw new InvalidArgumentError("fps", fps, `${ids.length} fingerprints, one per id`);
    const newIds = new Uint32Array(ids.length);
    let revived = false;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id > 0xffffffff)
        throw new InvalidArgumentError(`ids[${i}]`, id, "an integer from 0 to 2^32 - 1");
      newIds[i] = id;
      if (this.removed.has(id)) revived = true;
    }
    const newFps = fps instanceof BigUint64Array ? fps : checkedFingerprints(fps, "fps");
    // A removed id that comes back must not revive its old entries: drop them first.
    if (revived) this.rebuild();
    if (this.pending + newIds.length > this.place.pendingIds.length) {
      // More than the pending list holds: one rebuild with everything.
      const { fps: oldFps, ids: oldIds } = this.snapshot();
      this.removed.clear();
      this.removedEntries = 0;
      const allFps = new BigUint64Array(oldFps.length + newFps.length);
      allFps.set(oldFps);
      allFps.set(newFps, oldFps.length);
      const allIds = new Uint32Array(oldIds.length + newIds.length);
      allIds.set(oldIds);
      allIds.set(newIds, oldIds.length);
      this.load(allFps, allIds);
      return;
    }
    const arena = this.live();
    this.place.pendingFps.copyIn(arena.u8, newFps, this.pending);
    this.place.pendingIds.copyIn(arena.u8, newIds, this.pending);
    this.pending += newIds.length;
  }

  /** Removes every entry stored under `id`; false when there was none. */
  remove(id: number): boolean {
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff)
      throw new InvalidArgumentError("id", id, "an integer from 0 to 2^32 - 1");
    if (this.removed.has(id)) return false;
    const u8 = this.live().u8;
    let found = 0;
    for (const [region, count] of [
      [this.place.ids, this.committed],
      [this.place.pendingIds, this.pending],
    ] as const) {
      for (const stored of region.view(u8, Uint32Array, 0, count)) if (stored === id) found++;
    }
    if (found === 0) return false;
    this.removed.add(id);
    this.removedEntries += found;
    if (this.removedEntries > Math.max(MIN_PENDING, this.committed / 8)) this.rebuild();
    return true;
  }

  /** Every stored fingerprint within maxDistance of `fp`, nearest first. */
  query(fp: bigint): NearMatch[] {
    return this.queryMany([fp])[0];
  }

  /** query() for many fingerprints in few boundary crossings. */
  queryMany(fps: BigUint64Array | readonly bigint[]): NearMatch[][] {
    return this.run(fps, false).map((list) => list.map(({ id, distance }) => ({ id, distance })));
  }

  /** The exhaustive scan (every stored fingerprint compared): same answers as query(), for checking. */
  scanMany(fps: BigUint64Array | readonly bigint[]): NearMatch[][] {
    return this.run(fps, true).map((list) => list.map(({ id, distance }) => ({ id, distance })));
  }

  /** All pairs of stored fingerprints within maxDistance of each other (the batch mode). */
  pairs(): NearPair[] {
    // Rebuilt first so that positions in the tables are the snapshot's indices.
    this.build();
    const { fps, ids } = this.snapshot();
    // Copies of one fingerprint have the same matches: one query per run of copies (table 0 keeps
    // copies together), so the work is the answer's size, not the copies' count times it.
    const starts: number[] = [];
    for (let i = 0; i < fps.length; i++) if (i === 0 || fps[i] !== fps[i - 1]) starts.push(i);
    const results = this.run(
      BigUint64Array.from(starts, (i) => fps[i]),
      false,
    );
    const out: NearPair[] = [];
    // Entry i's own position is i: keep each pair from its lower end.
    starts.forEach((start, r) => {
      const end = r + 1 < starts.length ? starts[r + 1] : fps.length;
      for (let i = start; i < end; i++) {
        for (const match of results[r])
          if (match.position > i) out.push({ a: ids[i], b: match.id, distance: match.distance });
      }
    });
    return out;
  }

  /** Rebuilds the tables now with every pending fingerprint (queries otherwise scan pending ones in full). */
  build(): void {
    if (this.pending > 0 || this.removed.size > 0) this.rebuild();
  }

  /** The index in serialization format v1: (fingerprint, id) entries sorted by id then fingerprint, so equal contents give equal bytes; tables are rebuilt on load. */
  serialize(): Uint8Array {
    const snapshot = this.snapshot();
    const order = Uint32Array.from(snapshot.ids.keys()).sort(
      (x, y) =>
        snapshot.ids[x] - snapshot.ids[y] ||
        (snapshot.fps[x] < snapshot.fps[y] ? -1 : snapshot.fps[x] > snapshot.fps[y] ? 1 : 0),
    );
    const fps = BigUint64Array.from(order, (i) => snapshot.fps[i]);
    const ids = Uint32Array.from(order, (i) => snapshot.ids[i]);
    const params = new Uint8Array(PARAM_BYTES);
    const view = new DataView(params.buffer);
    view.setUint32(0, this.maxDistance, true);
    view.setUint32(4, this.fixedTables ?? 0, true);
    view.setBigUint64(8, BigInt(fps.length), true);
    const tooLarge = (bytes: number) =>
      new FormatError(`index of ${bytes} bytes is too large for one array`, "ERR_TOO_LARGE");
    const payload = concat(
      [
        new Uint8Array(fps.buffer, fps.byteOffset, fps.byteLength),
        new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength),
      ],
      tooLarge,
    );
    return writeContainer(Kind.NearDupIndex, params, payload, tooLarge);
  }

  /** Loads an index written by serialize(). */
  static deserialize(bytes: Uint8Array): NearDupIndex {
    const stored = readStored(bytes, RECIPE);
    const { options, count } = stored.params;
    // A copy: the typed views below need an 8-byte-aligned buffer of their own.
    const payload = payloadOf(stored).slice();
    const index = fromStoredParams(RECIPE.what, () => new NearDupIndex(options));
    index.load(new BigUint64Array(payload.buffer, 0, count), new Uint32Array(payload.buffer, 8 * count, count));
    return index;
  }

  /** Releases the index's memory. */
  dispose(): void {
    this.arena = undefined;
  }

  private live(): Arena {
    if (this.arena === undefined) throw new DisposedError("NearDupIndex");
    return this.arena;
  }

  /** Every live entry's fingerprint and id: committed (table 0 order) then pending. */
  private snapshot(): { fps: BigUint64Array; ids: Uint32Array } {
    const arena = this.live();
    const n = this.committed;
    const total = n + this.pending;
    const fps = new BigUint64Array(total);
    const ids = new Uint32Array(total);
    // Through a small window past the end, so reading out never grows memory by 8 bytes a fingerprint.
    const { window } = arena.place({ window: array(8, CHUNK) }, this.place.end, "the near-duplicate index");
    eachRun(n, CHUNK, (count, from) => {
      arena.k.ndOriginals(this.place.descs.ptr, from, count, window.ptr);
      window.copyOut(arena.u8, fps, from, count);
      return count;
    });
    this.place.pendingFps.copyOut(arena.u8, fps, n, this.pending);
    this.place.ids.copyOut(arena.u8, ids, 0, n);
    this.place.pendingIds.copyOut(arena.u8, ids, n, this.pending);
    if (this.removed.size === 0) return { fps, ids };
    const keep = ids.map((id) => (this.removed.has(id) ? 0 : 1));
    return { fps: fps.filter((_, i) => keep[i] === 1), ids: ids.filter((_, i) => keep[i] === 1) };
  }

  private rebuild(): void {
    const { fps, ids } = this.snapshot();
    this.removed.clear();
    this.removedEntries = 0;
    this.load(fps, ids);
  }

  private load(fps: BigUint64Array, ids: Uint32Array): void {
    this.place = this.lay(fps, ids);
  }

  /** Lays the index out for these entries from the arena's base and builds every table. */
  private lay(fps: BigUint64Array, ids: Uint32Array): Layout {
    const arena = this.live();
    const n = fps.length;
    const k = this.maxDistance;
    this.specs = layout(k, this.fixedTables ?? defaultTables(k, n));
    const tables = this.specs.length;
    const pendingCapacity = Math.max(MIN_PENDING, Math.ceil(n / 16));
    // The descriptors: ND_TABLE_BYTES each, as the module says.
    const tableBytes: number = arena.k.ND_TABLE_BYTES.value;
    const bits = this.specs.map((spec) =>
      Math.min(spec.leadingBits, 24, Math.max(0, Math.floor(Math.log2(Math.max(1, n / 8))))),
    );
    // The input (fingerprints, then ids) goes where tables 1.. will be (free until table 0 is built), or after the rest.
    const inputInside = 8 * n * (tables - 1) >= 12 * n;
    const what = "the near-duplicate index";
    const r = arena.place(
      {
        descs: array(tableBytes, MAX_TABLES),
        state: array(4, 1),
        pendingFps: array(8, pendingCapacity),
        pendingIds: array(4, pendingCapacity),
        // Table t's n entries (u64 each) start at entry n t.
        entries: array(8, n * tables),
        ids: array(4, n),
      },
      arena.base,
      what,
    );
    const rest = arena.place(
      {
        // One directory a table: 2^bits + 1 bucket starts.
        ...Object.fromEntries(bits.map((d, t) => [`dir${t}`, 4 * (2 ** d + 1)])),
        cursor: 4 * 2 ** Math.max(0, ...bits),
        input: inputInside ? 0 : 12 * n,
      } as Record<string, number>,
      r.end,
      what,
    );
    const { descs, entries } = r;
    // The input: n fingerprints, then their n ids.
    const inputFps = new ArrayRegion(inputInside ? entries.at(n) : rest.input, 8, n);
    const inputIds = new ArrayRegion(inputFps.end, 4, n);
    const dirAt = bits.map((_, t) => rest[`dir${t}`]);
    const u8 = arena.u8;
    descs.fill(u8);
    r.state.fill(u8);
    // Each descriptor's fields where the module says the kernels read them.
    const m = arena.k;
    const fields = {
      entries: m.ND_ENTRIES,
      dir: m.ND_DIR,
      bits: m.ND_BITS,
      count: m.ND_PIECE_COUNT,
      pieces: m.ND_PIECES,
    };
    this.specs.forEach((spec, t) => {
      const desc = new KernelRecord(descs.at(t), fields);
      desc.set(u8, "entries", entries.at(n * t));
      desc.set(u8, "dir", dirAt[t]);
      desc.set(u8, "bits", bits[t]);
      desc.set(u8, "count", spec.pieces.length);
      // The pieces: (offset, width) u32 pairs from the pieces field on.
      new ArrayRegion(desc.address("pieces"), 8, spec.pieces.length).copyIn(u8, Uint32Array.from(spec.pieces.flat()));
    });
    inputFps.copyIn(u8, fps);
    inputIds.copyIn(u8, ids);
    arena.k.ndBuildTable(descs.ptr, inputFps.ptr, 0, inputIds.ptr, n, r.ids.ptr, rest.cursor);
    for (let t = 1; t < tables; t++) arena.k.ndBuildTable(descs.at(t), entries.ptr, descs.ptr, 0, n, 0, rest.cursor);
    this.committed = n;
    this.pending = 0;
    return { descs, state: r.state, pendingFps: r.pendingFps, pendingIds: r.pendingIds, ids: r.ids, end: rest.end };
  }

  /** Queries (or scans) a batch; per query, its matches with table positions, nearest first. */
  private run(
    fps: BigUint64Array | readonly bigint[],
    exhaustive: boolean,
  ): { id: number; distance: number; position: number }[][] {
    if (fps === null || typeof fps !== "object" || typeof fps.length !== "number")
      throw new InvalidArgumentError("fps", fps, "an array of 64-bit fingerprints");
    const queries = fps instanceof BigUint64Array ? fps : checkedFingerprints(fps, "fps");
    const arena = this.live();
    const results: { id: number; distance: number; position: number }[][] = Array.from(
      { length: queries.length },
      () => [],
    );
    let cap = 4096;
    eachRun(queries.length, BATCH, (nq, q) => {
      // After the index: the queries, their match records and distances, `cap` of them.
      const k = arena.k;
      const { qs, out, dists } = arena.place(
        { qs: array(8, BATCH), out: array(k.ND_MATCH_BYTES.value, cap), dists: array(1, cap) },
        this.place.end,
        "the near-duplicate index",
      );
      qs.copyIn(arena.u8, queries.subarray(q, q + nq));
      const [descs, state, ids, pendingFps, pendingIds] = [
        this.place.descs.ptr,
        this.place.state.ptr,
        this.place.ids.ptr,
        this.place.pendingFps.ptr,
        this.place.pendingIds.ptr,
      ];
      const done = exhaustive
        ? arena.k.ndScan(
            descs,
            this.committed,
            ids,
            pendingFps,
            pendingIds,
            this.pending,
            qs.ptr,
            nq,
            this.maxDistance,
            out.ptr,
            dists.ptr,
            cap,
            state,
          )
        : arena.k.ndQuery(
            descs,
            this.specs.length,
            this.committed,
            ids,
            pendingFps,
            pendingIds,
            this.pending,
            qs.ptr,
            nq,
            this.maxDistance,
            out.ptr,
            dists.ptr,
            cap,
            state,
          );
      const count = this.place.state.view(arena.u8, Uint32Array)[0];
      const matches = new RecordArray(
        arena.u8,
        out,
        { query: k.ND_MATCH_QUERY, id: k.ND_MATCH_ID, position: k.ND_MATCH_POSITION },
        0,
        count,
      );
      const [queryAt, idAt, positionAt] = [matches.low("query"), matches.low("id"), matches.low("position")];
      const distances = dists.bytes(arena.u8, 0, count);
      for (let e = 0; e < count; e++) {
        const id = matches.word(e, idAt);
        if (this.removed.has(id)) continue;
        results[q + matches.word(e, queryAt)].push({
          id,
          distance: distances[e],
          position: matches.word(e, positionAt),
        });
      }
      if (done === 0) cap *= 4; // one query alone overflowed: grow and retry it
      return done;
    });
    for (const list of results) list.sort((x, y) => x.distance - y.distance || x.id - y.id || x.position - y.position);
    return results;
  }
}

/**
 * The groups that near pairs form (connected components, so a group may hold members further
 * apart than maxDistance through a chain): ids ascending in each group, groups ordered by their
 * smallest id; ids in no pair are left out.
 */
export function nearDupGroups(pairs: readonly NearPair[]): number[][] {
  const parent = new Map<number, number>();
  const find = (id: number): number => {
    let root = id;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root)!;
    parent.set(id, root);
    return root;
  };
  for (const { a, b } of pairs) {
    const ra = find(a);
    const rb = find(b);
    parent.set(Math.max(ra, rb), Math.min(ra, rb));
    parent.set(Math.min(ra, rb), Math.min(ra, rb));
  }
  const groups = new Map<number, number[]>();
  for (const id of [...parent.keys()].sort((x, y) => x - y)) {
    const root = find(id);
    if (!groups.has(root)) groups.set(root, []);
    groups.get(root)!.push(id);
  }
  return [...groups.entries()]
    .sort(([x], [y]) => x - y)
    .map(([, members]) => members)
    .filter((members) => members.length > 1);
}

/** Fingerprints as a BigUint64Array, each checked to be a 64-bit non-negative bigint. */
function checkedFingerprints(fps: readonly bigint[], name: string): BigUint64Array {
  return BigUint64Array.from(fps, (fp, i) => {
    if (typeof fp !== "bigint" || fp < 0n || fp >= 1n << 64n)
      throw new InvalidArgumentError(`${name}[${i}]`, fp, "a 64-bit fingerprint as a non-negative bigint");
    return fp;
  });
}
